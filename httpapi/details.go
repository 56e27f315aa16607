package httpapi

import (
	"cmp"
	"context"
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

// createDetails reads entity_id from the body alone: the ledger takes it
// there.
func (h *handler) createDetails(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "account details created"), nil,
		func(ctx context.Context, c corebank.Caller, req createDetailsReq) (*ledger.AccountDetails, error) {
			if req.AccountID == "" {
				return nil, corebank.InvalidField("account_id", "is required")
			}
			return h.led.CreateAccountDetails(ctx, c, ledger.NewAccountDetails{AccountID: req.AccountID,
				EntityID: req.EntityID, Chain: req.Chain, TerminateAfter: req.TerminateAfter, ProviderID: req.ProviderID, Meta: req.Meta})
		})
}

// listDetails lists the details of account_id or of entity_id. The
// filters are those the caller asked for, the entity defaulting to the
// caller's when no account is named; the ledger decides whether the
// caller may see them.
func (h *handler) listDetails(x *exchange, r *http.Request) error {
	return listed(x, r, listing[ledger.AccountDetails]{name: "account-details", message: "account details retrieved",
		filters: func(q *query, filters map[string]string) { q.pick(filters, "account_id") },
		scope: func(requested string, c corebank.Caller, filters map[string]string) {
			if filters["account_id"] == "" {
				filters["entity_id"] = cmp.Or(requested, c.EntityID)
			} else if requested != "" {
				filters["entity_id"] = requested
			}
		},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[ledger.AccountDetails], string, error) {
			p, err := h.led.ListAccountDetails(ctx, c, ledger.AccountDetailsFilter{AccountID: l.filters["account_id"], EntityID: l.entityID}, l.opts)
			return p, "", err
		}})
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
	return fetched(x, r, enveloped(http.StatusOK, "account details retrieved"),
		func(ctx context.Context, c corebank.Caller, entity, id string) (*detailsView, error) {
			d, err := h.led.GetAccountDetails(ctx, c, entity, id)
			if err != nil {
				return nil, err
			}
			v := &detailsView{AccountDetail: d}
			if e, err := h.ent.GetEntity(ctx, c, "", d.EntityID); err == nil {
				v.Entity = &entitySummary{ID: e.ID, Name: e.Name, Type: e.Type, Status: e.Status, IsRoot: e.IsRoot, ParentID: e.ParentEntity}
			} else if !notFound(err) {
				return nil, err
			}
			if a, err := h.led.GetAccount(ctx, c, "", d.AccountID); err == nil {
				v.Account = a
			} else if !notFound(err) {
				return nil, err
			}
			if v.Statistics, err = h.led.GetAccountDetailsStats(ctx, c, "", d.ID); err != nil {
				return nil, err
			}
			return v, nil
		})
}

// activateDetails takes an empty body and no entity_id.
func (h *handler) activateDetails(x *exchange, r *http.Request) error {
	return moved(x, r, bare(http.StatusOK), &struct{}{}, nil,
		func(ctx context.Context, c corebank.Caller, _, id string) (*ledger.AccountDetails, error) {
			return h.led.ActivateAccountDetails(ctx, c, "", id)
		})
}
