package httpapi

import "net/http"

// Patterns returns the route patterns h serves, for tests that walk every
// route.
func Patterns(h http.Handler) []string { return append([]string(nil), h.(*handler).patterns...) }

// BodyLimit returns the largest body the route pattern accepts.
func BodyLimit(pattern string) int64 {
	if n, ok := bodyLimits[pattern]; ok {
		return n
	}
	return maxBody
}

// RoutePatterns is the pattern of every route in the route table, in its
// order and sandbox routes included, for tests that must cover each route
// (a route added to the table without a case fails them).
var RoutePatterns = func() []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		out[i] = rt.pattern
	}
	return out
}()

// CrashBeforeStoring makes h answer idempotent requests without storing
// their responses while on is true, as a process killed right after the
// request's last write committed would: the retry then finds only the
// steps its writes recorded.
func CrashBeforeStoring(h http.Handler, on bool) { h.(*handler).noStore.Store(on) }

// Open reports whether the route pattern is served without an API key.
func Open(pattern string) bool { return open[pattern] }

// FlushCompletions waits until h has stored every completion it deferred
// (Options.DeferCompletion).
func FlushCompletions(h http.Handler) {
	if c := h.(*handler).completer; c != nil {
		c.flush()
	}
}
