package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPortTaken: a start whose -addr or -metrics-addr is taken fails
// before it opens the store, so nothing is written: no store file, no key
// file, no bootstrap file.
func TestPortTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct{ name, flag string }{{"Addr", "-addr"}, {"MetricsAddr", "-metrics-addr"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "corebank.db"),
				"-bootstrap-out", filepath.Join(dir, "bootstrap.json"), tc.flag, taken.Addr().String()}
			var stderr bytes.Buffer
			cmd := exec.Command(bin, args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatalf("the server did not fail: %v\n%s", err, &stderr)
			}
			if !strings.Contains(stderr.String(), tc.flag) || !strings.Contains(stderr.String(), "nothing was written") {
				t.Errorf("stderr does not name %s and say nothing was written:\n%s", tc.flag, &stderr)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				t.Errorf("%s was written", e.Name())
			}
		})
	}
}

// TestBootstrapOutOnExistingRoot: -bootstrap-out over a store that already
// has a root writes no file and says so on stderr and in the log, pointing
// to -issue-root-keys.
func TestBootstrapOutOnExistingRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "corebank.db")
	first := startServer(t, bin, "-db", db, "-bootstrap-out", filepath.Join(dir, "first.json"))
	stop(t, first)
	second := filepath.Join(dir, "second.json")
	p := startServer(t, bin, "-db", db, "-bootstrap-out", second, "-log-format", "json")
	defer stop(t, p)
	if _, err := os.Stat(second); !os.IsNotExist(err) {
		t.Errorf("-bootstrap-out on a store with a root wrote %s (%v)", second, err)
	}
	var plain, logged bool
	// stderr is copied from a pipe: the lines may trail the listening line.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.logs.String(), "listening on") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, line := range strings.Split(p.logs.String(), "\n") {
		if strings.HasPrefix(line, "server: the store already has a root entity") &&
			strings.Contains(line, second+" was not written") && strings.Contains(line, "-issue-root-keys") {
			plain = true
		}
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["level"] == "WARN" &&
			strings.Contains(rec["msg"].(string), "-issue-root-keys") && rec["bootstrap_out"] == second {
			logged = true
		}
	}
	if !plain || !logged {
		t.Errorf("stderr line %v, log line %v; want both:\n%s", plain, logged, p.logs)
	}
}

// TestHelp: -h opens with the summary paragraph and three example
// invocations, then the subcommands, then the flags, and exits 0.
func TestHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	out, err := exec.Command(buildServer(t), "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("-h: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.HasPrefix(text, "corebank server serves corebank's REST API") {
		t.Errorf("-h does not open with the summary:\n%s", text)
	}
	examples, flags, ok := strings.Cut(text, "\nExamples:\n")
	if !ok || strings.Count(examples, "\n\n") != 0 {
		t.Fatalf("no single summary paragraph before Examples:\n%s", text)
	}
	ex, flags, _ := strings.Cut(flags, "\nFlags:\n")
	ex, cmds, ok := strings.Cut(ex, "\nCommands (server COMMAND -h says more):\n")
	if !ok {
		t.Errorf("-h lists no commands:\n%s", text)
	}
	for _, name := range []string{"restore", "verify"} {
		if !strings.Contains(cmds, "\n  "+name+" ") && !strings.HasPrefix(cmds, "  "+name+" ") {
			t.Errorf("-h does not list the %s command:\n%s", name, cmds)
		}
	}
	var runs int
	for _, line := range strings.Split(ex, "\n") {
		if strings.HasPrefix(line, "  server ") {
			runs++
		}
	}
	if runs != 3 {
		t.Errorf("%d example invocations, want 3:\n%s", runs, ex)
	}
	for _, f := range []string{"-log-format", "-metrics-addr", "-bootstrap-out", "-issue-root-keys"} {
		if !strings.Contains(flags, "  "+f) {
			t.Errorf("-h lists no %s", f)
		}
	}
}

// TestObservability runs the binary with -log-format json and
// -metrics-addr: probes answer without a key, each request logs one line
// with its request ID, and the metrics listener serves the request,
// webhook, due-work and storage series.
func TestObservability(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer recv.Close()
	dir := t.TempDir()
	caPath := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	boot := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, buildServer(t), "-memory", "-fake-clock", "-bootstrap-out", boot, "-webhook-ca", caPath,
		"-log-format", "json", "-metrics-addr", "127.0.0.1:0")
	defer stop(t, p)
	if p.metrics == "" {
		t.Fatal("no metrics on line")
	}
	var keys struct {
		EntityID string `json:"entity_id"`
		APIKey   string `json:"api_key"`
	}
	raw, err := os.ReadFile(boot)
	if err != nil || json.Unmarshal(raw, &keys) != nil {
		t.Fatalf("bootstrap file: %v %s", err, raw)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	send := func(method, path, key, id string, body any) (int, http.Header, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, "http://"+p.addr+path, rd)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, resp.Header, out
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		if st, _, _ := send("GET", path, "", "", nil); st != 200 {
			t.Errorf("GET %s without a key: %d", path, st)
		}
	}
	st, hdr, body := send("GET", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ", keys.APIKey, "ops-test-404", nil)
	if st != 404 || hdr.Get("X-Request-Id") != "ops-test-404" || body["request_id"] != "ops-test-404" {
		t.Errorf("404: %d, header %q, body %v", st, hdr.Get("X-Request-Id"), body)
	}
	st, hdr, _ = send("GET", "/accounts", keys.APIKey, "", nil)
	if st != 200 || len(hdr.Get("X-Request-Id")) != 32 {
		t.Errorf("200: %d, generated request ID %q", st, hdr.Get("X-Request-Id"))
	}
	generated := hdr.Get("X-Request-Id")
	st, _, body = send("POST", "/entity-webhooks", keys.APIKey, "", map[string]any{"url": recv.URL + "/hooks",
		"expires_in": 86400, "enabled_events": map[string]any{"all": true}})
	if st != 201 {
		t.Fatalf("create webhook: %d %v", st, body)
	}
	hook, _ := body["data"].(map[string]any)
	if st, _, body = send("POST", "/entity-webhooks/"+hook["id"].(string)+"/test", keys.APIKey, "", nil); st != 200 {
		t.Fatalf("test delivery: %d %v", st, body)
	}
	if st, _, body = send("POST", "/sandbox/clock/advance", keys.APIKey, "", map[string]any{"seconds": 1}); st != 200 {
		t.Fatalf("advance: %d %v", st, body)
	}

	// The request log: one JSON line per request, with its fields. The
	// lines may trail the responses (stderr is copied from a pipe).
	for deadline := time.Now().Add(10 * time.Second); strings.Count(p.logs.String(), `"msg":"request"`) < 7 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	type line struct {
		Msg       string `json:"msg"`
		Method    string `json:"method"`
		Route     string `json:"route"`
		Status    int    `json:"status"`
		Entity    string `json:"entity"`
		RequestID string `json:"request_id"`
	}
	var got []line
	sc := bufio.NewScanner(strings.NewReader(p.logs.String()))
	for sc.Scan() {
		var l line
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "request" && json.Unmarshal(sc.Bytes(), &rec) == nil {
			if _, ok := rec["duration"]; !ok {
				t.Errorf("request line without duration: %s", sc.Text())
			}
			got = append(got, l)
		}
	}
	if len(got) < 7 {
		t.Fatalf("%d request lines, want 7:\n%s", len(got), p.logs)
	}
	want := []line{
		{"request", "GET", "/healthz", 200, "", ""},
		{"request", "GET", "/readyz", 200, "", ""},
		{"request", "GET", "/accounts/{id}", 404, keys.EntityID, "ops-test-404"},
		{"request", "GET", "/accounts", 200, keys.EntityID, generated},
	}
	got[0].RequestID, got[1].RequestID = "", ""
	if diff := cmp.Diff(want, got[:4]); diff != "" {
		t.Errorf("request lines (-want +got):\n%s", diff)
	}

	// The metrics listener.
	resp, err := hc.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, series := range []string{
		`corebank_http_requests_total{method="GET",route="/accounts/{id}",status="404"} 1`,
		`corebank_http_requests_total{method="GET",route="/healthz",status="200"} 1`,
		`corebank_http_request_duration_seconds_count{method="GET",route="/accounts",status="200"} 1`,
		`corebank_http_request_duration_seconds_bucket{method="POST",route="/entity-webhooks",status="201",le="+Inf"} 1`,
		`corebank_webhook_deliveries_total{outcome="succeeded"} 1`,
		`corebank_webhook_deliveries_total{outcome="failed"} 0`,
		`corebank_due_lag_seconds{kind=`,
		`corebank_storage_update_duration_seconds_count{result="ok"}`,
		`go_goroutines `,
	} {
		if !strings.Contains(string(text), series) {
			t.Errorf("metrics lack %s", series)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", text)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func stop(t *testing.T, p *proc) {
	t.Helper()
	if p.cmd.ProcessState != nil {
		return
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("server did not exit cleanly: %v\n%s", err, p.logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not stop\n%s", p.logs)
	}
}
