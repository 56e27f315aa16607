package main_test

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestPostgresTransfer runs the server on PostgreSQL (-db with a
// postgres:// URL), funds an account and sends a transfer over HTTP, then
// starts a second server on the same database, which reads the transfer
// and keeps the root the first one made; a server without the key file
// the database's secrets are sealed with refuses to start.
func TestPostgresTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	bin := buildServer(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	bootPath := filepath.Join(dir, "bootstrap.json")
	args := []string{"-db", dsn, "-secret-key-file", keyFile, "-db-pool", "4", "-db-statement-timeout", "10s", "-db-retries", "10"}

	p := startServer(t, bin, append(args, "-bootstrap-out", bootPath)...)
	key, raw := readBootstrap(t, bootPath)
	c := &client{base: "http://" + p.addr, key: key, http: &http.Client{Timeout: 10 * time.Second}}
	must := func(method, path string, want int, body any) map[string]any {
		t.Helper()
		status, res, err := c.do(method, path, body)
		if err != nil || status != want {
			t.Fatalf("%s %s = %d %v %v, want %d\n%s", method, path, status, res, err, want, p.logs)
		}
		return res
	}
	acct := dataField(must("POST", "/accounts", 201, map[string]any{"type": "checking", "currency": "USD", "display_name": "Operating"}), "id").(string)
	must("POST", "/sandbox/inflows", 201, map[string]any{"account_id": acct, "amount": 150000, "narration": "seed"})
	cp := dataField(must("POST", "/counterparties", 201, map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "vendor", "email": "ada@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "country": "US"}}}), "id").(string)
	pd := dataField(must("POST", "/payment-details", 201, map[string]any{"payment_method": "bank-transfer", "currency": "USD",
		"account_holder_name": "Ada Lovelace", "counterparty_id": cp, "country": "US", "scheme": "ach",
		"routing_number": "021000021", "account_number": "123456789", "account_type": "checking"}), "id").(string)
	tr := dataField(must("POST", "/transfers", 201, map[string]any{"account_id": acct, "payment_detail_id": pd, "currency": "USD",
		"amount": 2500, "payment_type": "bank-transfer", "narration": "invoice 42", "unique_reference": "inv-42"}), "id").(string)
	bal := dataField(must("GET", "/accounts/"+acct, 200, nil), "balance").(map[string]any)
	if got := bal["available"]; got != float64(150000-2500) {
		t.Errorf("available after the transfer = %v, want %d", got, 150000-2500)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-p.done; err != nil {
		t.Fatalf("server did not exit cleanly: %v\n%s", err, p.logs)
	}
	p2 := startServer(t, bin, append(args, "-bootstrap-out", bootPath)...)
	c.base = "http://" + p2.addr
	if got := dataField(must("GET", "/transfers/"+tr, 200, nil), "id"); got != tr {
		t.Errorf("second server reads transfer %v, want %s", got, tr)
	}
	if again, _ := os.ReadFile(bootPath); string(again) != string(raw) {
		t.Error("the second server made a new root over the same database")
	}

	// A server without the database's key file refuses to make a new key.
	other := filepath.Join(dir, "other.key")
	out, err := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", dsn, "-secret-key-file", other).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "holds data but the secret key file") {
		t.Errorf("server with a missing key file over a used database = %v\n%s", err, out)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused server created %s: %v", other, err)
	}
}
