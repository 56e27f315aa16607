package payouts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/corebank/corebank/corebanktest"
)

// TestPayoutNetHTTP is TestPayoutClient written on net/http alone: its
// own request and answer types, envelope, error handling, keys and
// paging.
func TestPayoutNetHTTP(t *testing.T) {
	b := corebanktest.New(t)
	acct := b.FundedAccount("USD", 1_000_000)
	hc := b.Server.Client()

	type address struct {
		Line1   string `json:"line1"`
		City    string `json:"city"`
		Country string `json:"country"`
	}
	type profile struct {
		LegalName         string  `json:"legal_name"`
		Relationship      string  `json:"relationship"`
		Email             string  `json:"email"`
		RegisteredAddress address `json:"registered_address"`
	}
	type counterparty struct {
		Type    string  `json:"type"`
		Profile profile `json:"profile"`
	}
	type paymentDetail struct {
		CounterpartyID    string `json:"counterparty_id"`
		PaymentMethod     string `json:"payment_method"`
		Currency          string `json:"currency"`
		Country           string `json:"country"`
		Scheme            string `json:"scheme"`
		AccountHolderName string `json:"account_holder_name"`
		RoutingNumber     string `json:"routing_number"`
		AccountNumber     string `json:"account_number"`
		AccountType       string `json:"account_type"`
	}
	type transfer struct {
		ID              string `json:"id,omitempty"`
		AccountID       string `json:"account_id"`
		PaymentDetailID string `json:"payment_detail_id"`
		PaymentType     string `json:"payment_type"`
		Amount          int64  `json:"amount"`
		Narration       string `json:"narration"`
		UniqueReference string `json:"unique_reference"`
	}
	type page struct {
		Data []transfer `json:"data"`
		Meta struct {
			Pagination struct {
				HasNext    bool    `json:"has_next"`
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		} `json:"meta"`
	}

	keys := 0
	call := func(method, path string, in, out any, want int) {
		t.Helper()
		var body io.Reader
		if in != nil {
			raw, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			body = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, b.Server.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+b.Root.APIKey)
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if method == http.MethodPost {
			keys++ // a real client keeps one key per call across its retries
			req.Header.Set("Idempotency-Key", fmt.Sprint("payouts-", t.Name(), "-", keys))
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d: %s", method, path, resp.StatusCode, raw)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}

	call("POST", "/counterparties", counterparty{Type: "business", Profile: profile{
		LegalName: "Acme Inc", Relationship: "vendor", Email: "ap@acme.example",
		RegisteredAddress: address{Line1: "1 Market St", City: "San Francisco", Country: "US"},
	}}, &created, 201)
	var detail struct {
		ID string `json:"id"` // a bare object
	}
	call("POST", "/payment-details", paymentDetail{
		CounterpartyID: created.Data.ID, PaymentMethod: "bank-transfer", Currency: "USD",
		Country: "US", Scheme: "ach", AccountHolderName: "Acme Inc",
		RoutingNumber: "091000019", AccountNumber: "123456789", AccountType: "checking",
	}, &detail, 201)
	paid := map[string]bool{}
	for i := range 250 {
		call("POST", "/transfers", transfer{
			AccountID: acct.ID, PaymentDetailID: detail.ID, PaymentType: "bank-transfer",
			Amount: 100, Narration: "invoice", UniqueReference: fmt.Sprint("inv-", i),
		}, &created, 201)
		paid[created.Data.ID] = true
	}

	listed := 0
	q := url.Values{"account_id": {acct.ID}}
	for {
		var p page
		call("GET", "/transfers?"+q.Encode(), nil, &p, 200)
		for _, tr := range p.Data {
			if !paid[tr.ID] || tr.Amount != 100 {
				t.Fatalf("listed %+v", tr)
			}
			listed++
		}
		if !p.Meta.Pagination.HasNext || p.Meta.Pagination.NextCursor == nil {
			break
		}
		q.Set("cursor", *p.Meta.Pagination.NextCursor)
	}
	if listed != 250 {
		t.Fatalf("listed %d payouts, want 250", listed)
	}
}
