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

// createAccount reads entity_id from the body alone: the ledger takes it
// there.
func (h *handler) createAccount(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "account created"), nil,
		func(ctx context.Context, c corebank.Caller, req createAccountReq) (*accountWithEffect, error) {
			a, err := h.led.CreateAccount(ctx, c, ledger.NewAccount{EntityID: req.EntityID, Type: req.Type,
				Currency: req.Currency, DisplayName: req.DisplayName, Meta: req.Meta})
			if err != nil {
				return nil, err
			}
			eff, err := h.entityEffect(ctx, c, a)
			if err != nil {
				return nil, err
			}
			return &accountWithEffect{Account: a, EntityEffect: eff}, nil
		})
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
	return fetched(x, r, enveloped(http.StatusOK, "account retrieved"), h.led.GetAccount)
}

var accountTypes = map[string]bool{ledger.TypeChecking: true, ledger.TypeDebit: true,
	ledger.TypeOperational: true, ledger.TypeSafeguard: true}

// listAccounts lists the requested entity's accounts, by default the
// caller's; the ledger decides whether the caller may see them.
func (h *handler) listAccounts(x *exchange, r *http.Request) error {
	return listed(x, r, listing[ledger.Account]{name: "accounts", message: "accounts retrieved",
		filters: func(q *query, filters map[string]string) {
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
		},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[ledger.Account], string, error) {
			p, err := h.led.ListAccounts(ctx, c, ledger.AccountFilter{EntityID: l.entityID,
				Currency: l.filters["currency"], Type: l.filters["type"]}, l.opts)
			return p, "", err
		}})
}

type patchAccountReq struct {
	DisplayName *string `json:"display_name"`
	EntityID    string  `json:"entity_id"`
}

// patchAccount reads entity_id from the body alone, as it always has.
func (h *handler) patchAccount(x *exchange, r *http.Request) error {
	var req patchAccountReq
	return moved(x, r, enveloped(http.StatusOK, "account updated"), &req, nil,
		func(ctx context.Context, c corebank.Caller, _, id string) (*accountWithChanges, error) {
			if req.DisplayName == nil {
				return nil, corebank.InvalidField("display_name", "is required")
			}
			a, change, err := h.led.UpdateAccount(ctx, c, req.EntityID, id, ledger.AccountPatch{DisplayName: req.DisplayName})
			if err != nil {
				return nil, err
			}
			changes := []ledger.AccountChange{}
			if change != nil && change.From != change.To {
				changes = append(changes, *change)
			}
			return &accountWithChanges{Account: a, Changes: changes}, nil
		})
}

func (h *handler) deleteAccount(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "account deleted"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*deletedAccount, error) {
			a, err := h.led.DeleteAccount(ctx, c, entity, id)
			if err != nil {
				return nil, err
			}
			eff, err := h.entityEffect(ctx, c, a)
			if err != nil {
				return nil, err
			}
			return &deletedAccount{Account: a, EntityEffect: eff, Reversibility: reversibility{Reversible: false,
				Reason: "a deleted account cannot be restored; open a new account instead (its service_ban is never reused)"}}, nil
		})
}
