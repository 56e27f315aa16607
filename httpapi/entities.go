package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
)

// createIndividual serves POST /individual-entities. The new entity is the
// caller's child unless parent_entity names one in the caller's tree (the
// domain checks, answering 404 for any other).
func (h *handler) createIndividual(x *exchange, r *http.Request) error {
	var req entities.NewIndividual
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	c, err := h.ent.CreateIndividual(r.Context(), x.p.entityID, req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "individual entity created", c)
}

// createBusiness serves POST /business-entities (see createIndividual).
func (h *handler) createBusiness(x *exchange, r *http.Request) error {
	var req entities.NewBusiness
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	c, err := h.ent.CreateBusiness(r.Context(), x.p.entityID, req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "business entity created", c)
}

// decodeWithEntityID strictly decodes body into v, a domain body that does
// not declare entity_id, and returns the optional top-level entity_id every
// entity-scoped route takes. (Embedding v beside an EntityID field would
// make the decoder name wrong-type fields after the embedded Go type.)
func decodeWithEntityID(body []byte, v any) (string, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return "", decodeJSON(body, v) // empty, malformed or not an object
	}
	raw, found := top["entity_id"]
	if !found {
		return "", decodeJSON(body, v)
	}
	var entity string
	if err := json.Unmarshal(raw, &entity); err != nil {
		return "", corebank.InvalidField("entity_id", "must be a string")
	}
	delete(top, "entity_id")
	rest, err := json.Marshal(top)
	if err != nil {
		return "", decodeJSON(body, v)
	}
	return entity, decodeJSON(rest, v)
}

// patchScope returns the entity whose tree the patched entity must lie in:
// the caller's, or the entity_id given in the body or the query (both only
// when they agree).
func (h *handler) patchScope(ctx context.Context, x *exchange, r *http.Request, bodyEntity string) (string, error) {
	entity, err := entityParam(r, bodyEntity)
	if err != nil {
		return "", err
	}
	return h.scope(ctx, x, entity)
}

// patchIndividual serves PATCH /individual-entities/{id}.
func (h *handler) patchIndividual(x *exchange, r *http.Request) error {
	var req entities.IndividualPatch
	bodyEntity, err := decodeWithEntityID(x.body, &req)
	if err != nil {
		return err
	}
	ctx := r.Context()
	scopeTo, err := h.patchScope(ctx, x, r, bodyEntity)
	if err != nil {
		return err
	}
	res, err := h.ent.UpdateIndividual(ctx, scopeTo, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "individual entity updated", res)
}

// patchBusiness serves PATCH /business-entities/{id}.
func (h *handler) patchBusiness(x *exchange, r *http.Request) error {
	var req entities.BusinessPatch
	bodyEntity, err := decodeWithEntityID(x.body, &req)
	if err != nil {
		return err
	}
	ctx := r.Context()
	scopeTo, err := h.patchScope(ctx, x, r, bodyEntity)
	if err != nil {
		return err
	}
	res, err := h.ent.UpdateBusiness(ctx, scopeTo, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "business entity updated", res)
}

// getEntity serves GET /entities/{id}: the composite, as create returns it.
func (h *handler) getEntity(x *exchange, r *http.Request) error {
	entity, err := queryEntityID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	id := r.PathValue("id")
	if err := h.within(ctx, x, id, entity, entities.ErrEntityNotFound); err != nil {
		return err
	}
	c, err := h.ent.GetComposite(ctx, id)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "entity retrieved", c)
}

// listEntities serves GET /entities: the entities in the tree of entity_id
// (default the caller's entity, which is included), oldest first, filtered
// by type, status and parent_entity.
func (h *handler) listEntities(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	for _, name := range [...]string{"type", "status", "parent_entity"} {
		if v := q.str(name); v != "" {
			filters[name] = v
		}
	}
	ctx := r.Context()
	entity, fh, opts, err := h.entityList(ctx, x, q, "entities", filters)
	if err != nil {
		return err
	}
	page, err := h.ent.ListEntities(ctx, entity, entities.Filter{Type: filters["type"],
		Status: filters["status"], ParentEntity: filters["parent_entity"]}, opts)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, list(h, "entities retrieved", page, opts.Limit, fh, filters))
	return nil
}
