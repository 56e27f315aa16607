package cards

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/corebank/corebank/storage"
)

// TestCounterCodec: the binary form reads back as the counter JSON would,
// and a counter stored as JSON by an earlier release still reads.
func TestCounterCodec(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	cases := []counter{{}, {1, 2, 3, 4}, {-5, 0, -1, 0}, {math.MaxInt64, math.MinInt64, 0, 1}}
	for range 1000 {
		cases = append(cases, counter{r.Int64() >> r.IntN(64), -r.Int64() >> r.IntN(64), r.Int64N(100), r.Int64N(100)})
	}
	for _, c := range cases {
		got, err := parseCounter(appendCounter(nil, c))
		if err != nil || got != c {
			t.Fatalf("binary %+v: got %+v, %v", c, got, err)
		}
		raw, _ := json.Marshal(c)
		got, err = parseCounter(raw)
		if err != nil || got != c {
			t.Fatalf("json %s: got %+v, %v", raw, got, err)
		}
	}
	for _, bad := range [][]byte{nil, {0}, {counterV1}, {counterV1, 2, 2, 2}, append(appendCounter(nil, counter{}), 0), []byte("{")} {
		if _, err := parseCounter(bad); !errors.Is(err, storage.ErrCorrupt) {
			t.Errorf("parseCounter(%q) = %v, want ErrCorrupt", bad, err)
		}
	}
}
