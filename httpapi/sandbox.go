package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/storage"
)

// maxAdvance is the longest single clock advance (ten years).
const maxAdvance = 10 * 365 * 24 * 3600

type clockBody struct {
	Now   string `json:"now"`
	NowMS int64  `json:"now_ms"`
}

func clockNow(t time.Time) clockBody {
	return clockBody{Now: t.UTC().Format(time.RFC3339Nano), NowMS: t.UnixMilli()}
}

func (h *handler) getClock(x *exchange, r *http.Request) error {
	writeJSON(x, http.StatusOK, clockNow(h.clock.Now()))
	return nil
}

var errRealClock = corebank.E(corebank.KindConflict, "clock_not_adjustable",
	"the server runs on the real clock; start it with -fake-clock to advance time")

func (h *handler) advanceClock(x *exchange, r *http.Request) error {
	var req struct {
		Seconds *int64 `json:"seconds"`
	}
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	switch {
	case req.Seconds == nil:
		return corebank.InvalidField("seconds", "is required")
	case *req.Seconds < 1 || *req.Seconds > maxAdvance:
		return corebank.InvalidField("seconds", "must be between 1 and 315360000 (ten years)")
	}
	if h.fake == nil {
		return errRealClock
	}
	h.advance.Lock()
	defer h.advance.Unlock()
	d := time.Duration(*req.Seconds) * time.Second
	var now time.Time
	if h.advancer != nil {
		// A stored clock's advance is this request's step: a retry after a
		// crash replays it rather than advancing again.
		var err error
		if now, err = h.advancer(r.Context(), d); err != nil {
			return err
		}
	} else {
		h.fake.Add(d)
		now = h.fake.Now()
	}
	if h.runJobs != nil {
		// The due work is the bank's own, not this request's effect: it is
		// kept out of an idempotent request's journal. (A fake clock that
		// is not stored, without Options.AdvanceClock, loses the advance in
		// a crash, and its retry advances again.)
		//
		// The clock has moved, so the answer is the new time even when a
		// kind of due work fails (a provider that is down): that work stays
		// queued and runs again on the next advance, as it would on a real
		// clock, and a client that took a 503 for a failed advance and sent
		// it again would move the clock twice.
		if err := h.runJobs(storage.WithoutJournal(context.WithoutCancel(r.Context())), now); err != nil {
			h.log.WarnContext(r.Context(), "sandbox clock: due work failed after an advance; it stays queued",
				slog.String("request_id", x.reqID), slog.Any("err", err))
		}
	}
	writeJSON(x, http.StatusOK, clockNow(now))
	return nil
}

type createKeyReq struct {
	EntityID string `json:"entity_id"`
	ReadOnly bool   `json:"read_only"`
}

func (h *handler) createAPIKey(x *exchange, r *http.Request) error {
	var req createKeyReq
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	k, err := h.ent.CreateAPIKey(r.Context(), x.caller(), entities.NewAPIKey{EntityID: req.EntityID, ReadOnly: req.ReadOnly})
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusCreated, k)
	return nil
}

type deletedKey struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id"`
	Deleted  bool   `json:"deleted"`
}

func (h *handler) deleteAPIKey(x *exchange, r *http.Request) error {
	k, err := h.ent.DeleteAPIKey(r.Context(), x.caller(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, &deletedKey{ID: k.ID, EntityID: k.EntityID, Deleted: true})
	return nil
}

func (h *handler) reviewEntity(x *exchange, r *http.Request) error {
	var req struct {
		Decision string `json:"decision"`
	}
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	e, err := h.ent.Review(r.Context(), x.caller(), r.PathValue("id"), req.Decision)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, e)
	return nil
}

var errNoFunding = corebank.E(corebank.KindUnavailable, "unavailable", "sandbox inflows are not configured on this server")

// createInflow serves POST /sandbox/inflows: the body is funding.NewInflow
// (reference and source are not members of it), and the funding service
// checks it and the caller's scope over the account.
func (h *handler) createInflow(x *exchange, r *http.Request) error {
	var req funding.NewInflow
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	if h.funding == nil {
		return errNoFunding
	}
	in, err := h.funding.CreateInflow(r.Context(), x.caller(), req)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusCreated, in)
	return nil
}

// simulated runs a sandbox simulate route: req (the route's own body, its
// entity_id at entity) is decoded strictly, the entity asked for is read
// from the body or the query, and run answers the object, written bare
// with 200 as every sandbox route answers. It runs what the provider's,
// issuer's or network's own answer runs.
func simulated[T any](x *exchange, r *http.Request, req any, entity *string,
	run func(ctx context.Context, c corebank.Caller, entityID, id string) (T, error)) error {
	v, err := onPathObject(x, r, req, entity, run)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, v)
	return nil
}

// onPathObject decodes the body into req, merges its entity_id (*entity,
// a field of req) with the query's, and runs run on the object the path's
// {id} names.
func onPathObject[T any](x *exchange, r *http.Request, req any, entity *string,
	run func(ctx context.Context, c corebank.Caller, entityID, id string) (T, error)) (T, error) {
	var zero T
	if err := decodeJSON(x.body, req); err != nil {
		return zero, err
	}
	requested, err := entityParam(r, *entity)
	if err != nil {
		return zero, err
	}
	return run(r.Context(), x.caller(), requested, r.PathValue("id"))
}
