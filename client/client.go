package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one corebank server with one API key. It is safe for
// concurrent use.
type Client struct {
	base       string
	key        string
	http       *http.Client
	retries    int
	minBackoff time.Duration
	maxBackoff time.Duration
	userAgent  string
	sleep      func(context.Context, time.Duration) error
}

// Options holds the client's knobs; the zero value (or nil) is the
// default.
type Options struct {
	// HTTPClient sends the requests; default http.DefaultClient. A
	// corebanktest bank's Server.Client() trusts its TLS certificate.
	// Its redirects are not followed (a sandbox page's 303 comes back
	// as a RawResponse).
	HTTPClient *http.Client
	// MaxRetries is how many times a request is retried (see the package
	// documentation for which); default 2, negative for none.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the wait before a retry, which
	// doubles from MinBackoff (default 250ms) up to MaxBackoff (default
	// 5s), with jitter. A 429 asking to wait longer than MaxBackoff is
	// returned, not waited out.
	MinBackoff, MaxBackoff time.Duration
	// UserAgent is sent as the User-Agent header; default
	// "corebank-go-client".
	UserAgent string
}

// New returns a client of the server at baseURL (scheme, host and any
// path prefix; the operations' paths are appended to it) that sends
// apiKey as its bearer key ("" for none: only /healthz, /readyz,
// /openapi.json and the sandbox pages answer without one).
func New(baseURL, apiKey string, opt *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port][/prefix]", baseURL)
	}
	if opt == nil {
		opt = &Options{}
	}
	c := &Client{
		base: strings.TrimSuffix(u.String(), "/"), key: apiKey, http: opt.HTTPClient,
		retries: opt.MaxRetries, minBackoff: opt.MinBackoff, maxBackoff: opt.MaxBackoff,
		userAgent: opt.UserAgent, sleep: sleep,
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	// A redirect is handed back, not followed: the API answers none but
	// the sandbox pages' 303, which is the caller's to follow (it points
	// to the merchant's return URL). A copy, so the caller's client is
	// left as it was.
	h := *c.http
	h.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &h
	switch {
	case c.retries == 0:
		c.retries = 2
	case c.retries < 0:
		c.retries = 0
	}
	if c.minBackoff <= 0 {
		c.minBackoff = 250 * time.Millisecond
	}
	if c.maxBackoff <= 0 {
		c.maxBackoff = 5 * time.Second
	}
	if c.maxBackoff < c.minBackoff {
		c.maxBackoff = c.minBackoff
	}
	if c.userAgent == "" {
		c.userAgent = "corebank-go-client"
	}
	return c, nil
}

// call is one operation's request, as the generated methods describe it.
type call struct {
	method   string
	path     string // with the path parameters escaped in
	params   any    // a *XParams, possibly nil
	body     any    // the JSON body or the form, nil for none
	form     bool
	envelope bool   // the answer is {"status", "message", "data"}
	list     string // a list's array inside data ("" for data itself)
	query    url.Values
}

// RawResponse is an answer returned as it is: a page meant for a browser,
// a document's file, or a form post's redirect (Location in Header).
type RawResponse struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// do sends k and decodes the answer's data, or the whole of a bare
// answer, into out.
func (c *Client) do(ctx context.Context, k *call, out any) error {
	resp, err := c.send(ctx, k)
	if err != nil {
		return err
	}
	raw := resp.Body
	if k.envelope {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			return fmt.Errorf("client: %s %s: decode the answer: %w", k.method, k.path, err)
		}
		raw = env.Data
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("client: %s %s: decode the answer into %T: %w", k.method, k.path, out, err)
	}
	return nil
}

// send makes the request, retrying it as the package documentation says,
// and returns a 2xx or 3xx answer; anything else is an *APIError.
func (c *Client) send(ctx context.Context, k *call) (*RawResponse, error) {
	query, header, err := encodeParams(k.params)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", k.method, k.path, err)
	}
	for name, vs := range k.query {
		query[name] = vs
	}
	var body []byte
	contentType := ""
	switch {
	case k.body == nil:
	case k.form:
		form, _, err := encodeParams(k.body)
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: %w", k.method, k.path, err)
		}
		body, contentType = []byte(form.Encode()), "application/x-www-form-urlencoded"
	default:
		if body, err = json.Marshal(k.body); err != nil {
			return nil, fmt.Errorf("client: %s %s: encode the body: %w", k.method, k.path, err)
		}
		contentType = "application/json"
	}
	if k.method == http.MethodPost && header.Get("Idempotency-Key") == "" {
		header.Set("Idempotency-Key", newKey())
	}
	target := c.base + k.path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, k.method, target, header, contentType, body)
		wait, retry := c.retryable(k.method, resp, err, attempt)
		if !retry {
			if err != nil {
				return nil, fmt.Errorf("client: %s %s: %w", k.method, k.path, err)
			}
			if resp.StatusCode >= 400 {
				return nil, newError(resp.StatusCode, resp.Header.Get("X-Request-Id"), resp.Header.Get("Retry-After"), resp.Body)
			}
			return resp, nil
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("client: %s %s: %w", k.method, k.path, err)
		}
	}
}

// once sends one request and reads its whole answer.
func (c *Client) once(ctx context.Context, method, target string, header http.Header, contentType string, body []byte) (*RawResponse, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	for name, vs := range header {
		req.Header[name] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &RawResponse{StatusCode: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

// retryable says whether to send the request again and after how long.
func (c *Client) retryable(method string, resp *RawResponse, err error, attempt int) (time.Duration, bool) {
	if attempt >= c.retries {
		return 0, false
	}
	safe := method != http.MethodPatch // POST carries its Idempotency-Key
	backoff := c.backoff(attempt)
	if err != nil {
		var ue *url.Error
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ue) && ue.Op == "parse") {
			return 0, false
		}
		return backoff, safe
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		e := newError(resp.StatusCode, "", resp.Header.Get("Retry-After"), resp.Body)
		if e.RetryAfter > c.maxBackoff {
			return 0, false
		}
		return max(backoff, e.RetryAfter), true
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return backoff, safe
	case http.StatusConflict:
		// The server's 409 for a key whose first request is still
		// running; that request was not run, so sending it again is safe.
		e := newError(resp.StatusCode, "", "", resp.Body)
		return backoff, method == http.MethodPost && e.Code == "conflict" && strings.Contains(e.Message, "still in progress")
	}
	return 0, false
}

// backoff doubles from minBackoff up to maxBackoff, and waits a random
// half to all of it, so that clients refused together spread out.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.minBackoff << min(attempt, 20)
	if d > c.maxBackoff || d <= 0 {
		d = c.maxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newKey makes an Idempotency-Key for one call, kept across its retries.
func newKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return "cbgo_" + hex.EncodeToString(b[:])
}
