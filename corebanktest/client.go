package corebanktest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/corebank/corebank/client"
)

// Client sends JSON requests to a bank's API with one API key.
type Client struct {
	// Key is the bearer API key sent with every request.
	Key string

	url  string
	http *http.Client
	t    testing.TB
}

// Client returns a client of the bank's API that authenticates with
// apiKey (Root.ReadOnlyAPIKey, a key a test created, or "" for none).
func (b *Bank) Client(apiKey string) *Client {
	return &Client{Key: apiKey, url: b.Server.URL, http: b.Server.Client(), t: b.t}
}

// Call sends a request with the root's full-access key; see Client.Call.
func (b *Bank) Call(want int, method, path string, body, out any) {
	b.t.Helper()
	b.api.Call(want, method, path, body, out)
}

// Do sends method path with the client's key and body as JSON: nil sends
// no body, a []byte or json.RawMessage is sent as it is, anything else is
// encoded with encoding/json. It returns the status and the response body,
// and fails the test only when the request cannot be made.
func (c *Client) Do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(v)
	case json.RawMessage:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			c.t.Fatalf("corebanktest: %s %s: encode body: %v", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatalf("corebanktest: %s %s: %v", method, path, err)
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("corebanktest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("corebanktest: %s %s: read response: %v", method, path, err)
	}
	return resp.StatusCode, raw
}

// Call is Do that fails the test unless the response status is want, and
// then decodes the response into out (unless out is nil): the data member
// of an envelope ({"status": "success", "message": ..., "data": ...}), or the whole body
// of a bare object or list.
func (c *Client) Call(want int, method, path string, body, out any) {
	c.t.Helper()
	status, raw := c.Do(method, path, body)
	if status != want {
		c.t.Fatalf("corebanktest: %s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	if out == nil {
		return
	}
	var env struct {
		Status  string          `json:"status"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Status == "success" && env.Message != nil && env.Data != nil {
		raw = env.Data
	}
	if err := json.Unmarshal(raw, out); err != nil {
		c.t.Fatalf("corebanktest: %s %s: decode response into %T: %v: %s", method, path, out, err, raw)
	}
}

// API returns the typed client of the bank's API (package client),
// authenticated with the root's full-access key and trusting the bank's
// server, TLS or not. For another key, client.New(b.Server.URL, key,
// &client.Options{HTTPClient: b.Server.Client()}).
func (b *Bank) API() *client.Client {
	c, err := client.New(b.Server.URL, b.Root.APIKey, &client.Options{HTTPClient: b.Server.Client()})
	if err != nil {
		b.t.Fatalf("corebanktest: %v", err)
	}
	return c
}
