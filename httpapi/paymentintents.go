package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
)

var errNoAcquiring = corebank.E(corebank.KindUnavailable, codeUnavailable, "card acquiring is not configured on this server")

// acqRoute answers 503 unavailable when the server has no acquiring
// service (Services.Acquiring nil).
func acqRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.acq != nil }, errNoAcquiring, fn)
}

// createPaymentIntent answers 201 with the intent in an envelope; with
// intent_action the intent is confirmed in the same request and nests
// the action. A reference the account already used answers 409
// duplicate_reference with the original under data.
func (h *handler) createPaymentIntent(x *exchange, r *http.Request) error {
	return created(x, r, "payment intent created", func(q *acquiring.NewIntent) *string { return &q.EntityID }, h.acq.CreateIntent)
}

func (h *handler) getPaymentIntent(x *exchange, r *http.Request) error {
	return fetched(x, r, "payment intent retrieved", h.acq.GetIntent)
}

type cancelIntentReq struct {
	Action   string `json:"action"`
	Reason   string `json:"reason"`
	EntityID string `json:"entity_id"`
}

// patchPaymentIntent cancels an intent in requires_action: {"action":
// "cancel", "reason"?, "entity_id"?}.
func (h *handler) patchPaymentIntent(x *exchange, r *http.Request) error {
	var req cancelIntentReq
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	requested, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	if req.Action != "cancel" {
		return corebank.InvalidField("action", "must be cancel")
	}
	in, err := h.acq.CancelIntent(r.Context(), x.caller(), requested, r.PathValue("id"), req.Reason)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "payment intent cancelled", in)
}

// itemsList is the acquiring lists' form: the page at data.items, its
// meta at data.meta.
type itemsList[T any] struct {
	Items []T      `json:"items"`
	Meta  listMeta `json:"meta"`
}

// readAcqFilter reads the filters the intent and action lists share
// (CONTRACT.md): status, reference, currency, account_id, date_from and
// date_to (ISO 8601 or Unix ms, inclusive), and next_cursor as cursor.
func readAcqFilter(q *query, filters map[string]string, extra ...string) acquiring.Filter {
	names := append([]string{"account_id", "status", "reference", "currency"}, extra...)
	for _, name := range names {
		if v := q.str(name); v != "" {
			filters[name] = v
		}
	}
	f := acquiring.Filter{AccountID: filters["account_id"], Status: filters["status"], Reference: filters["reference"],
		Currency: filters["currency"], PaymentType: filters["payment_type"], PaymentIntentID: filters["payment_intent_id"],
		PaymentIntentActionID: filters["payment_intent_action_id"]}
	f.DateFrom = q.dateParam("date_from", filters)
	f.DateTo = q.dateParam("date_to", filters)
	q.cursorAlias("next_cursor")
	return f
}

// dateParam reads an ISO 8601 time (RFC 3339, or a date meaning its
// midnight UTC) or Unix ms, recording it in filters as ms; 0 when absent.
func (q *query) dateParam(name string, filters map[string]string) int64 {
	v := q.str(name)
	if v == "" {
		return 0
	}
	var ms int64
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n <= maxSessionTime {
		ms = n
	} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil && t.UnixMilli() >= 0 {
		ms = t.UnixMilli()
	} else if t, err := time.Parse(time.DateOnly, v); err == nil && !strings.HasPrefix(v, "-") && t.UnixMilli() >= 0 {
		ms = t.UnixMilli()
	} else {
		q.add(name, "must be an ISO 8601 time (2026-03-15T12:00:00Z or 2026-03-15) or Unix milliseconds")
		return 0
	}
	filters[name] = strconv.FormatInt(ms, 10)
	return ms
}

// listPaymentIntents lists one entity's intents, oldest first, under
// data.items.
func (h *handler) listPaymentIntents(x *exchange, r *http.Request) error {
	return itemsPage(h, x, r, "payment-intents", "payment intents retrieved", h.acq.ListIntents)
}

// itemsPage answers one page of an acquiring list under data.items: the
// filters readAcqFilter reads (and extra), the entity asked for, the
// page read lists for the caller.
func itemsPage[T any](h *handler, x *exchange, r *http.Request, name, message string,
	read func(context.Context, corebank.Caller, acquiring.Filter, corebank.ListOptions) (*acquiring.Page[T], error), extra ...string) error {
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	f := readAcqFilter(q, filters, extra...)
	l, err := h.readScopedList(x, q, name, filters)
	if err != nil {
		return err
	}
	f.EntityID = l.requested
	page, err := read(r.Context(), x.caller(), f, l.opts)
	if err != nil {
		return err
	}
	if l.cursorErr != nil {
		return l.cursorErr
	}
	filters["entity_id"] = page.EntityID
	base := list(h, message, page.Page, l.opts.Limit, l.fh, filters)
	return ok(x, http.StatusOK, base.Message, &itemsList[T]{Items: page.Items, Meta: base.Meta})
}
