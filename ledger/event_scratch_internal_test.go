package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestEventScratch: one scratch reused for events of every size, stored
// plain or compressed, encodes each exactly as fresh buffers do, and what
// it returned decodes back to the event.
func TestEventScratch(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var sc eventScratch
	for i := range 500 {
		obj := map[string]any{"id": fmt.Sprintf("o%d", i), "note": strings.Repeat("x", r.IntN(2000))}
		if r.IntN(3) == 0 { // incompressible: stored plain
			b := make([]byte, r.IntN(300))
			for j := range b {
				b[j] = byte('a' + r.IntN(26))
			}
			obj["note"] = string(b)
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		ev := Event{ID: "01KKRNW4G0GGY1YXY4PQRCQ2D5", Type: "outflows.created", EntityID: fmt.Sprintf("e%d", r.IntN(100)), Object: raw}
		got, want := sc.encode(&ev), encodeEvent(&ev)
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d: scratch encoding %x, fresh %x", i, got, want)
		}
		back, err := decodeEvent([]byte(ev.ID), got)
		if err != nil || string(back.Object) != string(raw) || back.Type != ev.Type || back.EntityID != ev.EntityID {
			t.Fatalf("event %d decodes to %+v, %v", i, back, err)
		}
	}
}
