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
