package main_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

var pgbenchDuration = flag.Duration("pgbench.duration", 0, "TestPostgresThroughput: how long each pgbench run and each HTTP load runs (whole seconds; 0 skips the test)")

// TestPostgresThroughput sets POST /transfers through the server on
// PostgreSQL beside pgbench on the same cluster, in one run:
//
//	go test ./examples/server -run TestPostgresThroughput -pgbench.duration=10s -v
//
// pgbench initializes its tables and runs its default TPC-B-like script
// with 16 clients (-j 2) and with 1; then one server, on another database
// of the cluster, takes book transfers between funded accounts from 1 and
// from 16 HTTP clients, each request with its own Idempotency-Key; then a
// second server on the same database shares the 16 clients with it. Each
// load runs for the duration; the test logs a table of tps and each one's
// share of pgbench -c 16's tps (pgbench -c 16 runs again at the end, and
// the share is of the mean of its two runs, since other work on the
// machine moves both). Every transfer must be answered 201.
func TestPostgresThroughput(t *testing.T) {
	d := pgbenchDuration.Round(time.Second)
	if d <= 0 {
		t.Skip("a benchmark: give -pgbench.duration=10s to run it")
	}
	var rows []throughputRow
	bench := pgtest.DSN(t)
	pgbenchRun := func(args ...string) []byte {
		t.Helper()
		out, err := pgtest.Command(t, "pgbench", append(args, bench)...).CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	pgbench := func(args ...string) float64 { t.Helper(); return pgbenchTPS(t, pgbenchRun(args...)) }
	secs := strconv.Itoa(int(d.Seconds()))
	pgbenchRun("-i", "-q")
	pg16 := pgbench("-c", "16", "-j", "2", "-T", secs)
	rows = append(rows, throughputRow{"pgbench -c 16 -j 2", pg16})
	rows = append(rows, throughputRow{"pgbench -c 1", pgbench("-c", "1", "-T", secs)})

	dsn := pgtest.DSN(t)
	bin := buildServer(t)
	dir := t.TempDir()
	bootPath := filepath.Join(dir, "bootstrap.json")
	args := []string{"-db", dsn, "-secret-key-file", filepath.Join(dir, "secret.key")}
	p1 := startServer(t, bin, append(args, "-bootstrap-out", bootPath)...)
	key, _ := readBootstrap(t, bootPath)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	c1 := &client{base: "http://" + p1.addr, key: key, http: hc}
	pairs := fundedPairs(t, c1, 16)

	rows = append(rows, throughputRow{"server, 1 node, 1 client", driveTransfers(t, "n1c1", []*client{c1}, pairs[:1], d)})
	rows = append(rows, throughputRow{"server, 1 node, 16 clients", driveTransfers(t, "n1c16", []*client{c1}, pairs, d)})
	p2 := startServer(t, bin, args...)
	c2 := &client{base: "http://" + p2.addr, key: key, http: hc}
	rows = append(rows, throughputRow{"server, 2 nodes, 16 clients", driveTransfers(t, "n2c16", []*client{c1, c2}, pairs, d)})

	pg16b := pgbench("-c", "16", "-j", "2", "-T", secs)
	rows = append(rows, throughputRow{"pgbench -c 16 -j 2 (again)", pg16b})
	base := (pg16 + pg16b) / 2
	var b strings.Builder
	fmt.Fprintf(&b, "each run %s; share of pgbench -c 16 (mean of both runs, %.0f tps)\n", d, base)
	fmt.Fprintf(&b, "%-30s %10s %8s\n", "run", "tps", "share")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-30s %10.0f %7.0f%%\n", r.name, r.tps, 100*r.tps/base)
	}
	t.Log("\n" + b.String())
	if t.Failed() {
		t.Logf("server logs:\n%s\n%s", p1.logs, p2.logs)
	}
}

// readBootstrap returns the API key in the file -bootstrap-out wrote, and
// the file.
func readBootstrap(t *testing.T, path string) (string, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var boot struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(raw, &boot); err != nil || boot.APIKey == "" {
		t.Fatalf("bootstrap file %s: %v", raw, err)
	}
	return boot.APIKey, raw
}

type throughputRow struct {
	name string
	tps  float64
}

var pgbenchTPSLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// pgbenchTPS reads the tps line of pgbench's report.
func pgbenchTPS(t *testing.T, out []byte) float64 {
	t.Helper()
	m := pgbenchTPSLine.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no tps line in pgbench's output:\n%s", out)
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return tps
}

// transferPair is a funded account and a book-transfer payment detail
// that pays another account.
type transferPair struct{ from, detail string }

// fundedPairs makes n pairs of accounts, funds each pair's source and
// makes a book-transfer payment detail for its destination.
func fundedPairs(t *testing.T, c *client, n int) []transferPair {
	t.Helper()
	must := func(method, path string, want int, body any) map[string]any {
		t.Helper()
		status, res, err := c.do(method, path, body)
		if err != nil || status != want {
			t.Fatalf("%s %s = %d %v %v, want %d", method, path, status, res, err, want)
		}
		return res
	}
	cp := dataField(must("POST", "/counterparties", 201, map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Book", "last_name": "Payee", "relationship": "vendor", "email": "payee@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "country": "US"}}}), "id").(string)
	account := func(name string) string {
		return dataField(must("POST", "/accounts", 201, map[string]any{"type": "checking", "currency": "USD", "display_name": name}), "id").(string)
	}
	pairs := make([]transferPair, n)
	for i := range pairs {
		from, to := account(fmt.Sprintf("Source %d", i)), account(fmt.Sprintf("Destination %d", i))
		must("POST", "/sandbox/inflows", 201, map[string]any{"account_id": from, "amount": 1_000_000_000, "narration": "seed"})
		ban := dataField(must("GET", "/accounts/"+to, 200, nil), "service_ban").(string)
		pd := dataField(must("POST", "/payment-details", 201, map[string]any{"counterparty_id": cp,
			"payment_method": "book-transfer", "currency": "USD", "account_holder_name": "Book Payee",
			"account_number": ban}), "id").(string)
		pairs[i] = transferPair{from: from, detail: pd}
	}
	return pairs
}

// driveTransfers runs one HTTP client per pair for d, client i sending to
// nodes[i%len(nodes)], each a book transfer of 1 cent at a time with its
// own Idempotency-Key, and returns the transfers answered per second. Any
// answer but 201 fails t.
func driveTransfers(t *testing.T, run string, nodes []*client, pairs []transferPair, d time.Duration) float64 {
	t.Helper()
	var (
		done   atomic.Int64
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for i, p := range pairs {
		c := nodes[i%len(nodes)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				ref := fmt.Sprintf("%s-%d-%d", run, i, n)
				a, err := c.send("POST", "/transfers", ref, map[string]any{"account_id": p.from, "payment_detail_id": p.detail,
					"amount": 1, "currency": "USD", "payment_type": "book-transfer", "narration": "bench", "unique_reference": ref})
				if err != nil || a.status != 201 {
					if failed.Add(1) <= 5 {
						t.Errorf("%s: POST /transfers = %d %v %v", run, a.status, a.body, err)
					}
					continue
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}
