package storage_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

func TestCodecRoundTrip(t *testing.T) {
	var e storage.Encoder
	e.Byte(1)
	e.Varint(-42)
	e.Uvarint(1 << 40)
	e.Str("héllo")
	e.Bytes([]byte{0, 1})
	e.StrMap(map[string]string{"b": "2", "a": "1"})
	e.StrMap(nil)
	d := storage.Decoder{B: e.B}
	got := []any{d.Byte(), d.Varint(), d.Uvarint(), d.Str(), d.Raw(), d.StrMap(), d.StrMap()}
	want := []any{byte(1), int64(-42), uint64(1 << 40), "héllo", []byte{0, 1}, map[string]string{"a": "1", "b": "2"}, map[string]string(nil)}
	if diff := cmp.Diff(want, got); diff != "" || d.Err != nil || len(d.B) != 0 {
		t.Fatalf("(-want +got)\n%s\nerr %v, %d bytes left", diff, d.Err, len(d.B))
	}
	if d.StrKnown("x") != "" || d.Err == nil {
		t.Fatal("a read past the end did not set Err")
	}
	// Equal maps encode to equal bytes.
	var e1, e2 storage.Encoder
	e1.StrMap(map[string]string{"x": "1", "y": "2", "z": "3"})
	e2.StrMap(map[string]string{"z": "3", "y": "2", "x": "1"})
	if string(e1.B) != string(e2.B) {
		t.Fatal("map encoding depends on iteration order")
	}
}

// TestCodecCorrupt feeds every truncation of a record to the decoder: each
// must fail cleanly, never panic.
func TestCodecCorrupt(t *testing.T) {
	var e storage.Encoder
	e.Str("account")
	e.Varint(1 << 50)
	e.StrMap(map[string]string{"k": "v"})
	for n := range len(e.B) {
		d := storage.Decoder{B: e.B[:n]}
		d.Str()
		d.Varint()
		d.StrMap()
		if d.Err != storage.ErrCorrupt {
			t.Fatalf("%d of %d bytes decoded without error", n, len(e.B))
		}
	}
	d := storage.Decoder{B: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}}
	if d.StrMap(); d.Err != storage.ErrCorrupt {
		t.Fatal("a huge map count decoded")
	}
}

func TestPeek(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	if err := db.Update(ctx, func(tx storage.Tx) error { return tx.Put("p", []byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	err := db.View(ctx, func(tx storage.Tx) error {
		if _, ok := tx.(storage.Peeker); !ok {
			t.Error("memory's Tx does not implement storage.Peeker")
		}
		v, err := storage.Peek(tx, "p", []byte("k"))
		if err != nil || string(v) != "v" {
			t.Errorf("Peek = %q, %v", v, err)
		}
		if _, err := storage.Peek(tx, "p", []byte("absent")); err != storage.ErrNotFound {
			t.Errorf("Peek absent = %v; want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
