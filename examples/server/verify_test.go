package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestVerifyCommand runs `server verify` on a bbolt store a server wrote:
// refused while the server holds it, clean once it stopped (exit 0, one
// summary line), and, after a stray key names a card that does not exist,
// one finding line and exit 1.
func TestVerifyCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "corebank.db")
	bootPath := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, bin, "-db", db, "-bootstrap-out", bootPath)
	var boot struct {
		EntityID string `json:"entity_id"`
		APIKey   string `json:"api_key"`
	}
	raw, err := os.ReadFile(bootPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &boot); err != nil {
		t.Fatal(err)
	}
	c := &client{base: "http://" + p.addr, key: boot.APIKey, http: &http.Client{Timeout: 10 * time.Second}}
	call := func(path string, body any) map[string]any {
		t.Helper()
		status, out, err := c.do("POST", path, body)
		if err != nil || status/100 != 2 {
			t.Fatalf("POST %s: %d %v %v", path, status, out, err)
		}
		return out
	}
	acct := dataField(call("/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Ops"}), "id").(string)
	call("/sandbox/inflows", map[string]any{"account_id": acct, "amount": 50_000})
	call("/sandbox/inflows", map[string]any{"account_id": acct, "amount": 700, "settle": false})
	card := dataField(call("/virtual-cards", map[string]any{"account_id": acct, "card_name": "Ops card", "currency": "USD",
		"expiration_month": "12", "expiration_year": "35", "cardholder": map[string]any{"first_name": "Ada", "last_name": "Lovelace",
			"email": "ada@example.com", "phone_number": "+14155550100"}}), "id").(string)
	call("/sandbox/cards/"+card+"/authorizations", map[string]any{"amount": 1_200, "mcc": 5812, "merchant_name": "Cafe"})

	verify := func(args ...string) (int, string, string) { return runVerify(t, bin, args...) }
	const ghost = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, step := range []struct {
		name   string
		before func(t *testing.T)
		args   []string
		code   int
		stdout string // a regexp the whole output matches
		stderr string // a part of stderr
	}{
		{name: "InUse", args: []string{"-db", db}, code: 1, stdout: `^$`, stderr: "is in use"},
		{name: "NoStore", args: []string{"-db", filepath.Join(dir, "none.db")}, code: 1, stdout: `^$`, stderr: "no store at"},
		{name: "Clean", before: func(t *testing.T) {
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := <-p.done; err != nil {
				t.Fatalf("server did not stop cleanly: %v\n%s", err, p.logs)
			}
		}, args: []string{"-db", db}, code: 0, stdout: `^1 accounts, 1 entries, [1-9][0-9]* due items checked: clean\n$`},
		{name: "Damaged", before: func(t *testing.T) {
			s, err := bolt.Open(db, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Update(context.Background(), func(tx storage.Tx) error {
				return tx.Put(storage.Bucket("cards.index"), []byte("l/"+boot.EntityID+"/"+ghost), nil)
			})
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		}, args: []string{"-db", db}, code: 1, stdout: `^index_dangling ` + ghost + `: .*\n$`, stderr: "1 findings"},
	} {
		if step.before != nil {
			step.before(t)
		}
		code, stdout, stderr := verify(step.args...)
		if code != step.code || !regexp.MustCompile(step.stdout).MatchString(stdout) || !strings.Contains(stderr, step.stderr) {
			t.Errorf("%s: server verify %s: exit %d, stdout %q, stderr %q; want exit %d, stdout matching %s, stderr with %q",
				step.name, strings.Join(step.args, " "), code, stdout, stderr, step.code, step.stdout, step.stderr)
		}
	}
}

// runVerify runs `server verify args...` and returns its exit code,
// stdout and stderr.
func runVerify(t *testing.T, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"verify"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// TestVerifyCommandPostgres runs `server verify -db postgres://...` while
// a server keeps serving on the database: a transfer in flight and a
// pending inflow, and the store is clean. Without PostgreSQL it skips
// with one line.
func TestVerifyCommandPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	bin := buildServer(t)
	dir := t.TempDir()
	bootPath := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, bin, "-db", dsn, "-secret-key-file", filepath.Join(dir, "secret.key"), "-db-pool", "4", "-bootstrap-out", bootPath)
	key, _ := readBootstrap(t, bootPath)
	c := &client{base: "http://" + p.addr, key: key, http: &http.Client{Timeout: 10 * time.Second}}
	call := func(path string, body any) string {
		t.Helper()
		status, out, err := c.do("POST", path, body)
		if err != nil || status/100 != 2 {
			t.Fatalf("POST %s: %d %v %v", path, status, out, err)
		}
		id, _ := dataField(out, "id").(string)
		return id
	}
	acct := call("/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Ops"})
	call("/sandbox/inflows", map[string]any{"account_id": acct, "amount": 50_000})
	call("/sandbox/inflows", map[string]any{"account_id": acct, "amount": 700, "settle": false})
	cp := call("/counterparties", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "vendor", "email": "ada@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "country": "US"}}})
	pd := call("/payment-details", map[string]any{"payment_method": "bank-transfer", "currency": "USD",
		"account_holder_name": "Ada Lovelace", "counterparty_id": cp, "country": "US", "scheme": "ach",
		"routing_number": "021000021", "account_number": "123456789", "account_type": "checking"})
	call("/transfers", map[string]any{"account_id": acct, "payment_detail_id": pd, "amount": 2500,
		"payment_type": "bank-transfer", "narration": "invoice 42", "unique_reference": "inv-42"})

	code, stdout, stderr := runVerify(t, bin, "-db", dsn)
	if code != 0 || !regexp.MustCompile(`^1 accounts, 1 entries, [1-9][0-9]* due items checked: clean\n$`).MatchString(stdout) {
		t.Errorf("server verify on a live PostgreSQL store: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
