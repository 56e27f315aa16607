package httpapi

import (
	"strconv"
	"testing"

	"github.com/corebank/corebank"
)

func TestKindStatus(t *testing.T) {
	f := newFW(t)
	want := map[corebank.Kind]int{
		corebank.KindInternal: 500, corebank.KindInvalid: 422, corebank.KindNotFound: 404,
		corebank.KindConflict: 409, corebank.KindRejected: 422, corebank.KindUnavailable: 503,
		corebank.KindForbidden: 403, corebank.KindUnauthorized: 401, corebank.KindRateLimited: 429,
		corebank.KindTooLarge: 413, corebank.KindBadRequest: 400,
	}
	for k, status := range want {
		got := f.do(t, "GET", "/kind/"+strconv.Itoa(int(k)), "full", nil)
		if got.status != status {
			t.Errorf("%v: got %d, want %d", k, got.status, status)
		}
		if k == corebank.KindRateLimited {
			for _, field := range []string{"retry_after", "limit_type", "current_count", "limit"} {
				if _, ok := got.body[field]; !ok {
					t.Errorf("429 body lacks %s: %s", field, got.raw)
				}
			}
			if got.header.Get("Retry-After") != "30" {
				t.Errorf("Retry-After = %q", got.header.Get("Retry-After"))
			}
		}
	}
}
