package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sourceClient is an HTTP client whose connections leave from the
// loopback address src, so that one test can be several clients to the
// server's per-address limits.
func sourceClient(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// needSources skips the test, with one line, when this machine cannot
// send from 127.0.0.2 (Linux routes all of 127/8 to the loopback; some
// systems only 127.0.0.1), and fails it instead when
// COREBANK_REQUIRE_TOOLS is set.
func needSources(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		defer ln.Close()
		var c net.Conn
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
		if c, err = d.Dial("tcp", ln.Addr().String()); err == nil {
			c.Close()
			return
		}
	}
	if os.Getenv("COREBANK_REQUIRE_TOOLS") != "" {
		t.Fatalf("needs connections from 127.0.0.2, and COREBANK_REQUIRE_TOOLS is set: %v", err)
	}
	t.Skipf("skipped: needs connections from 127.0.0.2 to tell clients apart (%v)", err)
}

// limitAnswer is one answer of the rate-limit tests.
type limitAnswer struct {
	status     int
	retryAfter string
	body       map[string]any
}

func limitedGet(t *testing.T, hc *http.Client, url, key string) limitAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := limitAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("GET %s: %d with a body that is not JSON: %v", url, resp.StatusCode, err)
	}
	return a
}

// check429 checks a rate limit's 429: Retry-After whole seconds from 1 to
// most, the body's retry_after the same, and limit_type, current_count and
// limit at the top level and under details.
func check429(t *testing.T, a limitAnswer, limitType string, limit, most int) int {
	t.Helper()
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("got %d, want 429: %v", a.status, a.body)
	}
	secs, err := strconv.Atoi(a.retryAfter)
	if err != nil || secs < 1 || secs > most {
		t.Fatalf("Retry-After %q, want whole seconds from 1 to %d", a.retryAfter, most)
	}
	fields := map[string]any{"retry_after": float64(secs), "limit_type": limitType, "current_count": float64(limit), "limit": float64(limit)}
	got := map[string]any{"details": a.body["details"], "code": a.body["code"]}
	want := map[string]any{"details": fields, "code": "rate_limited"}
	for k, v := range fields {
		got[k], want[k] = a.body[k], v
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("429 body (-want +got):\n%s", diff)
	}
	return secs
}

// rootKeys reads the bootstrap file's two keys.
func rootKeys(t *testing.T, path string) (full, readOnly string) {
	t.Helper()
	var keys struct {
		APIKey   string `json:"api_key"`
		ReadOnly string `json:"read_only_api_key"`
	}
	raw, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(raw, &keys) != nil || keys.APIKey == "" {
		t.Fatalf("bootstrap file: %v %s", err, raw)
	}
	return keys.APIKey, keys.ReadOnly
}

// TestRateLimits runs the binary with small limits, in real time: a burst
// over a key's limit (sent from two addresses) gets 429 with a Retry-After
// after which the next call succeeds; a flood of bad keys from one
// address is refused past -auth-fail-limit, and past -rate-limit the
// address altogether, while another address is served; the metrics count
// the refusals by limit_type; no key is logged.
func TestRateLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	needSources(t)
	t.Parallel()
	boot := filepath.Join(t.TempDir(), "bootstrap.json")
	// A token every 2 s for each key and address, 10 at once; 3 bad keys
	// at once per address, then one every 30 s.
	p := startServer(t, buildServer(t), "-memory", "-bootstrap-out", boot, "-metrics-addr", "127.0.0.1:0",
		"-rate-limit", "30/m,burst=10", "-auth-fail-limit", "2/m,burst=3")
	defer stop(t, p)
	key, roKey := rootKeys(t, boot)
	url := "http://" + p.addr + "/accounts"
	from := map[string]*http.Client{}
	for _, src := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		from[src] = sourceClient(src)
	}

	// The key's bucket, whatever the address: 10 at once, then refused.
	var a limitAnswer
	n := 0
	for ; n < 40; n++ {
		a = limitedGet(t, from[[]string{"127.0.0.1", "127.0.0.2"}[n%2]], url, key)
		if a.status != http.StatusOK {
			break
		}
	}
	// A token may come back while the burst is sent, on a slow machine.
	if n < 10 || n > 13 {
		t.Fatalf("%d requests answered before the first refusal, want the burst of 10 (and at most a token or three more): %d %v", n, a.status, a.body)
	}
	wait := check429(t, a, "api_key", 10, 2)
	time.Sleep(time.Duration(wait) * time.Second)
	if a := limitedGet(t, from["127.0.0.1"], url, key); a.status != http.StatusOK {
		t.Fatalf("after Retry-After %ds: %d %v", wait, a.status, a.body)
	}

	// Bad keys from 127.0.0.3: three are looked up, the rest refused (ten
	// in all, the address's own burst).
	statuses := map[int]int{}
	for i := range 10 {
		a := limitedGet(t, from["127.0.0.3"], url, fmt.Sprintf("sk_sandbox_guess%02d%s", i, strings.Repeat("0", 40)))
		statuses[a.status]++
		if a.status == http.StatusTooManyRequests {
			check429(t, a, "failed_auth", 3, 30)
		}
	}
	if diff := cmp.Diff(map[int]int{401: 3, 429: 7}, statuses); diff != "" {
		t.Fatalf("statuses of 10 bad keys from one address (-want +got):\n%s", diff)
	}
	// The address's own bucket is empty now: even without a key.
	check429(t, limitedGet(t, from["127.0.0.3"], url, ""), "client_address", 10, 2)
	// Another address is served: its good key, and a 401 for a bad one.
	if a := limitedGet(t, from["127.0.0.4"], url, roKey); a.status != http.StatusOK {
		t.Fatalf("another address: %d %v", a.status, a.body)
	}
	if a := limitedGet(t, from["127.0.0.4"], url, "sk_sandbox_guess"); a.status != http.StatusUnauthorized {
		t.Fatalf("a bad key from another address: %d %v", a.status, a.body)
	}

	got := limitedMetrics(t, p.metrics)
	if got["failed_auth"] != 7 || got["api_key"] < 1 || got["client_address"] != 1 {
		t.Errorf("corebank_rate_limited_total = %v, want failed_auth 7, api_key at least 1, client_address 1", got)
	}
	for _, k := range []string{key, roKey, "guess00"} {
		if strings.Contains(p.logs.String(), k) {
			t.Fatalf("the server logged a key (%.12s...)", k)
		}
	}
}

// limitedMetrics reads corebank_rate_limited_total by limit_type.
func limitedMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `corebank_rate_limited_total{limit_type="`)
		if !ok {
			continue
		}
		typ, val, _ := strings.Cut(rest, `"} `)
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", sc.Text(), err)
		}
		out[typ] = v
	}
	if len(out) != 3 {
		t.Fatalf("corebank_rate_limited_total has %d limit types, want 3: %v (scan: %v)", len(out), out, sc.Err())
	}
	return out
}

// TestRateLimitsProductionDefault: in production the limits are on
// without a flag: the 21st bad key from one address is refused (10/m,
// burst 20), and another address is served.
func TestRateLimitsProductionDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	needSources(t)
	t.Parallel()
	boot := filepath.Join(t.TempDir(), "bootstrap.json")
	p := startServer(t, buildServer(t), "-memory", "-env", "production", "-bootstrap-out", boot)
	defer stop(t, p)
	key, _ := rootKeys(t, boot)
	url := "http://" + p.addr + "/accounts"
	attacker := sourceClient("127.0.0.5")
	statuses := map[int]int{}
	for i := range 25 {
		a := limitedGet(t, attacker, url, "sk_live_guess"+strconv.Itoa(i))
		statuses[a.status]++
		if i == 24 {
			check429(t, a, "failed_auth", 20, 6)
		}
	}
	if diff := cmp.Diff(map[int]int{401: 20, 429: 5}, statuses); diff != "" {
		t.Fatalf("statuses of 25 bad keys from one address (-want +got):\n%s", diff)
	}
	if a := limitedGet(t, sourceClient("127.0.0.6"), url, key); a.status != http.StatusOK {
		t.Fatalf("another address: %d %v", a.status, a.body)
	}
}
