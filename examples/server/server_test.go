package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// binDir holds the server binary the tests share; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	parallelByDefault(4)
	dir, err := os.MkdirTemp("", "corebank-server-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := pgtest.Run(m) // stops the PostgreSQL cluster if a test started one
	os.RemoveAll(dir)
	os.Exit(code)
}

// parallelByDefault runs up to n of the package's parallel tests at once
// unless -test.parallel says otherwise: they spend most of their time
// waiting on the server processes they start, and the default (GOMAXPROCS,
// 2 on a small machine) left the package running for minutes.
func parallelByDefault(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildServer compiles the server once per test binary: each link writes
// a binary of about 20 MB, and every test runs the same one. It builds the
// source the test binary was compiled from (serverSource), wherever the
// binary runs.
func buildServer(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		bin := filepath.Join(binDir, "server")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = serverSource()
		cmd.Stderr = os.Stderr
		if buildErr = cmd.Run(); buildErr == nil {
			builtBin = bin
		}
	})
	if buildErr != nil {
		t.Fatalf("build server: %v", buildErr)
	}
	return builtBin
}

// serverSource returns the directory of this file as compiled, when it is
// there, else the working directory. A test binary compiled from an older
// commit's worktree and run from another directory (to compare the two
// in one run) then builds that commit's server, not the one in the
// working directory, which made both halves of such a comparison the same
// server.
func serverSource() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	dir := filepath.Dir(file)
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		return "."
	}
	return dir
}

type proc struct {
	cmd     *exec.Cmd
	addr    string
	metrics string // the -metrics-addr listener, when given
	done    chan error
	logs    *syncWriter
	out     *syncWriter // stdout up to the "listening on" line
}

// startServer runs the binary and waits for its "listening on" line.
func startServer(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncWriter{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1), logs: logs, out: &syncWriter{}}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(p.out, sc.Text())
			if addr, ok := strings.CutPrefix(sc.Text(), "metrics on "); ok {
				p.metrics = addr // printed before the listening line, read after it
			}
			if addr, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- addr
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	select {
	case p.addr = <-lines:
	case err := <-p.done:
		t.Fatalf("server exited before listening: %v\n%s", err, logs)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server did not print its listening line\n%s", logs)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// syncWriter collects a process's log output while the test reads it.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

type client struct {
	base, key string
	http      *http.Client
}

func (c *client) do(method, path string, body any) (int, map[string]any, error) {
	a, err := c.send(method, path, "", body)
	return a.status, a.body, err
}

// answer is one HTTP answer: its status, whether it was an idempotent
// replay, and its JSON body.
type answer struct {
	status   int
	replayed bool
	body     map[string]any
}

// send sends body (nil for none) with idem as Idempotency-Key when not
// empty. net/http resends a request with an Idempotency-Key on its own when
// a reused connection fails; send turns that off, so that each call is one
// attempt and a crash test knows which process every attempt reached.
func (c *client) send(method, path, idem string, body any) (answer, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.base+path, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
		req.GetBody = nil
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		return a, fmt.Errorf("decode %s %s (%d): %w", method, path, resp.StatusCode, err)
	}
	return a, nil
}

func dataField(body map[string]any, name string) any {
	if d, ok := body["data"].(map[string]any); ok {
		return d[name]
	}
	return body[name]
}

// TestRestartKeepsAcknowledgedWrites sends SIGTERM while clients create
// accounts and fund them, restarts over the same bbolt file, and checks that
// every acknowledged account exists with at least its acknowledged balance
// (a request cut off by the shutdown may or may not have committed, so the
// balance is bounded by what was attempted).
func TestRestartKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "corebank.db")
	bootPath := filepath.Join(dir, "bootstrap.json")

	p := startServer(t, bin, "-db", db, "-bootstrap-out", bootPath)
	bootRaw, err := os.ReadFile(bootPath)
	if err != nil {
		t.Fatal(err)
	}
	var boot struct {
		EntityID string `json:"entity_id"`
		APIKey   string `json:"api_key"`
		ReadOnly string `json:"read_only_api_key"`
		PubKey   string `json:"encryption_public_key"`
	}
	if err := json.Unmarshal(bootRaw, &boot); err != nil {
		t.Fatal(err)
	}
	if boot.EntityID == "" || !strings.HasPrefix(boot.APIKey, "sk_sandbox_") || !strings.HasPrefix(boot.ReadOnly, "sk_sandbox_") || !strings.Contains(boot.PubKey, "PUBLIC KEY") {
		t.Fatalf("bootstrap file incomplete: %s", bootRaw)
	}
	if strings.Contains(p.logs.String(), boot.APIKey) {
		t.Fatal("the server logged the API key")
	}

	c := &client{base: "http://" + p.addr, key: boot.APIKey, http: &http.Client{Timeout: 10 * time.Second}}

	type acked struct {
		id              string
		funded, attempt int64
	}
	var (
		mu       sync.Mutex
		accounts []*acked
		stopping atomic.Bool
		wg       sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stopping.Load() || i < 2; i++ {
				status, body, err := c.do("POST", "/accounts", map[string]any{
					"type": "checking", "currency": "USD", "display_name": fmt.Sprintf("w%d-%d", w, i)})
				if err != nil || status/100 != 2 {
					return // the server is going away
				}
				a := &acked{id: dataField(body, "id").(string)}
				mu.Lock()
				accounts = append(accounts, a)
				mu.Unlock()
				for j := 0; j < 5; j++ {
					atomic.AddInt64(&a.attempt, 100)
					status, _, err := c.do("POST", "/sandbox/inflows", map[string]any{"account_id": a.id, "amount": 100, "narration": "seed"})
					if err != nil || status/100 != 2 {
						return
					}
					atomic.AddInt64(&a.funded, 100)
				}
			}
		}(w)
	}
	// Let traffic build up, then ask for a graceful stop in the middle of it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(accounts)
		mu.Unlock()
		if n >= 8 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopping.Store(true)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("server did not exit cleanly on SIGTERM: %v\n%s", err, p.logs)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("server did not stop after SIGTERM\n%s", p.logs)
	}
	wg.Wait()
	if len(accounts) == 0 {
		t.Fatal("no account was acknowledged before the shutdown")
	}

	p2 := startServer(t, bin, "-db", db, "-bootstrap-out", bootPath)
	again, err := os.ReadFile(bootPath)
	if err != nil || !bytes.Equal(again, bootRaw) {
		t.Fatalf("bootstrap file was rewritten on restart")
	}
	c.base = "http://" + p2.addr
	for _, a := range accounts {
		status, body, err := c.do("GET", "/accounts/"+a.id, nil)
		if err != nil || status != http.StatusOK {
			t.Fatalf("acknowledged account %s lost after restart: %d %v %v", a.id, status, body, err)
		}
		bal, _ := dataField(body, "balance").(map[string]any)
		avail, _ := bal["available"].(float64)
		if int64(avail) < a.funded || int64(avail) > a.attempt {
			t.Errorf("account %s: available %v, acknowledged %d, attempted %d", a.id, avail, a.funded, a.attempt)
		}
	}
	if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-p2.done; err != nil {
		t.Fatalf("second run did not exit cleanly: %v", err)
	}
}
