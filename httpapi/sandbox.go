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

// getClock answers the server's time. It is not built from an adapter:
// it reads nothing of the request, not even a query.
func (h *handler) getClock(x *exchange, r *http.Request) error {
	writeJSON(x, http.StatusOK, clockNow(h.clock.Now()))
	return nil
}

var errRealClock = corebank.E(corebank.KindConflict, "clock_not_adjustable",
	"the server runs on the real clock; start it with -fake-clock to advance time")

type advanceReq struct {
	Seconds *int64 `json:"seconds"`
}

// advanceClock moves the sandbox clock on and runs the due work; it reads
// no entity_id and answers the new time bare.
func (h *handler) advanceClock(x *exchange, r *http.Request) error {
	var req advanceReq
	return moved(x, r, bare(http.StatusOK), &req, nil, func(ctx context.Context, _ corebank.Caller, _, _ string) (clockBody, error) {
		return h.advanceBy(ctx, x.reqID, req)
	})
}

func (h *handler) advanceBy(ctx context.Context, reqID string, req advanceReq) (clockBody, error) {
	switch {
	case req.Seconds == nil:
		return clockBody{}, corebank.InvalidField("seconds", "is required")
	case *req.Seconds < 1 || *req.Seconds > maxAdvance:
		return clockBody{}, corebank.InvalidField("seconds", "must be between 1 and 315360000 (ten years)")
	}
	if h.fake == nil {
		return clockBody{}, errRealClock
	}
	h.advance.Lock()
	defer h.advance.Unlock()
	d := time.Duration(*req.Seconds) * time.Second
	var now time.Time
	if h.advancer != nil {
		// A stored clock's advance is this request's step: a retry after a
		// crash replays it rather than advancing again.
		var err error
		if now, err = h.advancer(ctx, d); err != nil {
			return clockBody{}, err
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
		if err := h.runJobs(storage.WithoutJournal(context.WithoutCancel(ctx)), now); err != nil {
			h.log.WarnContext(ctx, "sandbox clock: due work failed after an advance; it stays queued",
				slog.String("request_id", reqID), slog.Any("err", err))
		}
	}
	return clockNow(now), nil
}

type createKeyReq struct {
	EntityID string `json:"entity_id"`
	ReadOnly bool   `json:"read_only"`
}

// createAPIKey reads entity_id from the body alone: the service takes it
// there.
func (h *handler) createAPIKey(x *exchange, r *http.Request) error {
	return created(x, r, bare(http.StatusCreated), nil,
		func(ctx context.Context, c corebank.Caller, req createKeyReq) (*entities.IssuedKey, error) {
			return h.ent.CreateAPIKey(ctx, c, entities.NewAPIKey{EntityID: req.EntityID, ReadOnly: req.ReadOnly})
		})
}

type deletedKey struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id"`
	Deleted  bool   `json:"deleted"`
}

// deleteAPIKey reads no body and no entity_id.
func (h *handler) deleteAPIKey(x *exchange, r *http.Request) error {
	return moved(x, r, bare(http.StatusOK), nil, nil, func(ctx context.Context, c corebank.Caller, _, id string) (*deletedKey, error) {
		k, err := h.ent.DeleteAPIKey(ctx, c, "", id)
		if err != nil {
			return nil, err
		}
		return &deletedKey{ID: k.ID, EntityID: k.EntityID, Deleted: true}, nil
	})
}

type reviewReq struct {
	Decision string `json:"decision"`
}

// reviewEntity decides the review of entity {id}; it reads no entity_id.
func (h *handler) reviewEntity(x *exchange, r *http.Request) error {
	var req reviewReq
	return moved(x, r, bare(http.StatusOK), &req, nil, func(ctx context.Context, c corebank.Caller, _, id string) (*entities.Entity, error) {
		return h.ent.ReviewEntity(ctx, c, id, req.Decision)
	})
}

// createInflow serves POST /sandbox/inflows: the body is funding.NewInflow
// (reference and source are not members of it), and the funding service
// checks it and the caller's scope over the account.
func (h *handler) createInflow(x *exchange, r *http.Request) error {
	return created(x, r, bare(http.StatusCreated), nil,
		func(ctx context.Context, c corebank.Caller, req funding.NewInflow) (*funding.Inflow, error) {
			if h.funding == nil {
				return nil, errNoFunding
			}
			return h.funding.CreateInflow(ctx, c, req)
		})
}

// errWorkspacesOff answers the sandbox workspace routes when they reach
// this handler: with -workspaces, bank/workspace serves them in front of
// it.
var errWorkspacesOff = corebank.E(corebank.KindNotFound, corebank.CodeNotFound,
	"sandbox workspaces are off: start the server with -workspaces (sandbox only)")

// workspacesOff answers POST /sandbox/workspaces and DELETE
// /sandbox/workspaces/{id}, open routes, 404 whatever the key.
func (h *handler) workspacesOff(x *exchange, r *http.Request) error {
	return errWorkspacesOff
}
