package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

var (
	pgbenchDuration = flag.Duration("pgbench.duration", 0, "TestPostgresThroughput: how long each pgbench run and each HTTP load runs (whole seconds; 0 skips the test; 15s is the figure to quote)")
	pgbenchDelay    = flag.Duration("pgbench.delay", 500*time.Microsecond, "TestPostgresThroughput: latency the proxy adds in each direction between the proxied runs and PostgreSQL (a round trip gains twice this)")
)

// TestPostgresThroughput measures POST /transfers through the server on
// PostgreSQL beside pgbench on the same cluster, in one run, with and
// without network latency between them and the database:
//
//	go test ./examples/server -run '^TestPostgresThroughput$' -pgbench.duration=15s -pgbench.delay=500us -v -timeout 30m
//
// The latency comes from pgtest.Proxy, a TCP proxy in the test process
// that delays each direction by -pgbench.delay (so 500µs gives a 1 ms
// round trip, as between hosts), without limiting throughput; "proxied"
// runs connect through it, "direct" ones to the cluster's socket. The
// test first logs the median SELECT 1 round trip both ways, the latency
// the runs actually got.
//
// pgbench initializes its tables and runs its TPC-B-like script with 64
// clients (-j 2), directly and through the proxy, and directly again
// after the servers' steps, with every server stopped: pgbench's rate on
// a small machine moves from run to run (511 and 915 tps in two runs
// of one day), and the ratio of the server's to it takes the mean of the
// two direct runs. A CHECKPOINT precedes every run and step. Then servers on one
// fresh database take 1-cent book transfers between funded accounts, one
// HTTP client per pair of accounts, each request with its own
// Idempotency-Key, client i sending to node i%nodes: one server direct
// with 64 clients; then, through the proxy, 1, 2 and 4 servers with 16 and
// with 64 clients (the direct server stops first, or its due ticks would
// settle proxied transfers; the nodes are added as the steps need them,
// with the same flags and key file, so every running node takes load,
// and every one runs due work). Each load
// runs for the duration, and then the test waits, up to drainCap, until
// every accepted transfer is settled (the sandbox provider settles a
// transfer 5 s after its creation, so settled/s trails ack/s by that much
// on a short load) before the next step starts.
//
// A book transfer credits its receiver only when it settles, so the
// destination accounts' balances count the settled transfers: the test
// reads every account (GET /accounts, two pages) at the load's end and
// every 100 ms after it. For each step it logs acknowledged transfers per
// second of load (ack/s); settled/s, the accepted transfers over the time
// from the load's start until the last of them settled; how many were
// still pending when the load ended; the p50 and p99 latency of POST
// /transfers; the median SELECT 1 round trip during the load, on the
// step's own path to the database (direct or through the proxy), from a
// connection that pings every 20 ms; PostgreSQL commits and retries per
// transfer and round trips per settled transfer, from the servers' -metrics-addr
// (corebank_postgres_*_total, scraped before the load and after the
// drain, so they include the settlements, the nodes' idle due ticks and
// the test's balance reads); and whether the money adds up: each source
// holds its funding less one cent per transfer it was answered 201 for,
// and after the drain each destination holds one cent per such transfer.
// Then it logs the ratios: proxied over direct settled/s, 2 nodes over 1
// and 4 over 2, server ack/s over pgbench's tps, settled/s over ack/s.
// They are not asserted: this is a benchmark. Every transfer must be
// answered 201, and the money must add up.
func TestPostgresThroughput(t *testing.T) {
	d := pgbenchDuration.Round(time.Second)
	if d <= 0 {
		t.Skip("a benchmark: give -pgbench.duration=15s to run it")
	}
	delay := *pgbenchDelay
	secs := strconv.Itoa(int(d.Seconds()))

	bench := pgtest.DSN(t)
	benchProxied := pgtest.Proxy(t, bench, delay)
	pgbench := func(dsn string, args ...string) []byte {
		t.Helper()
		out, err := pgtest.Command(t, "pgbench", append(args, dsn)...).CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	rttDirect, rttProxied := roundTrip(t, bench), roundTrip(t, benchProxied)
	pgbench(bench, "-i", "-q")
	var pgRows []pgbenchRow
	runPgbench := func(name, dsn string) {
		checkpoint(t, bench)
		row := pgbenchParse(t, pgbench(dsn, "-c", "64", "-j", "2", "-T", secs))
		row.name = name
		pgRows = append(pgRows, row)
	}
	runPgbench("pgbench -c 64 -j 2, direct", bench)
	runPgbench("pgbench -c 64 -j 2, proxied", benchProxied)

	dsn := pgtest.DSN(t)
	proxied := pgtest.Proxy(t, dsn, delay)
	bin := buildServer(t)
	dir := t.TempDir()
	bootPath := filepath.Join(dir, "bootstrap.json")
	args := func(db string) []string {
		return []string{"-db", db, "-secret-key-file", filepath.Join(dir, "secret.key"), "-metrics-addr", "127.0.0.1:0"}
	}
	var procs []*proc
	defer func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("server %d's log:\n%s", i, p.logs)
			}
		}
	}()
	start := func(db string, extra ...string) *proc {
		p := startServer(t, bin, append(args(db), extra...)...)
		if p.metrics == "" {
			t.Fatalf("the server printed no metrics address\n%s", p.logs)
		}
		procs = append(procs, p)
		return p
	}
	direct := start(dsn, "-bootstrap-out", bootPath)
	key, _ := readBootstrap(t, bootPath)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 64}}
	b := &benchRun{t: t, hc: hc, key: key, d: d, cluster: bench}
	b.pairs = fundedPairs(t, b.client(direct), 64)
	b.sent = make([]int64, len(b.pairs))

	var rows []benchRow
	rows = append(rows, b.step("direct, 1 node, 64 clients", dsn, []*proc{direct}, 64))
	stop(t, direct) // its due ticks would settle the proxied steps' transfers without the latency
	nodes := []*proc{start(proxied)}
	rows = append(rows, b.step("proxied, 1 node, 16 clients", proxied, nodes, 16))
	rows = append(rows, b.step("proxied, 1 node, 64 clients", proxied, nodes, 64))
	nodes = append(nodes, start(proxied))
	rows = append(rows, b.step("proxied, 2 nodes, 16 clients", proxied, nodes, 16))
	rows = append(rows, b.step("proxied, 2 nodes, 64 clients", proxied, nodes, 64))
	nodes = append(nodes, start(proxied), start(proxied))
	rows = append(rows, b.step("proxied, 4 nodes, 16 clients", proxied, nodes, 16))
	rows = append(rows, b.step("proxied, 4 nodes, 64 clients", proxied, nodes, 64))
	for _, p := range nodes {
		stop(t, p)
	}
	runPgbench("pgbench -c 64 -j 2, direct, again", bench)

	var sb strings.Builder
	fmt.Fprintf(&sb, "each load %s; proxy delay %v each way (round trip +%v); %d-core machine\n", d, delay, 2*delay, runtime.NumCPU())
	fmt.Fprintf(&sb, "SELECT 1 round trip, median of %d before the loads: direct %s, proxied %s\n\n", roundTrips, us(rttDirect), us(rttProxied))
	fmt.Fprintf(&sb, "%-34s %8s %12s\n", "pgbench", "tps", "latency avg")
	for _, r := range pgRows {
		fmt.Fprintf(&sb, "%-34s %8.0f %9.2f ms\n", r.name, r.tps, r.latency)
	}
	fmt.Fprintf(&sb, "\n%-30s %7s %9s %8s %7s %8s %8s %9s %9s %9s %8s  %s\n", "corebank step", "ack/s", "settled/s", "pending",
		"drain", "p50", "p99", "commits", "retries", "trips", "SELECT 1", "money")
	fmt.Fprintf(&sb, "%-30s %7s %9s %8s %7s %8s %8s %9s %9s %9s %8s\n", "", "", "", "at end", "", "", "", "/transfer", "/transfer", "/settled", "p50")
	for _, r := range rows {
		settled, drain, trips := "-", "-", "-"
		if r.settledPerSec > 0 {
			settled, drain = fmt.Sprintf("%.0f", r.settledPerSec), fmt.Sprintf("%.1fs", r.drain.Seconds())
		}
		if r.settled > 0 {
			trips = fmt.Sprintf("%.1f", r.trips/float64(r.settled))
		}
		fmt.Fprintf(&sb, "%-30s %7.0f %9s %8d %7s %8s %8s %9.2f %9.3f %9s %8s  %s\n", r.name, r.ackPerSec, settled, r.pendingAtEnd,
			drain, ms(r.p50), ms(r.p99), r.perTransfer(r.commits), r.perTransfer(r.retries), trips, ms(r.rtt), r.money)
	}
	ratio := func(a, b float64) string {
		if a <= 0 || b <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	dr, p1, p2, p4 := rows[0], rows[2], rows[4], rows[6]
	fmt.Fprintf(&sb, "\nproxied ÷ direct, 1 node, 64 clients, settled/s:  %s (ack/s %s)\n", ratio(p1.settledPerSec, dr.settledPerSec), ratio(p1.ackPerSec, dr.ackPerSec))
	fmt.Fprintf(&sb, "2 nodes ÷ 1 node, proxied, 64 clients, settled/s: %s (ack/s %s)\n", ratio(p2.settledPerSec, p1.settledPerSec), ratio(p2.ackPerSec, p1.ackPerSec))
	fmt.Fprintf(&sb, "4 nodes ÷ 2 nodes, proxied, 64 clients, settled/s: %s (ack/s %s)\n", ratio(p4.settledPerSec, p2.settledPerSec), ratio(p4.ackPerSec, p2.ackPerSec))
	pgDirect := (pgRows[0].tps + pgRows[2].tps) / 2
	fmt.Fprintf(&sb, "direct 1-node ack/s ÷ pgbench -c 64 direct tps:    %s (the mean of the two direct runs; %s and %s of each)\n",
		ratio(dr.ackPerSec, pgDirect), ratio(dr.ackPerSec, pgRows[0].tps), ratio(dr.ackPerSec, pgRows[2].tps))
	fmt.Fprintf(&sb, "direct settled/s ÷ ack/s:                          %s\n", ratio(dr.settledPerSec, dr.ackPerSec))
	t.Log("\n" + sb.String())
}

// drainCap is how long a step waits after its load for the transfers to
// settle before it reports them not settled and moves on.
const drainCap = 120 * time.Second

// pairFunding is what fundedPairs pays into each source account, in cents.
const pairFunding = 1_000_000_000

// benchRun is TestPostgresThroughput's corebank side: the funded pairs
// every step shares, and how many transfers each pair's source was
// answered 201 for over all steps so far.
type benchRun struct {
	t   *testing.T
	hc  *http.Client
	key string
	d   time.Duration
	// cluster is a DSN on the cluster, for the CHECKPOINT before each
	// step's load.
	cluster string
	pairs   []transferPair
	sent    []int64 // by pair, over all steps
	steps   int
}

func (b *benchRun) client(p *proc) *client {
	return &client{base: "http://" + p.addr, key: b.key, http: b.hc}
}

// benchRow is one corebank step's line of the table.
type benchRow struct {
	name                    string
	accepted                int64
	settled                 int64 // of the accepted, by the end of the drain
	ackPerSec               float64
	settledPerSec           float64 // 0: not settled within drainCap
	pendingAtEnd            int64
	drain                   time.Duration // from the load's end until all settled
	p50, p99                time.Duration
	rtt                     time.Duration // median SELECT 1 during the load, on the step's path to the database
	commits, retries, trips float64       // deltas over the servers
	money                   string
}

func (r benchRow) perTransfer(v float64) float64 {
	if r.accepted == 0 {
		return 0
	}
	return v / float64(r.accepted)
}

// step runs one load of clients HTTP clients over nodes for b.d, then
// waits for its transfers to settle, and checks the money.
func (b *benchRun) step(name, db string, nodes []*proc, clients int) benchRow {
	t := b.t
	t.Helper()
	b.steps++
	run := fmt.Sprintf("s%d", b.steps)
	row := benchRow{name: name}
	checkpoint(t, b.cluster)
	before := b.pgStats(nodes)

	cs := make([]*client, len(nodes))
	for i, p := range nodes {
		cs[i] = b.client(p)
	}
	var (
		failed atomic.Int64
		wg     sync.WaitGroup
		lat    = make([][]time.Duration, clients)
		sent   = make([]int64, clients)
	)
	start := time.Now()
	deadline := start.Add(b.d)
	rtt := pingUntil(t, db, deadline)
	for i := range clients {
		p, c := b.pairs[i], cs[i%len(cs)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				ref := fmt.Sprintf("%s-%d-%d", run, i, n)
				t0 := time.Now()
				a, err := c.send("POST", "/transfers", ref, map[string]any{"account_id": p.from, "payment_detail_id": p.detail,
					"amount": 1, "currency": "USD", "payment_type": "book-transfer", "narration": "bench", "unique_reference": ref})
				took := time.Since(t0)
				if err != nil || a.status != 201 {
					if failed.Add(1) <= 5 {
						t.Errorf("%s: POST /transfers = %d %v %v", name, a.status, a.body, err)
					}
					continue
				}
				lat[i] = append(lat[i], took)
				sent[i]++
			}
		}()
	}
	wg.Wait()
	end := time.Now()
	row.rtt = <-rtt
	for i, n := range sent {
		b.sent[i] += n
		row.accepted += n
	}
	row.ackPerSec = float64(row.accepted) / end.Sub(start).Seconds()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) > 0 {
		row.p50, row.p99 = all[len(all)/2], all[min(len(all)-1, len(all)*99/100)]
	}

	// Poll every account until the destinations hold every transfer.
	reader := cs[0]
	var want int64
	for _, n := range b.sent {
		want += n
	}
	var bals map[string]accountBalance
	for first := true; ; first = false {
		var err error
		if bals, err = readBalances(reader); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var settled int64
		for _, p := range b.pairs {
			settled += bals[p.to].current
		}
		now := time.Now()
		if first {
			row.pendingAtEnd = want - settled
		}
		row.settled = max(0, row.accepted-(want-settled))
		if settled >= want {
			row.drain = now.Sub(end)
			row.settledPerSec = float64(row.accepted) / now.Sub(start).Seconds()
			break
		}
		if now.Sub(end) > drainCap {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	after := b.pgStats(nodes)
	row.commits = after.commits - before.commits
	row.retries = after.retries - before.retries
	row.trips = after.trips - before.trips
	row.money = b.money(bals, row.settledPerSec > 0)
	return row
}

// money checks the balances against the transfers answered 201: each
// source holds its funding less one cent per transfer, pending or not;
// each destination (once settled) one cent per transfer. It returns "ok"
// or "not settled", or fails the test.
func (b *benchRun) money(bals map[string]accountBalance, settled bool) string {
	var sum, want int64
	for i, p := range b.pairs {
		src, dst := bals[p.from], bals[p.to]
		sum += src.current + dst.current
		want += pairFunding
		if src.current != pairFunding-b.sent[i] || src.available != src.current {
			b.t.Errorf("source %s holds current %d, available %d; want %d after %d transfers answered 201",
				p.from, src.current, src.available, pairFunding-b.sent[i], b.sent[i])
			return "WRONG"
		}
		if settled && (dst.current != b.sent[i] || dst.available != dst.current) {
			b.t.Errorf("destination %s holds current %d, available %d; want %d", p.to, dst.current, dst.available, b.sent[i])
			return "WRONG"
		}
	}
	if !settled {
		return fmt.Sprintf("not settled (%d in flight)", want-sum)
	}
	if sum != want {
		b.t.Errorf("the pairs hold %d, want the %d they were funded with", sum, want)
		return "WRONG"
	}
	return "ok"
}

// pgCounters are the corebank_postgres_*_total counters summed over
// servers.
type pgCounters struct{ commits, retries, trips float64 }

func (b *benchRun) pgStats(nodes []*proc) pgCounters {
	b.t.Helper()
	var s pgCounters
	for _, p := range nodes {
		m, err := scrapeMetrics(b.hc, p.metrics)
		if err != nil {
			b.t.Fatalf("scrape %s: %v", p.metrics, err)
		}
		s.commits += m["corebank_postgres_commits_total"]
		s.retries += m["corebank_postgres_retries_total"]
		s.trips += m["corebank_postgres_round_trips_total"]
	}
	return s
}

// scrapeMetrics reads the metrics on addr: each sample line's series ->
// value.
func scrapeMetrics(hc *http.Client, addr string) (map[string]float64, error) {
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		series, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(series, "#") {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[series] = f
		}
	}
	return out, sc.Err()
}

type accountBalance struct{ current, available int64 }

// readBalances reads every account c's key sees, page by page, by ID.
func readBalances(c *client) (map[string]accountBalance, error) {
	out := map[string]accountBalance{}
	cursor := ""
	for {
		path := "/accounts?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		a, err := c.send("GET", path, "", nil)
		if err != nil || a.status != 200 {
			return nil, fmt.Errorf("GET %s = %d %v %v", path, a.status, a.body, err)
		}
		data, _ := a.body["data"].([]any)
		for _, v := range data {
			acct, _ := v.(map[string]any)
			bal, _ := acct["balance"].(map[string]any)
			id, _ := acct["id"].(string)
			cur, ok1 := bal["current"].(float64)
			avail, ok2 := bal["available"].(float64)
			if id == "" || !ok1 || !ok2 {
				return nil, fmt.Errorf("GET %s: an account without id or balance: %v", path, v)
			}
			out[id] = accountBalance{current: int64(cur), available: int64(avail)}
		}
		meta, _ := a.body["meta"].(map[string]any)
		pg, _ := meta["pagination"].(map[string]any)
		next, _ := pg["next_cursor"].(string)
		if more, _ := pg["has_next"].(bool); !more || next == "" {
			return out, nil
		}
		cursor = next
	}
}

// roundTrips is how many times roundTrip runs SELECT 1.
const roundTrips = 200

// roundTrip returns the median time of SELECT 1 on dsn, one at a time:
// what a round trip to PostgreSQL costs, through the proxy or not.
func roundTrip(t *testing.T, dsn string) time.Duration {
	t.Helper()
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	d, err := medianSelectOne(conn, func(n int) bool { return n < roundTrips }, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// medianSelectOne runs SELECT 1 on conn, one at a time with pause between,
// while more(n) holds for the n run so far, and returns their median time
// (0 for none).
func medianSelectOne(conn *pgx.Conn, more func(n int) bool, pause time.Duration) (time.Duration, error) {
	var took []time.Duration
	for more(len(took)) {
		start := time.Now()
		if _, err := conn.Exec(context.Background(), "SELECT 1"); err != nil {
			return 0, err
		}
		took = append(took, time.Since(start))
		time.Sleep(pause)
	}
	if len(took) == 0 {
		return 0, nil
	}
	slices.Sort(took)
	return took[len(took)/2], nil
}

// connect opens a connection to dsn, failing t if it cannot.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// pingUntil runs SELECT 1 on dsn every 20 ms until deadline, on a
// connection of its own, and sends the median round trip: the latency a
// load's statements met, which on a busy machine is well above an idle
// one's (the proxy's writers and PostgreSQL's backends wait for a core).
func pingUntil(t *testing.T, dsn string, deadline time.Time) <-chan time.Duration {
	out := make(chan time.Duration, 1)
	go func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			out <- 0
			return
		}
		defer conn.Close(ctx)
		d, err := medianSelectOne(conn, func(int) bool { return time.Now().Before(deadline) }, 20*time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		out <- d
	}()
	return out
}

// checkpoint runs a CHECKPOINT on the cluster of dsn: every run then
// starts with no dirty pages of the one before to write out, and with a
// fresh checkpoint cycle (whose first write of each page is a full page
// in the WAL), as the other runs did.
func checkpoint(t *testing.T, dsn string) {
	t.Helper()
	conn := connect(t, dsn)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%dµs", d.Microseconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

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

// pgbenchRow is one pgbench run's line of the table.
type pgbenchRow struct {
	name         string
	tps, latency float64 // latency: the average, in ms
}

var (
	pgbenchTPSLine     = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	pgbenchLatencyLine = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
)

// pgbenchParse reads the tps and average latency lines of pgbench's
// report.
func pgbenchParse(t *testing.T, out []byte) pgbenchRow {
	t.Helper()
	var r pgbenchRow
	for _, f := range []struct {
		re *regexp.Regexp
		v  *float64
	}{{pgbenchTPSLine, &r.tps}, {pgbenchLatencyLine, &r.latency}} {
		m := f.re.FindSubmatch(out)
		if m == nil {
			t.Fatalf("no %q line in pgbench's output:\n%s", f.re, out)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		*f.v = v
	}
	return r
}

// transferPair is a funded account, a book-transfer payment detail that
// pays another account, and that account.
type transferPair struct{ from, detail, to string }

// fundedPairs makes n pairs of accounts, funds each pair's source with
// pairFunding and
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
		must("POST", "/sandbox/inflows", 201, map[string]any{"account_id": from, "amount": pairFunding, "narration": "seed"})
		ban := dataField(must("GET", "/accounts/"+to, 200, nil), "service_ban").(string)
		pd := dataField(must("POST", "/payment-details", 201, map[string]any{"counterparty_id": cp,
			"payment_method": "book-transfer", "currency": "USD", "account_holder_name": "Book Payee",
			"account_number": ban}), "id").(string)
		pairs[i] = transferPair{from: from, detail: pd, to: to}
	}
	return pairs
}
