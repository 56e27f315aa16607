package httpapi_test

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"go.etcd.io/bbolt"
)

// footprintN is how many operations each BenchmarkFootprint case runs:
// COREBANK_FOOTPRINT_N, or 2,000 so that the benchmark stays well under a
// minute. The file target is read at 100,000:
//
//	COREBANK_FOOTPRINT_N=100000 go test -bench Footprint -run '^$' -timeout 1h ./httpapi
func footprintN(b *testing.B) int {
	s := os.Getenv("COREBANK_FOOTPRINT_N")
	if s == "" {
		return 2_000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("COREBANK_FOOTPRINT_N=%q: want a positive integer", s)
	}
	return n
}

// footprintRound is how many operations run between two settlements (a
// clock advance and a webhook drain), so that the work a batch shares (the
// outbox cursor, due-queue scans) is spread as a steady load spreads it.
const footprintRound = 100

// writeCount is what committed transactions put into one bucket.
type writeCount struct {
	keys, bytes int64 // Put calls; len(key)+len(value)
	rewrites    int64 // Puts to a key this measurement already put
	deletes     int64 // Delete calls
}

// countingDB is a storage.Backend that counts, per bucket, the Puts and
// Deletes of committed Updates, those of the run that committed only
// (recordUpdate), between start and stop.
type countingDB struct {
	storage.Backend
	mu     sync.Mutex
	on     bool
	counts map[storage.Bucket]*writeCount
	seen   map[uint64]struct{} // hashes of bucket NUL key, since start
	seed   maphash.Seed
}

// start zeroes the counts and starts counting.
func (c *countingDB) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = true
	c.counts = map[storage.Bucket]*writeCount{}
	c.seen = map[uint64]struct{}{}
	c.seed = maphash.MakeSeed()
}

// stop ends counting and returns the counts since start.
func (c *countingDB) stop() map[storage.Bucket]*writeCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	return c.counts
}

func (c *countingDB) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return recordUpdate(ctx, c.Backend, fn, c.add)
}

// add counts the writes of one committed Update.
func (c *countingDB) add(ws []write) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return
	}
	for _, p := range ws {
		w := c.counts[p.b]
		if w == nil {
			w = &writeCount{}
			c.counts[p.b] = w
		}
		if p.deleted {
			w.deletes++
			continue
		}
		w.keys++
		w.bytes += int64(len(p.key) + p.valueLen)
		k := maphash.String(c.seed, string(p.b)+"\x00"+p.key) // 100,000 transfers put 4.6M keys
		if _, ok := c.seen[k]; ok {
			w.rewrites++
		}
		c.seen[k] = struct{}{}
	}
}

// footprintCase is one kind of operation: setup returns the function that
// sends the i-th request and returns its resource's path, settle runs the
// due work that finishes a round of them, and final, when set, is the
// status the last one must have reached by the end.
type footprintCase struct {
	name   string
	unit   string // what the metrics count per: "transfer", "inflow"
	setup  func(e *env) func(i int) string
	settle func(e *env)
	final  string
}

// BenchmarkFootprint measures what one operation leaves in the store,
// events included: a book transfer, a payout (bank-transfer) and a sandbox
// inflow, each over HTTP through the whole handler stack on a bolt store,
// as BenchmarkTransfers builds it. Each case sends footprintN requests in
// rounds of footprintRound; after each round the clock advances 1 s and
// then 5 s (the sandbox rail's processing and settlement; a book transfer
// settles on the first due run) and the webhook service drains the
// outbox into its event log (no webhook is registered, so no deliveries).
// It reports, per transfer or inflow, the keys and bytes
// (len(key)+len(value)) of every Put of committed transactions from the
// first request to the last drain (keys/transfer, bytes/transfer), and,
// after the store is closed (the overlay folded into the bbolt file), the
// bbolt file's size and bbolt's high water mark divided by N
// (file_bytes/transfer, used_bytes/transfer; both include the small
// setup, and the file grows ahead of its data), and the keys and bytes
// the file holds divided by N (live_keys/transfer, live_bytes/transfer:
// what stays once rewrites and deletes are done; the setup's few objects
// included). The bucket table (b.Log)
// shows who writes what, rewrites the Puts to a key already written in
// the run (a record written at creation and again at settlement). The
// work is bounded: each case runs its N operations once per process
// whatever b.N is, so ns/op is suppressed; read the metrics.
func BenchmarkFootprint(b *testing.B) {
	settlePayments := func(e *env) {
		e.advance(1)
		e.advance(5)
		if _, err := e.wh.Drain(context.Background()); err != nil {
			e.t.Fatal(err)
		}
	}
	cases := []footprintCase{
		{name: "book-transfer", unit: "transfer", settle: settlePayments, final: "successful", setup: func(e *env) func(int) string {
			from := e.account(e.key, "", "USD")
			e.fund(e.key, from, 1<<50)
			to := e.account(e.key, "", "USD")
			ban := e.must(200, "GET", "/accounts/"+to, e.key, nil).str("data", "service_ban")
			cp := e.counterparty(e.key, "", "Book", "Payee")
			pd := e.must(201, "POST", "/payment-details", e.key, map[string]any{"counterparty_id": cp,
				"payment_method": "book-transfer", "currency": "USD", "account_holder_name": "Book Payee",
				"account_number": ban}).str("id")
			return func(i int) string {
				ref := "book-" + strconv.Itoa(i)
				return "/transfers/" + e.must(201, "POST", "/transfers", e.key,
					with2(transferBody(from, pd, ref, 1), "payment_type", "book-transfer")).str("data", "id")
			}
		}},
		{name: "payout", unit: "transfer", settle: settlePayments, final: "successful", setup: func(e *env) func(int) string {
			from := e.account(e.key, "", "USD")
			e.fund(e.key, from, 1<<50)
			pd := e.achDetail(e.key, e.counterparty(e.key, "", "Bench", "Payee"))
			return func(i int) string {
				return "/transfers/" + e.must(201, "POST", "/transfers", e.key,
					transferBody(from, pd, "pay-"+strconv.Itoa(i), 1)).str("data", "id")
			}
		}},
		{name: "inflow", unit: "inflow", settle: settlePayments, setup: func(e *env) func(int) string {
			to := e.account(e.key, "", "USD")
			return func(int) string {
				e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": to, "amount": 1, "narration": "bench"})
				return ""
			}
		}},
	}
	for _, fc := range cases {
		b.Run(fc.name, func(b *testing.B) {
			r := footprintOnce(b, fc)
			per := func(v int64) float64 { return float64(v) / float64(r.n) }
			b.ReportMetric(0, "ns/op") // meaningless: the work does not depend on b.N
			b.ReportMetric(per(r.total.keys), "keys/"+fc.unit)
			b.ReportMetric(per(r.total.bytes), "bytes/"+fc.unit)
			b.ReportMetric(per(r.file), "file_bytes/"+fc.unit)
			b.ReportMetric(per(r.used), "used_bytes/"+fc.unit)
			b.ReportMetric(per(r.live.keys), "live_keys/"+fc.unit)
			b.ReportMetric(per(r.live.bytes), "live_bytes/"+fc.unit)
		})
	}
}

// footprint is what one BenchmarkFootprint case measured.
type footprint struct {
	n          int
	counts     map[storage.Bucket]*writeCount
	total      writeCount
	file, used int64
	live       writeCount // keys and bytes in the closed file (setup included)
}

// footprints keeps each case's measurement: the framework calls a
// benchmark function again with a larger b.N when a call took under
// -benchtime, and a case's work does not depend on b.N, so it runs once
// per process and later calls only report it.
var footprints struct {
	sync.Mutex
	byName map[string]*footprint
}

// footprintOnce runs fc once per process (logging its bucket table) and
// returns the measurement.
func footprintOnce(b *testing.B, fc footprintCase) *footprint {
	footprints.Lock()
	defer footprints.Unlock()
	if r := footprints.byName[fc.name]; r != nil {
		return r
	}
	r := &footprint{n: footprintN(b)}
	path := filepath.Join(b.TempDir(), "db")
	db, err := bolt.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	cdb := &countingDB{Backend: db}
	e := newEnvDB(b, cdb)
	send := fc.setup(e)
	fc.settle(e) // setup's own due work and events, not counted
	cdb.start()
	var last string
	for i := 1; i <= r.n; i++ {
		last = send(i)
		if i%footprintRound == 0 || i == r.n {
			fc.settle(e)
		}
	}
	r.counts = cdb.stop()
	if fc.final != "" {
		if got := e.must(200, "GET", last, e.key, nil).str("data", "status"); got != fc.final {
			b.Fatalf("%s: status %q, want %q", last, got, fc.final)
		}
	}
	if err := cdb.Close(); err != nil { // folds the overlay into the bbolt file
		b.Fatal(err)
	}
	r.file, r.used, r.live = boltSize(b, path)
	for _, w := range r.counts {
		r.total.keys += w.keys
		r.total.bytes += w.bytes
		r.total.rewrites += w.rewrites
		r.total.deletes += w.deletes
	}
	b.Log(r.table(fc.name, footprintTopRows))
	if testing.Verbose() { // the whole table, which b.Log would cut
		fmt.Println(r.table(fc.name, len(r.counts)))
	}
	if footprints.byName == nil {
		footprints.byName = map[string]*footprint{}
	}
	footprints.byName[fc.name] = r
	return r
}

// boltSize returns the size of the closed bbolt file at path, bbolt's
// high water mark (the pages in use up to the last one, free pages
// included), and the keys and bytes (len(key)+len(value)) it holds.
func boltSize(b *testing.B, path string) (file, used int64, live writeCount) {
	b.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bbolt.Tx) error {
		used = tx.Size()
		return tx.ForEach(func(_ []byte, bk *bbolt.Bucket) error {
			return bk.ForEach(func(k, v []byte) error {
				live.keys++
				live.bytes += int64(len(k) + len(v))
				return nil
			})
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size(), used, live
}

// footprintTopRows is how many buckets the logged table lists one by one:
// the testing package keeps only the first ten lines of a benchmark's log.
// With -v the whole table is printed too.
const footprintTopRows = 5

// table is the case's per-operation summary and its top writers by bytes,
// the other buckets summed on one line with those they rewrite.
func (r *footprint) table(name string, top int) string {
	buckets := make([]storage.Bucket, 0, len(r.counts))
	for bk := range r.counts {
		buckets = append(buckets, bk)
	}
	slices.SortFunc(buckets, func(x, y storage.Bucket) int {
		return cmp.Or(cmp.Compare(r.counts[y].bytes, r.counts[x].bytes), cmp.Compare(x, y))
	})
	per := func(v int64) float64 { return float64(v) / float64(r.n) }
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, %d operations, per operation: %.2f keys, %.0f bytes of keys and values, "+
		"%.2f rewrites, %.2f deletes; bbolt file %.0f bytes, high water mark %.0f bytes\n",
		name, r.n, per(r.total.keys), per(r.total.bytes), per(r.total.rewrites), per(r.total.deletes), per(r.file), per(r.used))
	fmt.Fprintf(&sb, "%-26s %6s %8s %8s %8s", "bucket", "keys", "bytes", "rewrites", "deletes")
	var rest writeCount
	var rewritten []string
	for i, bk := range buckets {
		w := r.counts[bk]
		if i < top {
			fmt.Fprintf(&sb, "\n%-26s %6.2f %8.1f %8.2f %8.2f", bk, per(w.keys), per(w.bytes), per(w.rewrites), per(w.deletes))
			continue
		}
		rest.keys += w.keys
		rest.bytes += w.bytes
		rest.rewrites += w.rewrites
		rest.deletes += w.deletes
		if w.rewrites > 0 {
			rewritten = append(rewritten, fmt.Sprintf("%s %.2f", bk, per(w.rewrites)))
		}
	}
	if len(buckets) > top {
		fmt.Fprintf(&sb, "\n%-26s %6.2f %8.1f %8.2f %8.2f", fmt.Sprintf("%d others", len(buckets)-top),
			per(rest.keys), per(rest.bytes), per(rest.rewrites), per(rest.deletes))
		if len(rewritten) > 0 {
			fmt.Fprintf(&sb, "\nrewritten among the others: %s", strings.Join(rewritten, ", "))
		}
	}
	return sb.String()
}
