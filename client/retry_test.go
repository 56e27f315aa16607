package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corebank/corebank/client"
)

// script is a server that answers each request with the next of its
// steps (the last one repeats) and records what it was sent.
type script struct {
	mu    sync.Mutex
	steps []func(http.ResponseWriter, *http.Request)
	keys  []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
	step := s.steps[min(len(s.keys), len(s.steps))-1]
	s.mu.Unlock()
	step(w, r)
}

// sent returns the keys the server was sent, one per request.
func (s *script) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys...)
}

func answer(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

// hangUp closes the connection without an answer, as a crashed server or
// a proxy dropping it does.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

const (
	okTransfer = `{"status":"success","message":"ok","data":{"id":"tr_1","status":"pending"}}`
	okAccount  = `{"status":"success","message":"ok","data":{"id":"acct_1","display_name":"x"}}`
	busy       = `{"status":"error","code":"conflict","message":"a request with this Idempotency-Key is still in progress","details":{}}`
	conflict   = `{"status":"error","code":"conflict","message":"the account is closed","details":{}}`
	unavail    = `{"status":"error","code":"unavailable","message":"try later","details":{}}`
)

func limited(secs string) string {
	return `{"status":"error","code":"rate_limited","message":"slow down","details":{"retry_after":` + secs + `},"retry_after":` + secs + `}`
}

// TestRetries runs each kind of request against scripted failures and
// checks how many times it was sent, with which key, and what came back.
func TestRetries(t *testing.T) {
	post := func(c *client.Client, key *string) error {
		_, err := c.PostTransfers(context.Background(), client.PostTransfersJSONRequestBody{}, &client.PostTransfersParams{IdempotencyKey: key})
		return err
	}
	patch := func(c *client.Client, _ *string) error {
		_, err := c.PatchAccountsById(context.Background(), "acct_1", client.PatchAccountsByIdJSONRequestBody{DisplayName: "x"}, nil)
		return err
	}
	get := func(c *client.Client, _ *string) error {
		_, err := c.GetTransfersById(context.Background(), "tr_1", nil)
		return err
	}
	cases := []struct {
		name    string
		send    func(*client.Client, *string) error
		key     *string
		retries int
		steps   []func(http.ResponseWriter, *http.Request)
		sent    int
		status  int // of the *APIError returned; 0 for success, -1 for another error
	}{
		{"PostAfter503s", post, nil, 0, []func(http.ResponseWriter, *http.Request){answer(503, unavail), answer(502, ""), answer(201, okTransfer)}, 3, 0},
		{"PostKeyKept", post, client.Ptr("my-key"), 0, []func(http.ResponseWriter, *http.Request){answer(500, unavail), answer(201, okTransfer)}, 2, 0},
		{"PostGivesUp", post, nil, 2, []func(http.ResponseWriter, *http.Request){answer(503, unavail)}, 3, 503},
		{"PostNoRetries", post, nil, -1, []func(http.ResponseWriter, *http.Request){answer(503, unavail)}, 1, 503},
		{"PostHungUp", post, nil, 0, []func(http.ResponseWriter, *http.Request){hangUp, answer(201, okTransfer)}, 2, 0},
		{"PostKeyInFlight", post, nil, 0, []func(http.ResponseWriter, *http.Request){answer(409, busy), answer(201, okTransfer)}, 2, 0},
		{"PostConflict", post, nil, 0, []func(http.ResponseWriter, *http.Request){answer(409, conflict)}, 1, 409},
		{"Post422", post, nil, 0, []func(http.ResponseWriter, *http.Request){answer(422, `{"status":"error","code":"validation_error","message":"bad","details":{"amount":"required"}}`)}, 1, 422},
		{"Post429Short", post, nil, 0, []func(http.ResponseWriter, *http.Request){answer(429, limited("0")), answer(201, okTransfer)}, 2, 0},
		{"Post429Long", post, nil, 0, []func(http.ResponseWriter, *http.Request){answer(429, limited("60"))}, 1, 429},
		{"Patch503", patch, nil, 0, []func(http.ResponseWriter, *http.Request){answer(503, unavail)}, 1, 503},
		{"PatchHungUp", patch, nil, 0, []func(http.ResponseWriter, *http.Request){hangUp, answer(200, okAccount)}, 1, -1},
		{"Patch429", patch, nil, 0, []func(http.ResponseWriter, *http.Request){answer(429, limited("0")), answer(200, okAccount)}, 2, 0},
		{"GetHungUp", get, nil, 0, []func(http.ResponseWriter, *http.Request){hangUp, answer(504, ""), answer(200, okTransfer)}, 3, 0},
		{"GetProxyPage", get, nil, -1, []func(http.ResponseWriter, *http.Request){answer(502, "<html>bad gateway</html>")}, 1, 502},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{steps: tc.steps}
			srv := httptest.NewServer(s)
			defer srv.Close()
			c, err := client.New(srv.URL, "sk_test", &client.Options{MaxRetries: tc.retries, MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.send(c, tc.key)
			var e *client.APIError
			switch {
			case tc.status == 0 && err != nil:
				t.Errorf("error %v, want success", err)
			case tc.status > 0 && (!errors.As(err, &e) || e.StatusCode != tc.status):
				t.Errorf("error %#v, want an *APIError of status %d", err, tc.status)
			case tc.status < 0 && (err == nil || errors.As(err, &e)):
				t.Errorf("error %#v, want a transport error", err)
			}
			keys := s.sent()
			if len(keys) != tc.sent {
				t.Errorf("sent %d times, want %d", len(keys), tc.sent)
			}
			for i, k := range keys {
				switch {
				case k != keys[0]:
					t.Errorf("attempt %d sent key %q, the first %q", i, k, keys[0])
				case tc.key != nil && k != *tc.key:
					t.Errorf("attempt %d sent key %q, want the caller's %q", i, k, *tc.key)
				}
			}
		})
	}
}

// TestPostKeys checks every POST carries a key of its own and a PATCH or
// GET none.
func TestPostKeys(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){answer(201, okTransfer)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, _ := client.New(srv.URL, "", nil)
	ctx := context.Background()
	c.PostTransfers(ctx, client.PostTransfersJSONRequestBody{}, nil)
	c.PostTransfers(ctx, client.PostTransfersJSONRequestBody{}, nil)
	c.GetTransfersById(ctx, "tr_1", nil)
	if keys := s.sent(); len(keys) != 3 || !strings.HasPrefix(keys[0], "cbgo_") || keys[0] == keys[1] || keys[2] != "" {
		t.Errorf("keys sent: %q", keys)
	}
}

// TestCancelDuringBackoff checks a cancelled context ends the wait for a
// retry at once.
func TestCancelDuringBackoff(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){answer(503, unavail)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, _ := client.New(srv.URL, "", &client.Options{MaxRetries: 5, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if len(s.sent()) > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := c.GetTransfersById(ctx, "tr_1", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestRedirectHandedBack checks a 303 (a sandbox page's form post) comes
// back as it is, not followed, and leaves the caller's client as it was.
func TestRedirectHandedBack(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://shop.example/back?status=completed", http.StatusSeeOther)
	}))
	defer srv.Close()
	hc := &http.Client{}
	c, _ := client.New(srv.URL, "", &client.Options{HTTPClient: hc})
	resp, err := c.PostSandboxChallenge(context.Background(), "tok", client.PostSandboxChallengeFormdataRequestBody{Choice: "complete", Nonce: "n"}, nil)
	if err != nil || resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "https://shop.example/back?status=completed" {
		t.Fatalf("got %+v, %v; want the 303 itself", resp, err)
	}
	if hc.CheckRedirect != nil {
		t.Error("the caller's client was changed")
	}
}
