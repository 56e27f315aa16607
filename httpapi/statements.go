package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/ledger"
)

func (h *handler) getStatement(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	year, _ := q.integer("year", true, 1970, 9999)
	month, _ := q.integer("month", true, 1, 12)
	pending := q.boolean("include_pending", false)
	entity := q.str("entity_id")
	limit := q.limit()
	if err := q.err(); err != nil {
		return err
	}
	ctx := r.Context()
	id := r.PathValue("id")
	filters := map[string]string{"account_id": id, "year": strconv.FormatInt(year, 10),
		"month": strconv.FormatInt(month, 10), "include_pending": strconv.FormatBool(pending)}
	fh, opts, err := h.listPage(q, "statement", filters, limit)
	if err != nil {
		return err
	}
	st, err := h.led.Statement(ctx, x.caller(), id, ledger.StatementQuery{Year: int(year), Month: int(month),
		IncludePending: pending, EntityID: entity, ListOptions: opts})
	if err != nil {
		return err
	}
	// The ledger's positions become this API's signed cursors.
	if c := st.Pagination.NextCursor; c != nil {
		s := h.cursors.encode(*c, "n", fh)
		st.Pagination.NextCursor = &s
	}
	if c := st.Pagination.PreviousCursor; c != nil {
		s := h.cursors.encode(*c, "p", fh)
		st.Pagination.PreviousCursor = &s
	}
	if st.HolderAddress == nil {
		st.HolderAddress = h.holderAddress(ctx, x.caller(), st.EntityID)
	}
	return ok(x, http.StatusOK, "statement generated", st)
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
