package httpapi

import (
	"cmp"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/ledger"
)

type createDetailsReq struct {
	AccountID      string            `json:"account_id"`
	EntityID       string            `json:"entity_id"`
	Chain          string            `json:"chain"`
	TerminateAfter *int              `json:"terminate_after"`
	ProviderID     string            `json:"provider_id"`
	Meta           map[string]string `json:"meta"`
}

func (h *handler) createDetails(x *exchange, r *http.Request) error {
	var req createDetailsReq
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	if req.AccountID == "" {
		return corebank.InvalidField("account_id", "is required")
	}
	d, err := h.led.CreateAccountDetails(r.Context(), x.caller(), ledger.NewAccountDetails{AccountID: req.AccountID,
		EntityID: req.EntityID, Chain: req.Chain, TerminateAfter: req.TerminateAfter, ProviderID: req.ProviderID, Meta: req.Meta})
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "account details created", d)
}

func (h *handler) listDetails(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	accountID := q.str("account_id")
	requested := q.str("entity_id")
	limit := q.limit()
	if err := q.err(); err != nil {
		return err
	}
	// The filters the caller asked for, the entity defaulting to the
	// caller's when no account is named; the ledger decides whether the
	// caller may see them.
	filters := map[string]string{}
	if accountID != "" {
		filters["account_id"] = accountID
		if requested != "" {
			filters["entity_id"] = requested
		}
	} else {
		filters["entity_id"] = cmp.Or(requested, x.caller().EntityID)
	}
	fh, opts, err := h.listPage(q, "account-details", filters, limit)
	if err != nil {
		return err
	}
	page, err := h.led.ListAccountDetails(r.Context(), x.caller(), ledger.AccountDetailsFilter{AccountID: accountID, EntityID: requested}, opts)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, list(h, "account details retrieved", page, limit, fh, filters))
	return nil
}

// entitySummary is the owning entity as GET /account-details/{id} shows it.
type entitySummary struct {
	ID       string              `json:"id"`
	Name     string              `json:"name"`
	Type     string              `json:"type"`
	Status   string              `json:"status"`
	IsRoot   bool                `json:"is_root"`
	ParentID entities.OptionalID `json:"parent_entity"`
}

type detailsView struct {
	AccountDetail *ledger.AccountDetails      `json:"account_detail"`
	Entity        *entitySummary              `json:"entity"`
	Account       *ledger.Account             `json:"account"`
	Statistics    *ledger.AccountDetailsStats `json:"statistics"`
}

func (h *handler) getDetails(x *exchange, r *http.Request) error {
	entity, err := queryEntityID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	d, err := h.led.GetAccountDetails(ctx, x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	v := &detailsView{AccountDetail: d}
	if e, err := h.ent.GetEntity(ctx, x.caller(), "", d.EntityID); err == nil {
		v.Entity = &entitySummary{ID: e.ID, Name: e.Name, Type: e.Type, Status: e.Status, IsRoot: e.IsRoot, ParentID: e.ParentEntity}
	} else if !notFound(err) {
		return err
	}
	if a, err := h.led.GetAccount(ctx, x.caller(), "", d.AccountID); err == nil {
		v.Account = a
	} else if !notFound(err) {
		return err
	}
	if v.Statistics, err = h.led.GetAccountDetailsStats(ctx, x.caller(), d.ID); err != nil {
		return err
	}
	return ok(x, http.StatusOK, "account details retrieved", v)
}

func (h *handler) activateDetails(x *exchange, r *http.Request) error {
	if err := decodeJSON(x.body, &struct{}{}); err != nil {
		return err
	}
	d, err := h.led.ActivateAccountDetails(r.Context(), x.caller(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, d)
	return nil
}
