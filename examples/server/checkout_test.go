package main_test

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckoutURLAbsolute: the bundled server sets the funding sessions'
// CheckoutBase to the URL it listens on, so an open-banking session's
// checkout_url is absolute (localhost for an unspecified host) and opens
// the sandbox checkout page without a key.
func TestCheckoutURLAbsolute(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	for _, tc := range []struct{ name, addr, host string }{
		{"Loopback", "127.0.0.1:0", "127.0.0.1"},
		{"Unspecified", ":0", "localhost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			boot := filepath.Join(t.TempDir(), "bootstrap.json")
			p := startServer(t, bin, "-memory", "-addr", tc.addr, "-bootstrap-out", boot)
			defer stop(t, p)
			var keys struct {
				APIKey string `json:"api_key"`
			}
			raw, err := os.ReadFile(boot)
			if err != nil || json.Unmarshal(raw, &keys) != nil {
				t.Fatalf("bootstrap file: %v %s", err, raw)
			}
			c := &client{base: "http://" + p.addr, key: keys.APIKey, http: &http.Client{Timeout: 10 * time.Second}}
			status, body, err := c.do("POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Checkout"})
			if err != nil || status != 201 {
				t.Fatalf("account: %d %v %v", status, body, err)
			}
			status, body, err = c.do("POST", "/funding-sessions", map[string]any{"amount": 500, "currency": "USD",
				"account_id": dataField(body, "id"), "unique_reference": "checkout-url", "redirect_url": "https://shop.example/back"})
			if err != nil || status != 201 {
				t.Fatalf("session: %d %v %v", status, body, err)
			}
			_, port, _ := net.SplitHostPort(p.addr)
			want := "http://" + net.JoinHostPort(tc.host, port) + "/sandbox/checkout/"
			u, _ := dataField(body, "checkout_url").(string)
			if !strings.HasPrefix(u, want) || len(u) == len(want) {
				t.Fatalf("checkout_url %q, want %s<token>", u, want)
			}
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("GET checkout_url: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		})
	}
}
