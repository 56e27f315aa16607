package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
)

var errNoSessions = corebank.E(corebank.KindUnavailable, codeUnavailable, "funding sessions are not configured on this server")

// sessionRoute answers 503 unavailable when the server has no
// funding-session service (Services.FundingSessions nil).
func sessionRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.sessions != nil }, errNoSessions, fn)
}

// createFundingSession acts for the owner of account_id, which must lie in
// the tree of entity_id (the caller's entity when omitted). A duplicate
// unique_reference of that owner answers 409 duplicate_reference with the
// original session under data.
func (h *handler) createFundingSession(x *exchange, r *http.Request) error {
	return created(x, r, "funding session created", func(q *funding.NewSession) *string { return &q.EntityID }, h.sessions.CreateSession)
}

func (h *handler) getFundingSession(x *exchange, r *http.Request) error {
	return fetched(x, r, "funding session retrieved", h.sessions.GetSession)
}

// patchFundingSession validates a completed e-Transfer: no body but an
// optional entity_id. Any other rail, or a session not awaiting_user, is
// 400 error_operation_invalid_for_state.
func (h *handler) patchFundingSession(x *exchange, r *http.Request) error {
	requested, err := bodyEntityParam(x, r)
	if err != nil {
		return err
	}
	s, err := h.sessions.ValidateETransfer(r.Context(), x.caller(), requested, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "funding session validated", s)
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

// maxSessionTime is the largest created_after/created_before accepted (the
// ULID time range).
const maxSessionTime = 1<<48 - 1

// listFundingSessions lists one entity's sessions of every rail, filtered
// by account_id, status, currency, created_after and created_before (ms,
// exclusive); filters_applied names the entity and the sort.
func (h *handler) listFundingSessions(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	var f funding.SessionFilter
	for _, name := range []string{"account_id", "status", "currency"} {
		if v := q.str(name); v != "" {
			filters[name] = v
		}
	}
	f.AccountID, f.Status, f.Currency = filters["account_id"], filters["status"], filters["currency"]
	f.CreatedAfter, f.CreatedBefore = q.createdRange(filters, maxSessionTime)
	l, err := h.readScopedList(x, q, "funding-sessions", filters)
	if err != nil {
		return err
	}
	f.EntityID = l.requested
	page, err := h.sessions.ListSessions(r.Context(), x.caller(), f, l.opts)
	if err != nil {
		return err
	}
	if l.cursorErr != nil {
		return l.cursorErr
	}
	filters["entity_id"] = page.EntityID
	base := list(h, "funding sessions retrieved", page.Page, l.opts.Limit, l.fh, filters)
	applied := map[string]any{"sort": sessionSort{Field: "created", Order: "asc"}}
	for k, v := range filters {
		applied[k] = v
	}
	writeJSON(x, http.StatusOK, &sessionList{Status: base.Status, Message: base.Message, Data: page.Items,
		Meta: sessionListMeta{Pagination: sessionPagination{pagination: base.Meta.Pagination, Order: "asc"},
			FiltersApplied: applied}})
	return nil
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
	return simulated(x, r, &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*funding.Session, error) {
		return h.sessions.Simulate(ctx, c, entity, id, req.Outcome, req.FailureCode)
	})
}
