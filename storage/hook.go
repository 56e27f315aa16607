package storage

import (
	"context"
	"time"
)

// WithCommitHook returns a Backend that behaves exactly like b and calls fn
// after every Update that committed (returned nil), on the caller's
// goroutine, once per Update however often the backend re-ran its function.
// fn is not called for a failed Update, for View, or for Close. The webhook
// dispatcher hands its Wake method here so that an event written to the
// outbox is delivered right after the commit that wrote it; fn must
// therefore be fast and must not block (Wake only signals a channel).
func WithCommitHook(b Backend, fn func()) Backend {
	if fn == nil {
		return WithUpdateHook(b, nil)
	}
	return WithUpdateHook(b, func(_ time.Duration, err error) {
		if err == nil {
			fn()
		}
	})
}

// WithUpdateHook returns a Backend that behaves exactly like b and calls fn
// after every Update, committed or not, on the caller's goroutine, with how
// long the Update took (its function, re-runs and the commit) and what it
// returned. Metrics hand their commit-latency histogram here
// (examples/server); fn must be fast and must not block.
func WithUpdateHook(b Backend, fn func(took time.Duration, err error)) Backend {
	return &hooked{b: b, fn: fn}
}

type hooked struct {
	b  Backend
	fn func(time.Duration, error)
}

func (h *hooked) View(ctx context.Context, fn func(Tx) error) error { return h.b.View(ctx, fn) }

func (h *hooked) Update(ctx context.Context, fn func(Tx) error) error {
	if h.fn == nil {
		return h.b.Update(ctx, fn)
	}
	start := time.Now()
	err := h.b.Update(ctx, fn)
	h.fn(time.Since(start), err)
	return err
}

func (h *hooked) Close() error { return h.b.Close() }
