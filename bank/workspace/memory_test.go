package workspace_test

import (
	"flag"
	"runtime"
	"testing"
	"time"

	"github.com/corebank/corebank/bank/workspace"
)

var spaces = flag.Int("workspaces", 1000, "TestMemoryReturns: workspaces created, used and deleted")

func heap() uint64 {
	var ms runtime.MemStats
	for range 3 { // finalizers and sync.Pools let go over a few cycles
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMemoryReturns: after 1,000 workspaces are created, used (an account,
// money in, a webhook and its delivery) and deleted, the heap is back at
// its baseline, and the goroutines are as many as before.
func TestMemoryReturns(t *testing.T) {
	h := newHarness(t, workspace.Options{Max: *spaces + 10})
	use := func() {
		c := h.create(t, map[string]any{"fake_clock": true})
		h.hook(t, c)
		s, raw := h.call(t, c.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Used"})
		if s != 201 {
			t.Fatalf("account: %d %s", s, raw)
		}
		if s, raw := h.call(t, c.APIKey, "POST", "/sandbox/inflows", map[string]any{"account_id": data(t, raw)["id"],
			"amount": 1000, "narration": "in"}); s != 201 {
			t.Fatalf("inflow: %d %s", s, raw)
		}
		if s, raw := h.call(t, c.APIKey, "POST", "/sandbox/clock/advance", map[string]any{"seconds": 60}); s != 200 {
			t.Fatalf("advance: %d %s", s, raw)
		}
		if s, _ := h.call(t, c.APIKey, "DELETE", "/sandbox/workspaces/"+c.ID, nil); s != 204 {
			t.Fatalf("delete: %d", s)
		}
	}
	settle := func() (uint64, int) {
		time.Sleep(100 * time.Millisecond) // passes in flight end
		h.srv.CloseClientConnections()
		h.hooks.CloseClientConnections()
		time.Sleep(100 * time.Millisecond)
		return heap(), runtime.NumGoroutine()
	}
	for range 20 { // what is made once: parsed templates, pools, connections
		use()
	}
	heap0, g0 := settle()
	for range *spaces {
		use()
	}
	heap1, g1 := settle()
	if h.m.Len() != 0 {
		t.Errorf("%d workspaces left", h.m.Len())
	}
	grew := int64(heap1) - int64(heap0)
	t.Logf("heap %.1f MB before, %.1f MB after %d workspaces (%+d B each); goroutines %d, %d",
		float64(heap0)/1e6, float64(heap1)/1e6, *spaces, grew/int64(*spaces), g0, g1)
	// A workspace that were kept would hold about 100 KB; 1 MB in all is
	// noise (the GC's own structures, connection buffers).
	if grew > 1<<20 {
		t.Errorf("the heap grew %d bytes over %d workspaces", grew, *spaces)
	}
	if g1 > g0+2 {
		t.Errorf("goroutines: %d before, %d after", g0, g1)
	}
}
