package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
)

// createIndividual serves POST /individual-entities. The new entity is the
// caller's child unless parent_entity names one in the caller's tree (the
// domain checks, answering 404 for any other); it reads no entity_id.
func (h *handler) createIndividual(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "individual entity created"), nil, h.ent.CreateIndividual)
}

// createBusiness serves POST /business-entities (see createIndividual).
func (h *handler) createBusiness(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "business entity created"), nil, h.ent.CreateBusiness)
}

// patchIndividual serves PATCH /individual-entities/{id}. entity_id, in
// the body or the query (both only when they agree), narrows the scope;
// the domain decides it.
func (h *handler) patchIndividual(x *exchange, r *http.Request) error {
	var req withEntity[entities.IndividualPatch]
	return moved(x, r, enveloped(http.StatusOK, "individual entity updated"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*entities.UpdateResult, error) {
			return h.ent.UpdateIndividual(ctx, c, entity, id, req.Body)
		})
}

// patchBusiness serves PATCH /business-entities/{id} (see patchIndividual).
func (h *handler) patchBusiness(x *exchange, r *http.Request) error {
	var req withEntity[entities.BusinessPatch]
	return moved(x, r, enveloped(http.StatusOK, "business entity updated"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*entities.UpdateResult, error) {
			return h.ent.UpdateBusiness(ctx, c, entity, id, req.Body)
		})
}

// getEntity serves GET /entities/{id}: the composite, as create returns it.
func (h *handler) getEntity(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "entity retrieved"), h.ent.GetComposite)
}

// listEntities serves GET /entities: the entities in the tree of entity_id
// (default the caller's entity, which is included), oldest first, filtered
// by type, status and parent_entity. The domain decides scope; the cursor
// is bound to the entity_id asked for.
func (h *handler) listEntities(x *exchange, r *http.Request) error {
	return listed(x, r, listing[entities.Entity]{name: "entities", message: "entities retrieved",
		filters: func(q *query, filters map[string]string) { q.pick(filters, "type", "status", "parent_entity") },
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[entities.Entity], string, error) {
			p, err := h.ent.ListEntities(ctx, c, entities.EntityFilter{EntityID: l.entityID, Type: l.filters["type"],
				Status: l.filters["status"], ParentEntity: l.filters["parent_entity"]}, l.opts)
			return p, "", err
		}})
}
