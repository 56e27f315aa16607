package bank_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/storage"
)

// httpBank is a bank on db served over HTTP, called with its root key, for
// tests that drive it as a client would.
type httpBank struct {
	*bank.Bank
	url, key string
	hc       *http.Client
}

// serveBank builds, migrates and bootstraps a bank on db and serves it
// until the test ends.
func serveBank(t *testing.T, db storage.Backend, o bank.Options) *httpBank {
	t.Helper()
	h := serveNode(t, db, o, "")
	root, _, err := h.Entities.Bootstrap(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h.key = root.APIKey
	return h
}

// serveNode builds and migrates a bank on db, a store another bank
// bootstrapped (its root's API key is key), and serves it until the test
// ends: one more node of that bank.
func serveNode(t *testing.T, db storage.Backend, o bank.Options, key string) *httpBank {
	t.Helper()
	b, err := bank.New(db, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler)
	t.Cleanup(srv.Close)
	return &httpBank{Bank: b, url: srv.URL, key: key, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
}

// call sends a request (with an Idempotency-Key unless idem is "") and
// returns the answer's data (an envelope's data, or the bare object).
func (h *httpBank) call(method, path, idem string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+h.key)
	req.Header.Set("Content-Type", "application/json")
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if resp.StatusCode/100 != 2 || json.Unmarshal(raw, &out) != nil {
		return nil, fmt.Errorf("%s %s = %d %s", method, path, resp.StatusCode, raw)
	}
	if data, ok := out["data"].(map[string]any); ok {
		return data, nil
	}
	return out, nil
}

// must is call, failing the test on an error.
func (h *httpBank) must(t *testing.T, method, path, idem string, body any) map[string]any {
	t.Helper()
	out, err := h.call(method, path, idem, body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bookPair is an account funded to send, and a book-transfer payment
// detail paying an account of its own.
type bookPair struct{ from, detail, to string }

// bookPairs makes n pairs, each source funded with funding.
func (h *httpBank) bookPairs(t *testing.T, n int, funding int64) []bookPair {
	t.Helper()
	cp := h.must(t, "POST", "/counterparties", "", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Book", "last_name": "Payee", "relationship": "vendor", "email": "payee@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "country": "US"}}})["id"].(string)
	account := func(name string) map[string]any {
		return h.must(t, "POST", "/accounts", "", map[string]any{"type": "checking", "currency": "USD", "display_name": name})
	}
	pairs := make([]bookPair, n)
	for i := range pairs {
		from, to := account(fmt.Sprint("Source ", i)), account(fmt.Sprint("Destination ", i))
		h.must(t, "POST", "/sandbox/inflows", "", map[string]any{"account_id": from["id"], "amount": funding, "narration": "seed"})
		pd := h.must(t, "POST", "/payment-details", "", map[string]any{"counterparty_id": cp,
			"payment_method": "book-transfer", "currency": "USD", "account_holder_name": "Book Payee",
			"account_number": to["service_ban"]})
		pairs[i] = bookPair{from["id"].(string), pd["id"].(string), to["id"].(string)}
	}
	return pairs
}

// send sends one cent from p's source to its destination, ref being the
// transfer's unique_reference and its Idempotency-Key.
func (h *httpBank) send(p bookPair, ref string) error {
	_, err := h.call("POST", "/transfers", ref, map[string]any{"account_id": p.from, "payment_detail_id": p.detail,
		"amount": 1, "currency": "USD", "payment_type": "book-transfer", "narration": "load", "unique_reference": ref})
	return err
}
