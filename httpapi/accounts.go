package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
)

type createAccountReq struct {
	EntityID    string            `json:"entity_id"`
	Type        string            `json:"type"`
	Currency    string            `json:"currency"`
	DisplayName string            `json:"display_name"`
	Meta        map[string]string `json:"meta"`
}

// entityEffect summarises what an account change did to its owner.
type entityEffect struct {
	EntityID         string  `json:"entity_id"`
	AccountsCount    int64   `json:"accounts_count"`
	DefaultAccountID *string `json:"default_account_id"`
	// IsDefaultAccount says whether this account is (or was) the default.
	IsDefaultAccount bool `json:"is_default_account"`
}

type accountWithEffect struct {
	*ledger.Account
	EntityEffect entityEffect `json:"entity_effect"`
}

type accountWithChanges struct {
	*ledger.Account
	Changes []ledger.AccountChange `json:"changes"`
}

type reversibility struct {
	Reversible bool   `json:"reversible"`
	Reason     string `json:"reason"`
	// ServiceBANReusable is always false: a deleted account's number is
	// never given to another account.
	ServiceBANReusable bool `json:"service_ban_reusable"`
}

type deletedAccount struct {
	*ledger.Account
	EntityEffect  entityEffect  `json:"entity_effect"`
	Reversibility reversibility `json:"reversibility"`
}

func (h *handler) createAccount(x *exchange, r *http.Request) error {
	var req createAccountReq
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	ctx := r.Context()
	a, err := h.led.CreateAccount(ctx, x.caller(), ledger.NewAccount{EntityID: req.EntityID, Type: req.Type,
		Currency: req.Currency, DisplayName: req.DisplayName, Meta: req.Meta})
	if err != nil {
		return err
	}
	eff, err := h.entityEffect(ctx, x.caller(), a)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "account created", &accountWithEffect{Account: a, EntityEffect: eff})
}

// entityEffect counts the owner's active accounts and finds its default.
func (h *handler) entityEffect(ctx context.Context, caller corebank.Caller, a *ledger.Account) (entityEffect, error) {
	eff := entityEffect{EntityID: a.EntityID, IsDefaultAccount: a.IsDefault}
	n, err := h.led.CountAccounts(ctx, caller, ledger.AccountFilter{EntityID: a.EntityID})
	if err != nil {
		return eff, err
	}
	eff.AccountsCount = n
	if a.IsDefault && a.Deleted == 0 {
		id := a.ID
		eff.DefaultAccountID = &id
		return eff, nil
	}
	// The default is the entity's first account; lists are in creation
	// order, so it is the first item when it is still active.
	page, err := h.led.ListAccounts(ctx, caller, ledger.AccountFilter{EntityID: a.EntityID}, corebank.ListOptions{Limit: 1})
	if err != nil {
		return eff, err
	}
	if len(page.Items) == 1 && page.Items[0].IsDefault {
		id := page.Items[0].ID
		eff.DefaultAccountID = &id
	}
	return eff, nil
}

func (h *handler) getAccount(x *exchange, r *http.Request) error {
	entity, err := queryEntityID(r)
	if err != nil {
		return err
	}
	a, err := h.led.GetAccount(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "account retrieved", a)
}

var accountTypes = map[string]bool{ledger.TypeChecking: true, ledger.TypeDebit: true,
	ledger.TypeOperational: true, ledger.TypeSafeguard: true}

func (h *handler) listAccounts(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	if c := q.str("currency"); c != "" {
		if _, known := ledger.CurrencyInfo(c); !known {
			q.add("currency", "is not a supported currency")
		}
		filters["currency"] = c
	}
	if t := q.str("type"); t != "" {
		if !accountTypes[t] {
			q.add("type", "must be checking, debit, operational or safeguard")
		}
		filters["type"] = t
	}
	// The list is of the requested entity, by default the caller's; the
	// ledger decides whether the caller may see it.
	l, err := h.readScopedList(x, q, "accounts", filters)
	if err != nil {
		return err
	}
	page, err := h.led.ListAccounts(r.Context(), x.caller(), ledger.AccountFilter{EntityID: l.requested, Currency: filters["currency"], Type: filters["type"]}, l.opts)
	if err != nil {
		return err
	}
	if l.cursorErr != nil {
		return l.cursorErr
	}
	writeJSON(x, http.StatusOK, list(h, "accounts retrieved", page, l.opts.Limit, l.fh, filters))
	return nil
}

type patchAccountReq struct {
	DisplayName *string `json:"display_name"`
	EntityID    string  `json:"entity_id"`
}

func (h *handler) patchAccount(x *exchange, r *http.Request) error {
	var req patchAccountReq
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	if req.DisplayName == nil {
		return corebank.InvalidField("display_name", "is required")
	}
	a, change, err := h.led.RenameAccount(r.Context(), x.caller(), req.EntityID, r.PathValue("id"), *req.DisplayName)
	if err != nil {
		return err
	}
	changes := []ledger.AccountChange{}
	if change != nil && change.From != change.To {
		changes = append(changes, *change)
	}
	return ok(x, http.StatusOK, "account updated", &accountWithChanges{Account: a, Changes: changes})
}

func (h *handler) deleteAccount(x *exchange, r *http.Request) error {
	entity, err := bodyEntityParam(x, r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	a, err := h.led.DeleteAccount(ctx, x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	eff, err := h.entityEffect(ctx, x.caller(), a)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "account deleted", &deletedAccount{Account: a, EntityEffect: eff,
		Reversibility: reversibility{Reversible: false,
			Reason: "a deleted account cannot be restored; open a new account instead (its service_ban is never reused)"}})
}
