package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestPostgresOutage restarts PostgreSQL the way a crash does (pg_ctl
// stop -m immediate, then start, with crash recovery) while 8 writers
// post transfers through the server binary. Each writer sends each
// transfer with an Idempotency-Key and, on a 503, sends it again with the
// same key until it is acknowledged. While the database is away the API
// answers 503 unavailable with Retry-After and never 500, /readyz answers
// 503, and service comes back by itself: /readyz 200 and transfers
// acknowledged again, the payout runner taking them to successful. Every
// acknowledged transfer is there afterwards, and each account's balance
// is its funding less exactly one debit per transfer: a retry after a
// broken commit was answered from what had committed, never run twice.
func TestPostgresOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary, and restarts a PostgreSQL cluster")
	}
	t.Parallel()
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	bin := buildServer(t)
	dir := t.TempDir()
	bootPath := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, bin, "-db", dsn, "-secret-key-file", filepath.Join(dir, "secret.key"),
		"-bootstrap-out", bootPath, "-metrics-addr", "127.0.0.1:0")
	key, _ := readBootstrap(t, bootPath)
	hc := &http.Client{Timeout: 15 * time.Second}
	c := &client{base: "http://" + p.addr, key: key, http: hc}
	must := func(method, path string, want int, body any) map[string]any {
		t.Helper()
		status, res, err := c.do(method, path, body)
		if err != nil || status != want {
			t.Fatalf("%s %s = %d %v %v, want %d\n%s", method, path, status, res, err, want, p.logs)
		}
		return res
	}

	const writers, amount, funding = 8, 100, 100_000_000
	cp := dataField(must("POST", "/counterparties", 201, map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "vendor", "email": "ada@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "country": "US"}}}), "id").(string)
	pd := dataField(must("POST", "/payment-details", 201, map[string]any{"payment_method": "bank-transfer", "currency": "USD",
		"account_holder_name": "Ada Lovelace", "counterparty_id": cp, "country": "US", "scheme": "ach",
		"routing_number": "021000021", "account_number": "123456789", "account_type": "checking"}), "id").(string)
	accounts := make([]string, writers)
	for w := range accounts {
		accounts[w] = dataField(must("POST", "/accounts", 201, map[string]any{"type": "checking", "currency": "USD",
			"display_name": fmt.Sprintf("writer %d", w)}), "id").(string)
		must("POST", "/sandbox/inflows", 201, map[string]any{"account_id": accounts[w], "amount": funding, "narration": "seed"})
	}

	// The clock of the outage, in ns since start (0: not yet).
	start := time.Now()
	since := func() int64 { return int64(time.Since(start)) }
	var stoppedAt, startedAt, firstAckAfter atomic.Int64

	type tally struct {
		acked       []string // transfer IDs, in order
		unavailable int      // 503s
		replayed    int      // acknowledgements that replayed a commit whose answer was a 503
		bad         []string // anything but 201 and a well-formed 503
	}
	tallies := make([]tally, writers)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tl := &tallies[w]
			for i := 0; !stop.Load(); i++ {
				ref := fmt.Sprintf("w%d-%d", w, i)
				body := map[string]any{"account_id": accounts[w], "payment_detail_id": pd, "currency": "USD",
					"amount": amount, "payment_type": "bank-transfer", "narration": "outage", "unique_reference": ref}
				retried := false
				for {
					res, err := post(hc, c, "/transfers", ref, body)
					switch {
					case err != nil:
						tl.bad = append(tl.bad, fmt.Sprintf("%s: %v", ref, err))
					case res.status == http.StatusCreated:
						tl.acked = append(tl.acked, dataField(res.body, "id").(string))
						if retried && res.replayed {
							tl.replayed++
						}
						if stoppedAt.Load() != 0 && startedAt.Load() != 0 {
							firstAckAfter.CompareAndSwap(0, since())
						}
					case res.status == http.StatusServiceUnavailable && res.body["code"] == "unavailable" &&
						res.retryAfter >= 1 && res.retryAfter <= 5:
						tl.unavailable++
						retried = true
						time.Sleep(20 * time.Millisecond) // sooner than Retry-After: the test wants load
						continue
					default:
						tl.bad = append(tl.bad, fmt.Sprintf("%s: %d Retry-After %d %v", ref, res.status, res.retryAfter, res.body))
					}
					break
				}
			}
		}()
	}

	// /readyz every 50 ms: when it answered what.
	type probe struct {
		at     int64
		status int
	}
	var (
		probes  []probe
		probeMu sync.Mutex
		probing = make(chan struct{})
	)
	go func() {
		defer close(probing)
		for !stop.Load() {
			status := 0
			if resp, err := hc.Get(c.base + "/readyz"); err == nil {
				status = resp.StatusCode
				resp.Body.Close()
			}
			probeMu.Lock()
			probes = append(probes, probe{since(), status})
			probeMu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()

	time.Sleep(2 * time.Second)
	stoppedAt.Store(since())
	cl.Stop(t, "immediate")
	time.Sleep(2 * time.Second) // down: connections refused
	cl.Start(t)                 // crash recovery: 57P03 until it accepts connections
	startedAt.Store(since())
	deadline := time.Now().Add(60 * time.Second)
	for firstAckAfter.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // serving again
	stop.Store(true)
	wg.Wait()
	<-probing
	if firstAckAfter.Load() == 0 {
		t.Fatalf("no transfer was acknowledged within a minute of the database's return\n%s", p.logs)
	}

	var total tally
	for _, tl := range tallies {
		total.acked = append(total.acked, tl.acked...)
		total.unavailable += tl.unavailable
		total.replayed += tl.replayed
		total.bad = append(total.bad, tl.bad...)
	}
	ms := func(ns int64) time.Duration { return time.Duration(ns).Round(time.Millisecond) }
	var readyDown, readyBackAt int64
	for _, pr := range probes {
		if pr.at > stoppedAt.Load() && pr.status == http.StatusServiceUnavailable {
			readyDown++
		}
		if pr.at > startedAt.Load() && pr.status == http.StatusOK && readyBackAt == 0 {
			readyBackAt = pr.at
		}
	}
	t.Logf("%d transfers acknowledged; %d answers of 503 unavailable while the database was away; %d acknowledged as replays of a commit first answered 503",
		len(total.acked), total.unavailable, total.replayed)
	t.Logf("database stopped at %v, started (recovered) at %v: the API was out for %v (first acknowledgement after the stop at %v); /readyz 503 %d times, 200 again at %v",
		ms(stoppedAt.Load()), ms(startedAt.Load()), ms(firstAckAfter.Load()-stoppedAt.Load()), ms(firstAckAfter.Load()), readyDown, ms(readyBackAt))
	for i, b := range total.bad {
		if i == 10 {
			t.Errorf("... and %d more", len(total.bad)-10)
			break
		}
		t.Errorf("an answer other than 201 or 503 unavailable with Retry-After: %s", b)
	}
	if total.unavailable == 0 {
		t.Error("no 503 while the database was away")
	}
	if readyDown == 0 {
		t.Error("/readyz never answered 503 while the database was away")
	}
	if readyBackAt == 0 {
		t.Error("/readyz did not answer 200 after the database came back")
	}
	if n := strings.Count(p.logs.String(), "status=500"); n > 0 {
		t.Errorf("the server logged %d answers of 500", n)
	}
	if m, err := scrapeMetrics(hc, p.metrics); err != nil {
		t.Error(err)
	} else {
		for series, v := range m {
			if strings.HasPrefix(series, "corebank_http_requests_total{") && strings.Contains(series, `status="500"`) && v > 0 {
				t.Errorf("metrics: %s %v", series, v)
			}
		}
	}

	// Every acknowledged transfer is there, once: each balance is its
	// funding less one debit per transfer acknowledged on it.
	seen := map[string]bool{}
	for _, id := range total.acked {
		if seen[id] {
			continue
		}
		seen[id] = true
		status, body, err := c.do("GET", "/transfers/"+id, nil)
		if err != nil || status != http.StatusOK || dataField(body, "id") != id {
			t.Errorf("acknowledged transfer %s: %d %v %v", id, status, body, err)
		}
	}
	for w, acct := range accounts {
		want := int64(funding - amount*len(tallies[w].acked))
		bal := dataField(must("GET", "/accounts/"+acct, 200, nil), "balance").(map[string]any)
		if got := int64(bal["available"].(float64)); got != want {
			t.Errorf("writer %d: available %d, want %d (funding less %d acknowledged transfers)", w, got, want, len(tallies[w].acked))
		}
	}

	// The payout runner goes on after the outage: the last transfer
	// acknowledged ends successful (the sandbox provider settles it 5 s
	// after creation).
	last := total.acked[len(total.acked)-1]
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, body, _ := c.do("GET", "/transfers/"+last, nil)
		if s := dataField(body, "status"); s == "successful" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("transfer %s still %v 30 s after the outage: the due runner did not resume\n%s", last, s, tail(p.logs.String(), 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// outageAnswer is an answer with its Retry-After, in seconds (0: none).
type outageAnswer struct {
	answer
	retryAfter int
}

// post posts body to path with the Idempotency-Key idem, once.
func post(hc *http.Client, c *client, path, idem string, body any) (outageAnswer, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", c.base+path, bytes.NewReader(raw))
	if err != nil {
		return outageAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	req.GetBody = nil // one attempt per call
	resp, err := hc.Do(req)
	if err != nil {
		return outageAnswer{}, err
	}
	defer resp.Body.Close()
	a := outageAnswer{answer: answer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}}
	a.retryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		return a, fmt.Errorf("decode %d: %w", resp.StatusCode, err)
	}
	return a, nil
}
