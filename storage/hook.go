package storage

import "context"

// WithCommitHook returns a Backend that behaves exactly like b and calls fn
// after every Update that committed (returned nil), on the caller's
// goroutine, once per Update however often the backend re-ran its function.
// fn is not called for a failed Update, for View, or for Close. The webhook
// dispatcher hands its Wake method here so that an event written to the
// outbox is delivered right after the commit that wrote it; fn must
// therefore be fast and must not block (Wake only signals a channel).
func WithCommitHook(b Backend, fn func()) Backend {
	return &hooked{b: b, fn: fn}
}

type hooked struct {
	b  Backend
	fn func()
}

func (h *hooked) View(ctx context.Context, fn func(Tx) error) error { return h.b.View(ctx, fn) }

func (h *hooked) Update(ctx context.Context, fn func(Tx) error) error {
	if err := h.b.Update(ctx, fn); err != nil {
		return err
	}
	if h.fn != nil {
		h.fn()
	}
	return nil
}

func (h *hooked) Close() error { return h.b.Close() }
