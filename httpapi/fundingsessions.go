package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
)

// createFundingSession acts for the owner of account_id, which must lie in
// the tree of entity_id (the caller's entity when omitted). A duplicate
// unique_reference of that owner answers 409 duplicate_reference with the
// original session under data.
func (h *handler) createFundingSession(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "funding session created"), func(q *funding.NewSession) *string { return &q.EntityID }, h.sessions.CreateSession)
}

func (h *handler) getFundingSession(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "funding session retrieved"), h.sessions.GetSession)
}

// patchFundingSession validates a completed e-Transfer: no body but an
// optional entity_id. Any other rail, or a session not awaiting_user, is
// 400 error_operation_invalid_for_state.
func (h *handler) patchFundingSession(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "funding session validated"), &req, &req.EntityID, h.sessions.ValidateETransfer)
}

// sessionSort is filters_applied.sort of the session list: creation
// order, oldest first (cursor pagination walks forward in time).
type sessionSort struct {
	Field string `json:"field"`
	Order string `json:"order"`
}

type sessionPagination struct {
	pagination
	Order string `json:"order"`
}

type sessionListMeta struct {
	Pagination     sessionPagination `json:"pagination"`
	FiltersApplied map[string]any    `json:"filters_applied"`
}

type sessionList struct {
	Status  string            `json:"status"`
	Message string            `json:"message"`
	Data    []funding.Session `json:"data"`
	Meta    sessionListMeta   `json:"meta"`
}

// listFundingSessions lists one entity's sessions of every rail, filtered
// by account_id, status, currency, created_after and created_before (ms,
// exclusive); filters_applied names the entity and the sort.
func (h *handler) listFundingSessions(x *exchange, r *http.Request) error {
	var f funding.SessionFilter
	return listed(x, r, listing[funding.Session]{name: "funding-sessions", message: "funding sessions retrieved",
		filters: func(q *query, filters map[string]string) {
			q.pick(filters, "account_id", "status", "currency")
			f.AccountID, f.Status, f.Currency = filters["account_id"], filters["status"], filters["currency"]
			f.CreatedAfter, f.CreatedBefore = q.createdRange(filters)
		},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[funding.Session], string, error) {
			f.EntityID = l.entityID
			p, err := h.sessions.ListSessions(ctx, c, f, l.opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		},
		form: func(page *corebank.Page[funding.Session], l *listResponse[funding.Session]) any {
			applied := map[string]any{"sort": sessionSort{Field: "created", Order: "asc"}}
			for k, v := range l.Meta.FiltersApplied {
				applied[k] = v
			}
			return &sessionList{Status: l.Status, Message: l.Message, Data: page.Items,
				Meta: sessionListMeta{Pagination: sessionPagination{pagination: l.Meta.Pagination, Order: "asc"},
					FiltersApplied: applied}}
		}})
}

type simulateSessionReq struct {
	Outcome     string `json:"outcome"`
	FailureCode string `json:"failure_code"`
	EntityID    string `json:"entity_id"`
}

// simulateFundingSession answers the session bare, as every sandbox route
// does; it runs what a provider's callback runs.
func (h *handler) simulateFundingSession(x *exchange, r *http.Request) error {
	var req simulateSessionReq
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*funding.Session, error) {
		return h.sessions.SimulateSession(ctx, c, entity, id, req.Outcome, req.FailureCode)
	})
}
