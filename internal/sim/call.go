package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"time"
)

// Req is one API request.
type Req struct {
	Method, Path string
	// Body is sent as JSON ([]byte and string as they are); nil sends none.
	Body any
	// Key is the API key; empty means the root's.
	Key string
	// Idem is the Idempotency-Key. Empty lets Do choose: about a third of
	// POSTs get one.
	Idem string
	// NoIdem sends no Idempotency-Key.
	NoIdem bool
	// Bank, when not 0, sends to bank Bank-1 rather than to one at random.
	Bank int
}

// Resp is an answer. Status 0 means none came: the process died while
// serving the request, and it was not retried (it had no key).
type Resp struct {
	Status   int
	Body     []byte
	Replayed bool
}

// OK reports a 2xx answer.
func (r Resp) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Decode reads the answer into v, unwrapping the {status, message, data}
// envelope when there is one.
func (r Resp) Decode(v any) error {
	raw := r.Body
	var env struct {
		Status  string          `json:"status"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Status == "success" && env.Data != nil {
		raw = env.Data
	}
	return json.Unmarshal(raw, v)
}

// ID is the answered object's id, or "".
func (r Resp) ID() string {
	var v struct {
		ID string `json:"id"`
	}
	if r.Decode(&v) != nil {
		return ""
	}
	return v.ID
}

// Code is an error answer's code, or "".
func (r Resp) Code() string {
	var v struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.Body, &v)
	return v.Code
}

func (r Resp) String() string {
	b := r.Body
	if len(b) > 400 {
		b = append(b[:400:400], "..."...)
	}
	return fmt.Sprintf("%d %s", r.Status, b)
}

// keyedCall is an answered request with an Idempotency-Key, kept for
// retries.
type keyedCall struct {
	req  Req
	resp Resp
	at   time.Time
}

// retryWindow is how long after the first request a retry must replay:
// well inside the 24 h the records are kept.
const retryWindow = 20 * time.Hour

// Do sends req to one of the banks. A 5xx (other than 503 while a
// provider is down) or a panic is a broken invariant, recorded and
// reported at the end of the step. When the process dies while serving
// it, the simulator restarts it and, if the request had an
// Idempotency-Key, sends it again, as a client would after a reset
// connection; the retry's answer is returned.
func (s *Sim) Do(r *rand.Rand, req Req) Resp {
	if req.Key == "" {
		req.Key = s.world.Root.Key
	}
	if req.Idem == "" && !req.NoIdem && req.Method == http.MethodPost && r.IntN(3) == 0 {
		req.Idem = fmt.Sprintf("sim-%d-%d-%x", s.cfg.Seed, s.step, r.Uint32())
	}
	resp := s.send(r, req)
	for tries := 0; resp.Status == 0 && !s.concurrent && s.anyCrashed(); tries++ {
		if err := s.reboot(r); err != nil {
			s.Violate("%v", err)
			return Resp{}
		}
		if req.Idem == "" || tries > 3 {
			return Resp{}
		}
		s.Count("fault.crash_retried")
		resp = s.send(r, req)
	}
	if req.Idem != "" && resp.OK() && req.Key == s.world.Root.Key {
		s.mu.Lock()
		s.keyed = append(s.keyed, keyedCall{req: req, resp: resp, at: s.Clock.Now()})
		if len(s.keyed) > 256 {
			s.keyed = s.keyed[len(s.keyed)-128:]
		}
		s.mu.Unlock()
		if r.IntN(8) == 0 {
			s.retry(r, keyedCall{req: req, resp: resp, at: s.Clock.Now()})
		}
	}
	return resp
}

// send serves one request in process. It answers Status 0 when the
// process died meanwhile.
func (s *Sim) send(r *rand.Rand, req Req) (resp Resp) {
	var body []byte
	switch b := req.Body.(type) {
	case nil:
	case []byte:
		body = b
	case string:
		body = []byte(b)
	default:
		var err error
		if body, err = json.Marshal(b); err != nil {
			s.Violate("encode %s %s: %v", req.Method, req.Path, err)
			return Resp{}
		}
	}
	hr := httptest.NewRequestWithContext(s.ctx, req.Method, req.Path, bytes.NewReader(body))
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.Key != "-" {
		hr.Header.Set("Authorization", "Bearer "+req.Key)
	}
	if req.Idem != "" {
		hr.Header.Set("Idempotency-Key", req.Idem)
	}
	w := httptest.NewRecorder()
	n := r.IntN(len(s.banks))
	if req.Bank > 0 && req.Bank <= len(s.banks) {
		n = req.Bank - 1
	}
	b := s.banks[n]
	func() {
		defer func() {
			if p := recover(); p != nil {
				s.Violate("%s %s panicked: %v", req.Method, req.Path, p)
			}
		}()
		b.Handler.ServeHTTP(w, hr)
	}()
	if s.anyCrashed() {
		return Resp{}
	}
	resp = Resp{Status: w.Code, Body: w.Body.Bytes(), Replayed: w.Header().Get("Idempotent-Replayed") == "true"}
	if resp.Status >= 500 && !(resp.Status == 503 && s.outage.any()) {
		s.Violate("%s %s answered %s", req.Method, req.Path, resp)
	}
	return resp
}

// anyCrashed reports whether a bank's process died.
func (s *Sim) anyCrashed() bool {
	if s.store.crashed() {
		return true
	}
	for _, e := range s.extra {
		if e.crashed() {
			s.store.kill() // one node's crash restarts the run's processes
			return true
		}
	}
	return false
}

// retry sends a keyed request again; it must answer the same bytes,
// marked replayed.
func (s *Sim) retry(r *rand.Rand, c keyedCall) {
	if s.Clock.Now().Sub(c.at) > retryWindow {
		return
	}
	s.Count("idempotent_retry")
	got := s.send(r, c.req)
	if got.Status == 0 {
		return // died meanwhile: the next crash check covers it
	}
	if got.Status != c.resp.Status || !sameReplay(c.resp.Body, got.Body) || !got.Replayed {
		s.Violate("retry of %s %s with Idempotency-Key %s answered %s (replayed %v), first %s",
			c.req.Method, c.req.Path, c.req.Idem, got, got.Replayed, c.resp)
	}
}

// sameReplay reports whether replay is first replayed: the same bytes, or
// for an answer that carried a card's number and CVV, which a stored
// replay never holds (CONTRACT: "Stored replays hold no secret in
// readable form"), the same JSON without them.
func sameReplay(first, replay []byte) bool {
	if bytes.Equal(first, replay) {
		return true
	}
	var a, b any
	if json.Unmarshal(first, &a) != nil || json.Unmarshal(replay, &b) != nil {
		return false
	}
	if !dropCardSecrets(a) || dropCardSecrets(b) {
		return false // the difference is not a card's secrets, or the replay shows them
	}
	return reflect.DeepEqual(a, b)
}

// dropCardSecrets removes number and cvv from every object that has a cvv,
// and reports whether it removed any.
func dropCardSecrets(v any) bool {
	dropped := false
	switch x := v.(type) {
	case map[string]any:
		if _, card := x["cvv"]; card {
			delete(x, "cvv")
			delete(x, "number")
			dropped = true
		}
		for _, e := range x {
			dropped = dropCardSecrets(e) || dropped
		}
	case []any:
		for _, e := range x {
			dropped = dropCardSecrets(e) || dropped
		}
	}
	return dropped
}

// Acked records that the object at path (a GET path) was acknowledged:
// it must be readable after any later crash.
func (s *Sim) Acked(path string) {
	s.mu.Lock()
	s.acked = append(s.acked, path)
	s.mu.Unlock()
}

// Gone drops path from the acknowledged objects (it was deleted).
func (s *Sim) Gone(path string) {
	s.mu.Lock()
	s.acked = Remove(s.acked, func(p string) bool { return p == path })
	s.mu.Unlock()
}

// checkAcked reads every object acknowledged since the last crash.
func (s *Sim) checkAcked() error {
	s.mu.Lock()
	paths := s.acked
	s.acked = nil
	s.mu.Unlock()
	r := rand.New(rand.NewPCG(uint64(s.step), 7))
	for _, p := range paths {
		resp := s.send(r, Req{Method: http.MethodGet, Path: p, Key: s.world.Root.Key})
		if resp.Status == 0 {
			return nil // died again while checking
		}
		if resp.Status != http.StatusOK {
			return fmt.Errorf("acknowledged %s is lost after a crash: %s", p, resp)
		}
	}
	s.Count("crash_acked_checked")
	return nil
}

func init() {
	register(Op{Name: "idem.retry", Weight: 4, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
		s.mu.Lock()
		c := Pick(r, s.keyed)
		s.mu.Unlock()
		if c.req.Path != "" {
			s.retry(r, c)
		}
		return nil
	}})
}
