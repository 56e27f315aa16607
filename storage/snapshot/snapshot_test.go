package snapshot_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
	"github.com/corebank/corebank/storage/snapshot"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// triple is one stored pair with its bucket.
type triple struct {
	B    storage.Bucket
	K, V string
}

// dump reads every pair of db in one View.
func dump(tb testing.TB, db storage.Backend) []triple {
	tb.Helper()
	got, err := storage.View(context.Background(), db, func(tx storage.Tx) ([]triple, error) {
		buckets, err := storage.Buckets(tx)
		if err != nil {
			return nil, err
		}
		var out []triple
		for _, b := range buckets {
			err := tx.Scan(b, storage.ScanOptions{}, func(k, v []byte) error {
				out = append(out, triple{b, string(k), string(v)})
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

// fill writes n pseudo-random pairs (seed) over a few buckets, in Updates
// of 1,000: keys with 0x00 and 0xff bytes, empty values, and a value of
// 300 KiB, larger than a frame's target. It deletes some keys after, so
// that a backend holds deletes too, and one bucket it empties.
func fill(tb testing.TB, db storage.Backend, seed int64, n int) {
	tb.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed))
	buckets := []storage.Bucket{"ledger.accounts", "ledger.entries", "payments.transfers", storage.BucketMigrations, "z.emptied"}
	for done := 0; done < n; done += 1000 {
		err := db.Update(ctx, func(tx storage.Tx) error {
			r := rand.New(rand.NewSource(seed + int64(done)))
			for i := done; i < min(done+1000, n); i++ {
				k := binary.BigEndian.AppendUint64([]byte{byte(r.Intn(3)) * 0x7f}, uint64(r.Int63()))
				v := make([]byte, r.Intn(200))
				r.Read(v)
				if err := tx.Put(buckets[r.Intn(len(buckets))], k, v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	big := make([]byte, 300<<10)
	r.Read(big)
	err := db.Update(ctx, func(tx storage.Tx) error {
		if err := tx.Put("payments.transfers", []byte("big"), big); err != nil {
			return err
		}
		if err := tx.Put("z.emptied", []byte{0xff, 0xff}, nil); err != nil {
			return err
		}
		return tx.Put("a.\x7f", []byte{0}, []byte{0xff})
	})
	if err != nil {
		tb.Fatal(err)
	}
	err = db.Update(ctx, func(tx storage.Tx) error {
		var doomed [][]byte
		err := tx.Scan("ledger.entries", storage.ScanOptions{}, func(k, _ []byte) error {
			if k[len(k)-1]%3 == 0 {
				doomed = append(doomed, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range doomed {
			if err := tx.Delete("ledger.entries", k); err != nil {
				return err
			}
		}
		return storage.DeleteMatching(tx, "z.emptied", nil, nil)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func mustBolt(tb testing.TB, opt *bolt.Options) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "corebank.db"), opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func mustWrite(tb testing.TB, db storage.Backend) []byte {
	tb.Helper()
	var buf bytes.Buffer
	info, err := snapshot.Write(context.Background(), db, &buf)
	if err != nil {
		tb.Fatalf("Write: %v", err)
	}
	if info.Size != int64(buf.Len()) {
		tb.Fatalf("Write says it wrote %d bytes, and wrote %d", info.Size, buf.Len())
	}
	return buf.Bytes()
}

func mustRead(tb testing.TB, snap []byte, into storage.Backend) *snapshot.Info {
	tb.Helper()
	info, err := snapshot.Read(context.Background(), bytes.NewReader(snap), into)
	if err != nil {
		tb.Fatalf("Read: %v", err)
	}
	return info
}

// body is a snapshot without its magic, header frame and trailer: what
// depends on the pairs alone. It walks the frames (kind, uvarint length,
// payload, CRC).
func body(tb testing.TB, snap []byte) []byte {
	tb.Helper()
	const magicLen = 8
	var start int
	for off := magicLen; off < len(snap); {
		kind := snap[off]
		n, k := binary.Uvarint(snap[off+1:])
		if k <= 0 {
			break
		}
		next := off + 1 + k + int(n) + 4
		switch kind {
		case 'H':
			start = next
		case 'T':
			return snap[start:off]
		}
		off = next
	}
	tb.Fatalf("cannot find the body of a %d-byte snapshot", len(snap))
	return nil
}

// TestRoundTrip takes a store from memory to bolt and back (memory ->
// snapshot -> bolt -> snapshot -> memory): every pair arrives, and the
// snapshots of the three stores are byte for byte the same but for their
// headers' time and source, and the trailer's checksum of those.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := memory.New()
	fill(t, src, 1, 20_000)
	want := dump(t, src)
	if len(want) < 14_000 {
		t.Fatalf("fill left %d pairs", len(want))
	}

	snapMem := mustWrite(t, src)
	// Checkpoints after every commit: the snapshot of the bolt store is
	// read from the bbolt file and the overlay both.
	bdb := mustBolt(t, &bolt.Options{CheckpointSize: 1 << 20})
	info := mustRead(t, snapMem, bdb)
	if diff := cmp.Diff(want, dump(t, bdb)); diff != "" {
		t.Fatalf("bolt after Read (-want +got):\n%s", diff)
	}
	if info.Pairs != int64(len(want)) || info.Source != "memory.DB" || info.Version != snapshot.Version {
		t.Errorf("Read's info: %+v; want %d pairs from memory.DB", info, len(want))
	}
	snapBolt := mustWrite(t, bdb)

	back := memory.New()
	mustRead(t, snapBolt, back)
	if diff := cmp.Diff(want, dump(t, back)); diff != "" {
		t.Fatalf("memory after bolt (-want +got):\n%s", diff)
	}
	snapBack := mustWrite(t, back)

	if !bytes.Equal(body(t, snapMem), body(t, snapBolt)) || !bytes.Equal(body(t, snapMem), body(t, snapBack)) {
		t.Error("the snapshots of memory, bolt and memory again differ beyond their headers")
	}
	vi, err := snapshot.Verify(ctx, bytes.NewReader(snapBolt))
	if err != nil || vi.Source != "bolt.DB" || vi.Pairs != int64(len(want)) || vi.Size != int64(len(snapBolt)) {
		t.Errorf("Verify = %+v, %v", vi, err)
	}
	var buckets []storage.Bucket
	for _, b := range vi.Buckets {
		buckets = append(buckets, b.Name)
	}
	wantBuckets := []storage.Bucket{"a.\x7f", "ledger.accounts", "ledger.entries", "payments.transfers", storage.BucketMigrations}
	if diff := cmp.Diff(wantBuckets, buckets); diff != "" {
		t.Errorf("buckets (-want +got):\n%s", diff)
	}
}

// TestRoundTripPostgres takes the store through PostgreSQL (memory ->
// postgres -> memory). It skips with one line without PostgreSQL.
func TestRoundTripPostgres(t *testing.T) {
	ctx := context.Background()
	pg, err := postgres.Open(ctx, pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	src := memory.New()
	fill(t, src, 2, 5_000)
	want := dump(t, src)
	snap := mustWrite(t, src)
	mustRead(t, snap, pg)
	if diff := cmp.Diff(want, dump(t, pg)); diff != "" {
		t.Fatalf("postgres after Read (-want +got):\n%s", diff)
	}
	snapPG := mustWrite(t, pg)
	if !bytes.Equal(body(t, snap), body(t, snapPG)) {
		t.Error("the snapshots of memory and postgres differ beyond their headers")
	}
	back := memory.New()
	mustRead(t, snapPG, back)
	if diff := cmp.Diff(want, dump(t, back)); diff != "" {
		t.Fatalf("memory after postgres (-want +got):\n%s", diff)
	}
}

// small returns the snapshot of a small store, for damage tests: two
// buckets, a few pairs, an empty value.
func small(tb testing.TB) []byte {
	tb.Helper()
	db := memory.New()
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		for i := range 20 {
			if err := tx.Put(storage.Bucket(fmt.Sprintf("b%d", i%2)), fmt.Appendf(nil, "key-%02d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
				return err
			}
		}
		return tx.Put("b0", []byte("empty"), nil)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return mustWrite(tb, db)
}

// TestDamaged: a snapshot cut short anywhere, with any byte changed, with a
// byte added at its end, or that is not a snapshot at all is refused by
// Verify with ErrCorrupt, and never panics the reader.
func TestDamaged(t *testing.T) {
	ctx := context.Background()
	snap := small(t)
	if _, err := snapshot.Verify(ctx, bytes.NewReader(snap)); err != nil {
		t.Fatalf("the undamaged snapshot: %v", err)
	}
	check := func(name string, damaged []byte) {
		t.Helper()
		info, err := snapshot.Verify(ctx, bytes.NewReader(damaged))
		if !errors.Is(err, snapshot.ErrCorrupt) || info != nil {
			t.Errorf("%s: Verify = %+v, %v; want ErrCorrupt", name, info, err)
		}
	}
	for n := range len(snap) {
		check(fmt.Sprintf("cut to %d of %d bytes", n, len(snap)), snap[:n])
	}
	for i := range snap {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			damaged := bytes.Clone(snap)
			damaged[i] ^= mask
			check(fmt.Sprintf("byte %d ^ %#x", i, mask), damaged)
		}
	}
	check("a byte after the trailer", append(bytes.Clone(snap), 0))
	check("a second snapshot after the first", append(bytes.Clone(snap), snap...))
	check("a JSON file", []byte(`{"entity_id": "ent_1"}`))

	// The error names the offset of the damage.
	damaged := bytes.Clone(snap)
	damaged[len(snap)/2] ^= 1
	if _, err := snapshot.Verify(ctx, bytes.NewReader(damaged)); err == nil || !bytes.Contains([]byte(err.Error()), []byte("at byte ")) {
		t.Errorf("the error does not say where: %v", err)
	}
}

// TestReadStopsAtDamage: Read writes no pair of a damaged frame, nor any
// after it, and returns ErrCorrupt; a truncated snapshot's Read fails too
// (which is why server restore runs Verify first).
func TestReadStopsAtDamage(t *testing.T) {
	ctx := context.Background()
	snap := small(t)
	for _, tc := range []struct {
		name    string
		damaged []byte
	}{
		{"Truncated", snap[:len(snap)-10]},
		{"Flipped", func() []byte { d := bytes.Clone(snap); d[len(d)/2] ^= 0x10; return d }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			into := memory.New()
			if _, err := snapshot.Read(ctx, bytes.NewReader(tc.damaged), into); !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("Read = %v, want ErrCorrupt", err)
			}
			// Read writes in batches far larger than this snapshot, so
			// a refused one wrote nothing.
			if got := dump(t, into); len(got) != 0 {
				t.Errorf("Read of a damaged snapshot wrote %d pairs", len(got))
			}
		})
	}
}

// TestNewerVersion: a snapshot whose header says version 2 is refused with
// ErrVersion, not taken for damage.
func TestNewerVersion(t *testing.T) {
	snap := small(t)
	// The header frame: kind at 8, its length at 9, then the version;
	// its CRC covers kind, length and payload.
	n, k := binary.Uvarint(snap[9:])
	end := 9 + k + int(n)
	v2 := bytes.Clone(snap)
	v2[9+k] = 2
	binary.BigEndian.PutUint32(v2[end:], crc32c(v2[8:end]))
	_, err := snapshot.Verify(context.Background(), bytes.NewReader(v2))
	if !errors.Is(err, snapshot.ErrVersion) {
		t.Fatalf("Verify of version 2 = %v, want ErrVersion", err)
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// TestConsistent takes snapshots while 8 writers move money between
// accounts (each move one Update that debits, credits and appends an
// entry): every snapshot, read back, holds the total and one entry per
// move counted, on memory and on bolt. Pairs from two moments would show
// as a wrong total or a count that disagrees with the entries.
func TestConsistent(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) storage.Backend
	}{
		{"Memory", func(t *testing.T) storage.Backend { return memory.New() }},
		{"Bolt", func(t *testing.T) storage.Backend { return mustBolt(t, &bolt.Options{CheckpointSize: 64 << 10}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testConsistent(t, tc.open(t))
		})
	}
}

const (
	accounts = 50
	funding  = 1_000_000
)

func testConsistent(t *testing.T, db storage.Backend) {
	ctx := context.Background()
	acct := func(i int) []byte { return fmt.Appendf(nil, "acct-%03d", i) }
	err := db.Update(ctx, func(tx storage.Tx) error {
		for i := range accounts {
			if err := tx.Put("balances", acct(i), storage.AppendInt64(nil, funding)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		moves atomic.Int64
	)
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for n := 0; !stop.Load(); n++ {
				from, to, amount := r.Intn(accounts), r.Intn(accounts), int64(r.Intn(100))
				err := db.Update(ctx, func(tx storage.Tx) error {
					for _, m := range []struct {
						i int
						d int64
					}{{from, -amount}, {to, amount}} {
						v, err := tx.Get("balances", acct(m.i))
						if err != nil {
							return err
						}
						if err := tx.Put("balances", acct(m.i), storage.AppendInt64(nil, int64(binary.BigEndian.Uint64(v))+m.d)); err != nil {
							return err
						}
					}
					c, err := tx.Get("counters", []byte("moves"))
					var count int64
					if err == nil {
						count = int64(binary.BigEndian.Uint64(c))
					} else if !errors.Is(err, storage.ErrNotFound) {
						return err
					}
					if err := tx.Put("counters", []byte("moves"), storage.AppendInt64(nil, count+1)); err != nil {
						return err
					}
					return tx.Put("entries", fmt.Appendf(nil, "%d-%08d", w, n), fmt.Appendf(nil, "%d>%d:%d", from, to, amount))
				})
				if err != nil {
					errs <- err
					return
				}
				moves.Add(1)
			}
		}()
	}
	for range 5 {
		for start := moves.Load(); moves.Load() < start+500 && len(errs) == 0; {
			time.Sleep(time.Millisecond)
		}
		var buf bytes.Buffer
		if _, err := snapshot.Write(ctx, db, &buf); err != nil {
			t.Fatalf("Write: %v", err)
		}
		back := memory.New()
		mustRead(t, buf.Bytes(), back)
		checkBooks(t, back)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("writer: %v", err)
	}
	checkBooks(t, db)
}

// checkBooks checks testConsistent's invariants on db.
func checkBooks(t *testing.T, db storage.Backend) {
	t.Helper()
	var total, entries, count int64
	for _, p := range dump(t, db) {
		switch p.B {
		case "balances":
			total += int64(binary.BigEndian.Uint64([]byte(p.V)))
		case "entries":
			entries++
		case "counters":
			count = int64(binary.BigEndian.Uint64([]byte(p.V)))
		}
	}
	if total != accounts*funding || entries != count {
		t.Errorf("a snapshot holds %d in balances (want %d) and %d entries for %d moves", total, accounts*funding, entries, count)
	} else {
		t.Logf("consistent: %d moves", count)
	}
}

// TestEmptyClear: Empty tells an empty store, and Clear empties a store
// whose buckets hold more keys than one of its Updates deletes, on every
// backend (PostgreSQL when installed).
func TestEmptyClear(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(t *testing.T) storage.Backend
	}{
		{"Memory", func(t *testing.T) storage.Backend { return memory.New() }},
		{"Bolt", func(t *testing.T) storage.Backend { return mustBolt(t, nil) }},
		{"Postgres", func(t *testing.T) storage.Backend {
			db, err := postgres.Open(ctx, pgtest.DSN(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			if empty, err := snapshot.Empty(ctx, db); !empty || err != nil {
				t.Fatalf("Empty of a new store = %v, %v", empty, err)
			}
			fill(t, db, 3, 5_000)
			// More keys in one bucket than one Update of Clear deletes.
			err := db.Update(ctx, func(tx storage.Tx) error {
				for i := range 25_000 {
					if err := tx.Put("one.big", binary.BigEndian.AppendUint32(nil, uint32(i)), nil); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			n := int64(len(dump(t, db)))
			if empty, err := snapshot.Empty(ctx, db); empty || err != nil {
				t.Fatalf("Empty of a filled store = %v, %v", empty, err)
			}
			deleted, err := snapshot.Clear(ctx, db)
			if err != nil || deleted != n {
				t.Fatalf("Clear = %d, %v; want %d", deleted, err, n)
			}
			if empty, err := snapshot.Empty(ctx, db); !empty || err != nil {
				t.Fatalf("Empty after Clear = %v, %v", empty, err)
			}
		})
	}
}

// failAfter fails every write once n bytes went through.
type failAfter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errDisk
	}
	f.n -= len(p)
	return len(p), nil
}

// TestWriteFails: Write returns the writer's error and a done context's,
// leaving no trailer, so what it wrote is refused.
func TestWriteFails(t *testing.T) {
	db := memory.New()
	fill(t, db, 4, 5_000)
	for _, n := range []int{0, 5, 100, 200_000} {
		if _, err := snapshot.Write(context.Background(), db, &failAfter{n}); !errors.Is(err, errDisk) {
			t.Errorf("Write failing after %d bytes = %v, want %v", n, err, errDisk)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := snapshot.Write(ctx, db, io.Discard); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a done context = %v", err)
	}
	// Cancelled part way: what was written is refused.
	ctx, cancel = context.WithCancel(context.Background())
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) {
		if buf.Len() > 100_000 {
			cancel()
		}
		return buf.Write(p)
	})
	if _, err := snapshot.Write(ctx, db, w); !errors.Is(err, context.Canceled) {
		t.Errorf("Write cancelled part way = %v", err)
	}
	if _, err := snapshot.Verify(context.Background(), &buf); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Errorf("Verify of a cancelled Write's output = %v, want ErrCorrupt", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// FuzzScan: no input panics a reader, and one it accepts reads back the
// same through Read.
func FuzzScan(f *testing.F) {
	snap := small(f)
	f.Add(snap)
	f.Add(snap[:len(snap)/2])
	f.Add([]byte("\x89CBSNAP\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := snapshot.Verify(context.Background(), bytes.NewReader(data))
		if err != nil {
			return
		}
		into := memory.New()
		got, err := snapshot.Read(context.Background(), bytes.NewReader(data), into)
		if err != nil || got.Pairs != info.Pairs {
			t.Fatalf("Verify took it, Read = %+v, %v", got, err)
		}
	})
}

// benchStore is a store of 200,000 pairs of ~100-byte values for the
// benchmarks, built once per backend.
func benchStore(b *testing.B, db storage.Backend) {
	b.Helper()
	fill(b, db, 5, 200_000)
}

// BenchmarkWrite measures Write of a 200,000-pair store (b.SetBytes: the
// snapshot's size) from memory and from bolt.
func BenchmarkWrite(b *testing.B) {
	for _, tc := range []struct {
		name string
		open func(b *testing.B) storage.Backend
	}{
		{"Memory", func(b *testing.B) storage.Backend { return memory.New() }},
		{"Bolt", func(b *testing.B) storage.Backend { return mustBolt(b, nil) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db := tc.open(b)
			benchStore(b, db)
			b.ResetTimer()
			for b.Loop() {
				info, err := snapshot.Write(context.Background(), db, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(info.Size)
			}
		})
	}
}

// BenchmarkRead measures Verify of that store's snapshot, and Read of it
// into a new memory store, bolt file and PostgreSQL database (when
// installed) (b.SetBytes: the snapshot's size).
func BenchmarkRead(b *testing.B) {
	src := memory.New()
	benchStore(b, src)
	snap := mustWrite(b, src)
	for _, tc := range []struct {
		name string
		open func(b *testing.B) storage.Backend
	}{
		{"Verify", nil},
		{"Memory", func(b *testing.B) storage.Backend { return memory.New() }},
		{"Bolt", func(b *testing.B) storage.Backend { return mustBolt(b, nil) }},
		{"Postgres", func(b *testing.B) storage.Backend {
			db, err := postgres.Open(context.Background(), pgtest.DSN(b), nil)
			if err != nil {
				b.Fatal(err)
			}
			return db
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(snap)))
			for b.Loop() {
				if tc.open == nil {
					if _, err := snapshot.Verify(context.Background(), bytes.NewReader(snap)); err != nil {
						b.Fatal(err)
					}
					continue
				}
				b.StopTimer()
				into := tc.open(b)
				b.StartTimer()
				mustRead(b, snap, into)
				b.StopTimer()
				into.Close()
				b.StartTimer()
			}
		})
	}
}
