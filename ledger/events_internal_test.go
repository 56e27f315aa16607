package ledger

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
)

// benchTransfer is a transfer event's object as the API renders it.
const benchTransfer = `{"id":"01KKRNW4G0PKK6YRHZ9BA1SDF3","account_id":"01KKRNW4G0R2M7QNQK2WM9NQX5","entity_id":"01KKRNW4G0GGY1YXY4PQRCQ2D4",` +
	`"counterparty_id":"01KKRNW4G0PKK6YRHZ94XYHT32","payment_detail_id":"01KKRNW4G0PKK6YRHZ97ZHVZNZ","type":"outflow","currency":"USD",` +
	`"amount":1,"applicable_fee":0,"status":"successful","status_reason":"","payment_type":"book-transfer","narration":"invoice \u003cref-1\u003e",` +
	`"unique_reference":"ref-1","meta":{"k":"ü"},"created":1773576000000,"updated":1773576001000}`

// TestEventCodec: every stored form gives back the event's object byte for
// byte, a transfer event is compressed to well under half, and a record that
// does not decode is storage.ErrCorrupt.
func TestEventCodec(t *testing.T) {
	const id = "01KKRNW4G0PKK6YRHZ9BA1SDF3"
	transfer := benchTransfer
	tests := []struct {
		name   string
		ev     Event
		format byte
		max    int // stored bytes at most, 0 for no bound
	}{
		{"Transfer", Event{ID: id, Type: "outflows.completed", EntityID: "01KKRNW4G0GGY1YXY4PQRCQ2D4", Object: json.RawMessage(transfer)}, eventS2, len(transfer) / 2},
		{"Tiny", Event{ID: id, Type: "x.y", EntityID: "", Object: json.RawMessage(`{}`)}, eventPlain, 0},
		{"NoObject", Event{ID: id, Type: "x.y", EntityID: "e1"}, eventPlain, 0},
		{"Other", Event{ID: id, Type: "cards.frozen", EntityID: "e1", Object: json.RawMessage(`{"card":"` + strings.Repeat("abc", 100) + `"}`)}, eventS2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := encodeEvent(&tt.ev)
			if v[0] != tt.format {
				t.Errorf("format = %d, want %d", v[0], tt.format)
			}
			if tt.max > 0 && len(v) > tt.max {
				t.Errorf("stored %d bytes, want at most %d", len(v), tt.max)
			}
			got, err := decodeEvent([]byte(id), v)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.ev
			want.Created = 1773576000000 // the ID's time
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("ErrCorrupt", func(t *testing.T) {
		good := encodeEvent(&tests[0].ev)
		for _, v := range [][]byte{nil, {9}, {eventPlain, 200}, {eventS2, 1, 2, 3}, good[:len(good)/2]} {
			if _, err := decodeEvent([]byte(id), v); !errors.Is(err, storage.ErrCorrupt) {
				t.Errorf("decode %x = %v, want ErrCorrupt", v, err)
			}
		}
		if _, err := decodeEvent([]byte("not-an-id"), good); !errors.Is(err, storage.ErrCorrupt) {
			t.Errorf("decode under a bad key = %v", err)
		}
	})
}

// BenchmarkEventCodec measures what storing an event costs inside the
// transaction that reports a change, and what it keeps: a transfer event.
func BenchmarkEventCodec(b *testing.B) {
	ev := Event{ID: "01KKRNW4G0GGY1YXY4PQRCQ2D5", Type: "outflows.completed", EntityID: "01KKRNW4G0GGY1YXY4PQRCQ2D4",
		Object: json.RawMessage(benchTransfer)}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			n = len(encodeEvent(&ev))
		}
		b.ReportMetric(float64(n), "stored_bytes")
		b.ReportMetric(float64(len(ev.Object)), "object_bytes")
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		v := encodeEvent(&ev)
		for b.Loop() {
			if _, err := decodeEvent([]byte(ev.ID), v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
