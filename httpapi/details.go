package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// deleteAccountAndDetails deletes an account and removes its account
// details in one transaction.
func (h *handler) deleteAccountAndDetails(ctx context.Context, id string) (*ledger.Account, error) {
	var out *ledger.Account
	err := h.db.Update(ctx, func(tx storage.Tx) error {
		now := h.led.Clock().Now()
		a, err := h.led.DeleteAccountTx(tx, now, id)
		if err != nil {
			return err
		}
		if _, err := h.led.DeleteAccountDetailsForAccountTx(tx, now, id); err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}

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
	ctx := r.Context()
	a, err := h.account(ctx, x, req.AccountID, req.EntityID)
	if err != nil {
		return err
	}
	d, err := h.led.CreateAccountDetails(ctx, ledger.NewAccountDetails{AccountID: a.ID, Chain: req.Chain,
		TerminateAfter: req.TerminateAfter, ProviderID: req.ProviderID, Meta: req.Meta})
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "account details created", d)
}

// details loads account details the caller may see (see account).
func (h *handler) details(ctx context.Context, x *exchange, id, entityID string) (*ledger.AccountDetails, error) {
	scopeTo, err := h.scopeOrCaller(ctx, x, entityID)
	if err != nil {
		return nil, err
	}
	d, err := h.led.GetAccountDetails(ctx, id)
	if err != nil {
		return nil, err
	}
	in, err := h.inScope(ctx, scopeTo, d.EntityID)
	if err != nil {
		return nil, err
	}
	if !in {
		return nil, ledger.ErrAccountDetailsNotFound.With("account details " + id + " not found")
	}
	return d, nil
}

func (h *handler) listDetails(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	accountID := q.str("account_id")
	requested := q.str("entity_id")
	limit := q.limit()
	if err := q.err(); err != nil {
		return err
	}
	ctx := r.Context()
	filters := map[string]string{}
	f := ledger.AccountDetailsFilter{}
	if accountID != "" {
		a, err := h.account(ctx, x, accountID, requested)
		if err != nil {
			return err
		}
		f.AccountID = a.ID
		filters["account_id"] = a.ID
		if requested != "" {
			f.EntityID = a.EntityID
			filters["entity_id"] = a.EntityID
		}
	} else {
		entity, err := h.scope(ctx, x, requested)
		if err != nil {
			return err
		}
		f.EntityID = entity
		filters["entity_id"] = entity
	}
	fh, opts, err := h.listPage(q, "account-details", filters, limit)
	if err != nil {
		return err
	}
	page, err := h.led.ListAccountDetails(ctx, f, opts)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, list(h, "account details retrieved", page, limit, fh, filters))
	return nil
}

// entitySummary is the owning entity as GET /account-details/{id} shows it.
type entitySummary struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	IsRoot   bool   `json:"is_root"`
	ParentID string `json:"parent_entity"`
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
	d, err := h.details(ctx, x, r.PathValue("id"), entity)
	if err != nil {
		return err
	}
	v := &detailsView{AccountDetail: d}
	if e, err := h.ent.GetEntity(ctx, x.caller(), "", d.EntityID); err == nil {
		v.Entity = &entitySummary{ID: e.ID, Name: e.Name, Type: e.Type, Status: e.Status, IsRoot: e.IsRoot, ParentID: e.ParentEntity}
	} else if !notFound(err) {
		return err
	}
	if a, err := h.led.GetAccount(ctx, d.AccountID); err == nil {
		v.Account = a
	} else if !notFound(err) {
		return err
	}
	if v.Statistics, err = h.led.GetAccountDetailsStats(ctx, d.ID); err != nil {
		return err
	}
	return ok(x, http.StatusOK, "account details retrieved", v)
}

func (h *handler) activateDetails(x *exchange, r *http.Request) error {
	if err := decodeJSON(x.body, &struct{}{}); err != nil {
		return err
	}
	ctx := r.Context()
	d, err := h.details(ctx, x, r.PathValue("id"), "")
	if err != nil {
		return err
	}
	d, err = h.led.ActivateAccountDetails(ctx, d.ID)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, d)
	return nil
}
