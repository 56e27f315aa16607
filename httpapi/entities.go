package httpapi

import (
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
	c, err := h.ent.CreateIndividual(r.Context(), x.caller(), req)
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
	c, err := h.ent.CreateBusiness(r.Context(), x.caller(), req)
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
	// encoding/json below would read invalid UTF-8 as U+FFFD: check the
	// text as sent.
	if err := checkText(body); err != nil {
		return "", err
	}
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

// patchIndividual serves PATCH /individual-entities/{id}. entity_id, in
// the body or the query (both only when they agree), narrows the scope;
// the domain decides it.
func (h *handler) patchIndividual(x *exchange, r *http.Request) error {
	var req entities.IndividualPatch
	bodyEntity, err := decodeWithEntityID(x.body, &req)
	if err != nil {
		return err
	}
	within, err := entityParam(r, bodyEntity)
	if err != nil {
		return err
	}
	res, err := h.ent.UpdateIndividual(r.Context(), x.caller(), within, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "individual entity updated", res)
}

// patchBusiness serves PATCH /business-entities/{id} (see patchIndividual).
func (h *handler) patchBusiness(x *exchange, r *http.Request) error {
	var req entities.BusinessPatch
	bodyEntity, err := decodeWithEntityID(x.body, &req)
	if err != nil {
		return err
	}
	within, err := entityParam(r, bodyEntity)
	if err != nil {
		return err
	}
	res, err := h.ent.UpdateBusiness(r.Context(), x.caller(), within, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "business entity updated", res)
}

// getEntity serves GET /entities/{id}: the composite, as create returns it.
func (h *handler) getEntity(x *exchange, r *http.Request) error {
	within, err := queryEntityID(r)
	if err != nil {
		return err
	}
	c, err := h.ent.GetComposite(r.Context(), x.caller(), within, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "entity retrieved", c)
}

// listEntities serves GET /entities: the entities in the tree of entity_id
// (default the caller's entity, which is included), oldest first, filtered
// by type, status and parent_entity. The domain decides scope; the cursor
// is bound to the entity_id asked for.
func (h *handler) listEntities(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	for _, name := range [...]string{"type", "status", "parent_entity"} {
		if v := q.str(name); v != "" {
			filters[name] = v
		}
	}
	l, err := h.readScopedList(x, q, "entities", filters)
	if err != nil {
		return err
	}
	page, err := h.ent.ListEntities(r.Context(), x.caller(), l.requested, entities.Filter{Type: filters["type"],
		Status: filters["status"], ParentEntity: filters["parent_entity"]}, l.opts)
	if err != nil {
		return err
	}
	if l.cursorErr != nil {
		return l.cursorErr
	}
	writeJSON(x, http.StatusOK, list(h, "entities retrieved", page, l.opts.Limit, l.fh, filters))
	return nil
}
