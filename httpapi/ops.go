package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// HeaderRequestID is the header that carries a request's ID, both ways.
const HeaderRequestID = "X-Request-Id"

// maxRequestID is the longest caller-given request ID kept; a longer one,
// or one with a byte outside printable ASCII, is replaced by a new ID.
const maxRequestID = 128

// DefaultReadyTimeout bounds GET /readyz's read of the store when
// Options.ReadyTimeout is zero.
const DefaultReadyTimeout = 2 * time.Second

// RequestInfo describes one served request, for Options.OnRequest and the
// request log.
type RequestInfo struct {
	Method string
	// Route is the matched route's path pattern ("/accounts/{id}"), or
	// RouteUnmatched when no route matched.
	Route    string
	Status   int
	Duration time.Duration
	// Entity is the caller's entity; empty when the request carried no
	// valid key or needed none.
	Entity    string
	RequestID string
}

// RouteUnmatched is RequestInfo.Route of a request no route matched (a
// 404 or 405), so that unknown paths do not each become a metric label.
const RouteUnmatched = "unmatched"

// requestID returns the caller's X-Request-Id when it is 1 to maxRequestID
// bytes of printable ASCII (space excluded), else a new random one: 32 hex
// digits.
func requestID(given string) string {
	if n := len(given); n > 0 && n <= maxRequestID {
		i := 0
		for ; i < n; i++ {
			if c := given[i]; c <= ' ' || c > '~' {
				break
			}
		}
		if i == n {
			return given
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// responseID is the request ID ServeHTTP set on w's response headers.
func responseID(w http.ResponseWriter) string {
	if x, ok := w.(*exchange); ok {
		return x.reqID
	}
	if v := w.Header()[HeaderRequestID]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// served reports a finished request to the request log and OnRequest.
// pattern is r.Pattern once the mux ran, "" when it did not (a request
// refused before routing), and then the route is looked up here.
func (h *handler) served(x *exchange, r *http.Request, start time.Time) {
	if !h.logRequests && h.onRequest == nil {
		return
	}
	pattern := r.Pattern
	if pattern == "" {
		_, pattern = h.mux.Handler(r)
	}
	route := RouteUnmatched
	if _, path, ok := strings.Cut(pattern, " "); ok {
		route = path
	}
	status := x.status
	if status == 0 {
		status = http.StatusOK
	}
	info := RequestInfo{Method: r.Method, Route: route, Status: status, Duration: time.Since(start),
		Entity: x.c.EntityID, RequestID: x.reqID}
	if h.logRequests {
		h.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", info.Method), slog.String("route", info.Route),
			slog.Int("status", info.Status), slog.Duration("duration", info.Duration),
			slog.String("entity", info.Entity), slog.String("request_id", info.RequestID),
			slog.String("client", h.clientAddr(r)))
	}
	if h.onRequest != nil {
		h.onRequest(info)
	}
}

// statusBody is the body of the health probes: {"status": "ok"}.
type statusBody struct {
	Status string `json:"status"`
}

// healthz answers 200 {"status": "ok"} while the process serves requests.
// The probes are open routes about the process, not an entity's
// resources, so they are not built from an adapter (helpers.go).
func (h *handler) healthz(x *exchange, r *http.Request) error {
	writeJSON(x, http.StatusOK, &statusBody{Status: "ok"})
	return nil
}

// bucketReady is the bucket readyz reads, which nothing writes.
const bucketReady storage.Bucket = "httpapi.ready"

var errNotReady = corebank.E(corebank.KindUnavailable, codeUnavailable, "the store is not answering")

// readyz answers 200 {"status": "ready"} when a read transaction on the
// store completes within the ready timeout, else 503 unavailable. The read
// runs on its own goroutine so that a store stuck past its context still
// answers the probe in time. It reads a key: a View that reads nothing
// sends nothing to PostgreSQL, and a pooled connection the database
// dropped would look ready.
func (h *handler) readyz(x *exchange, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), h.readyTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- h.db.View(ctx, func(tx storage.Tx) error {
			if _, err := tx.Get(bucketReady, []byte("readyz")); !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return nil
		})
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		h.log.WarnContext(r.Context(), "readiness check failed", slog.String("error", err.Error()),
			slog.String("request_id", x.reqID))
		return errNotReady
	}
	writeJSON(x, http.StatusOK, &statusBody{Status: "ready"})
	return nil
}
