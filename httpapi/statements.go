package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/ledger"
)

// getStatement answers an account's monthly statement, its lines paged
// by this API's cursors (bound to the account, year, month and
// include_pending).
func (h *handler) getStatement(x *exchange, r *http.Request) error {
	var (
		q           *query
		year, month int64
		pending     bool
		limit       int
	)
	params := func(qq *query) {
		q = qq
		year, _ = q.integer("year", true, 1970, 9999)
		month, _ = q.integer("month", true, 1, 12)
		pending = q.boolean("include_pending", false)
		limit = q.limit()
	}
	return fetchedWith(x, r, enveloped(http.StatusOK, "statement generated"), params,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*ledger.Statement, error) {
			filters := map[string]string{"account_id": id, "year": strconv.FormatInt(year, 10),
				"month": strconv.FormatInt(month, 10), "include_pending": strconv.FormatBool(pending)}
			fh, opts, err := h.listPage(q, "statement", filters, limit)
			if err != nil {
				return nil, err
			}
			st, err := h.led.Statement(ctx, c, id, ledger.StatementQuery{Year: int(year), Month: int(month),
				IncludePending: pending, EntityID: entity, ListOptions: opts})
			if err != nil {
				return nil, err
			}
			// The ledger's positions become this API's signed cursors.
			if cur := st.Pagination.NextCursor; cur != nil {
				s := h.cursors.encode(*cur, "n", fh)
				st.Pagination.NextCursor = &s
			}
			if cur := st.Pagination.PreviousCursor; cur != nil {
				s := h.cursors.encode(*cur, "p", fh)
				st.Pagination.PreviousCursor = &s
			}
			if st.HolderAddress == nil {
				st.HolderAddress = h.holderAddress(ctx, c, st.EntityID)
			}
			return st, nil
		})
}

// holderAddress is the owner's address (a person's, else a business's
// operating address), or nil when it has none.
func (h *handler) holderAddress(ctx context.Context, caller corebank.Caller, entityID string) any {
	c, err := h.ent.GetComposite(ctx, caller, "", entityID)
	if err != nil || c == nil {
		return nil
	}
	var addr *entities.Address
	switch {
	case c.Address != nil:
		addr = c.Address
	case c.OperatingAddress != nil:
		addr = c.OperatingAddress
	default:
		return nil
	}
	return addr
}
