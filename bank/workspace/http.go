package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/corebank/corebank/httpapi"
)

// Handler serves the workspace routes, the workspaces' hosted pages, and
// every request made with a workspace's key, on that workspace's bank;
// every other request goes to own, the server's own bank, for the price
// of two prefix checks.
func (m *Manager) Handler(own http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/sandbox/workspaces"); ok && (rest == "" || rest[0] == '/') {
			m.serveRoutes(w, r, rest)
			return
		}
		id, ok := workspaceOf(httpapi.BearerKey(r))
		if !ok {
			own.ServeHTTP(w, r)
			return
		}
		s := m.Get(id)
		if s == nil {
			unauthorized(w) // deleted, expired, or never was
			return
		}
		m.serve(s, w, r)
	})
}

// workspaceOf returns the workspace ID a key names, and whether it is a
// workspace key at all.
func workspaceOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, keyPrefix)
	if !ok {
		return "", false
	}
	id, _, _ := strings.Cut(rest, "_")
	return id, true
}

// serve hands r to s's bank.
func (m *Manager) serve(s *Space, w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		unauthorized(w) // deleted while the request came in
		return
	}
	defer s.leave()
	s.used.Store(m.o.Clock.Now().UnixNano())
	s.Bank.Handler.ServeHTTP(w, r)
}

// serveRoutes serves /sandbox/workspaces and everything under it; rest is
// the path after that prefix.
func (m *Manager) serveRoutes(w http.ResponseWriter, r *http.Request, rest string) {
	if rest == "" {
		if r.Method != http.MethodPost {
			notAllowed(w, http.MethodPost)
			return
		}
		m.create(w, r)
		return
	}
	id, page, isPage := strings.Cut(rest[1:], "/")
	if !isPage {
		if r.Method != http.MethodDelete {
			notAllowed(w, http.MethodDelete)
			return
		}
		m.delete(w, r, id)
		return
	}
	// A hosted page of workspace id: open, its token the capability, as
	// on the server's own bank (httpapi's open routes).
	s := m.Get(id)
	if s == nil || !(strings.HasPrefix(page, "sandbox/checkout/") || strings.HasPrefix(page, "sandbox/challenge/")) {
		writeJSON(w, http.StatusNotFound, errorBody("not_found", "no such page", nil))
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = "/"+page, ""
	r2.Header.Del("Authorization") // the page reads no key
	m.serve(s, w, r2)
}

// delete is DELETE /sandbox/workspaces/{id}: the workspace's own full key
// alone may delete it.
func (m *Manager) delete(w http.ResponseWriter, r *http.Request, id string) {
	key := httpapi.BearerKey(r)
	keyOf, _ := workspaceOf(key)
	s := m.Get(id)
	if s == nil || keyOf != id || !s.enter() {
		unauthorized(w)
		return
	}
	k, err := s.Bank.Entities.Authenticate(r.Context(), key)
	s.leave()
	switch {
	case err != nil:
		unauthorized(w)
	case k.ReadOnly:
		writeJSON(w, http.StatusForbidden, map[string]any{"error": map[string]string{
			"code": "forbidden", "message": "a read-only key cannot delete its workspace"}})
	default:
		m.Delete(id)
		w.WriteHeader(http.StatusNoContent)
	}
}

// created is the answer of POST /sandbox/workspaces.
type created struct {
	ID                  string    `json:"id"`
	APIKey              string    `json:"api_key"`
	ReadOnlyAPIKey      string    `json:"read_only_api_key"`
	EncryptionPublicKey string    `json:"encryption_public_key"`
	RootEntityID        string    `json:"root_entity_id"`
	Clock               clockView `json:"clock"`
	ExpiresAt           time.Time `json:"expires_at"`
}

type clockView struct {
	Now   time.Time `json:"now"`
	NowMS int64     `json:"now_ms"`
	Fake  bool      `json:"fake"`
}

func (m *Manager) create(w http.ResponseWriter, r *http.Request) {
	p, field, problem := parseParams(http.MaxBytesReader(w, r.Body, maxBody))
	if field == "body" && problem == tooLarge {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody("request_too_large", "the request body is larger than 10 MiB", nil))
		return
	}
	if field != "" {
		invalid(w, field, problem)
		return
	}
	s, err := m.Create(r.Context(), p)
	var full *ErrFull
	if errors.As(err, &full) {
		secs := int((full.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", fmt.Sprint(secs))
		body := errorBody("rate_limited", err.Error(), map[string]any{"retry_after": secs,
			"limit_type": "workspaces", "current_count": m.Len(), "limit": m.o.Max})
		body["retry_after"] = secs
		writeJSON(w, http.StatusTooManyRequests, body)
		return
	}
	if err != nil {
		m.log.Error("workspace create", "err", err)
		writeJSON(w, http.StatusInternalServerError, errorBody("internal_error", "the workspace could not be created", nil))
		return
	}
	now := s.Bank.Clock.Now()
	writeJSON(w, http.StatusCreated, created{ID: s.ID, APIKey: s.Root.APIKey, ReadOnlyAPIKey: s.Root.ReadOnlyAPIKey,
		EncryptionPublicKey: s.Root.EncryptionPublicKey, RootEntityID: s.Root.EntityID,
		Clock:     clockView{Now: now.UTC(), NowMS: now.UnixMilli(), Fake: s.Fake},
		ExpiresAt: m.o.Clock.Now().Add(m.o.TTL).UTC()})
}

// maxBody is the largest body read, as in httpapi (CONTRACT.md: 413).
const maxBody = 10 << 20

const tooLarge = "too large"

// parseParams reads POST /sandbox/workspaces' body (none is {}); on bad
// input it names the field and its problem.
func parseParams(body io.Reader) (p Params, field, problem string) {
	data, err := io.ReadAll(body)
	if err != nil {
		return p, "body", tooLarge
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return p, "", ""
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return p, "body", `must be a JSON object {"clock_start"?, "fake_clock"?}`
	}
	for k := range raw {
		if k != "clock_start" && k != "fake_clock" {
			return p, k, "unknown field"
		}
	}
	if v, ok := raw["fake_clock"]; ok && string(v) != "null" {
		if json.Unmarshal(v, &p.Fake) != nil {
			return p, "fake_clock", "must be true or false"
		}
	}
	if v, ok := raw["clock_start"]; ok && string(v) != "null" {
		t, ok := parseTime(v)
		switch {
		case !ok:
			return p, "clock_start", "must be an RFC 3339 time or Unix milliseconds (0 or more)"
		case !p.Fake:
			return p, "clock_start", `needs "fake_clock": true: a real clock starts now`
		}
		p.ClockStart = t
	}
	return p, "", ""
}

func parseTime(raw json.RawMessage) (time.Time, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		return t, err == nil
	}
	var ms int64
	if json.Unmarshal(raw, &ms) == nil && ms >= 0 {
		return time.UnixMilli(ms), true
	}
	return time.Time{}, false
}

// errorBody is the API's error shape (CONTRACT.md, "Errors").
func errorBody(code, message string, details map[string]any) map[string]any {
	if details == nil {
		details = map[string]any{}
	}
	return map[string]any{"status": "error", "code": code, "message": message, "details": details}
}

// unauthorized is the answer httpapi gives an unknown key, in the 401
// shape CONTRACT.md gives authentication.
func unauthorized(w http.ResponseWriter) {
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{
		"code": "unauthorized", "message": "a valid API key is required: send Authorization: Bearer <key>"}})
}

func invalid(w http.ResponseWriter, field, problem string) {
	writeJSON(w, http.StatusUnprocessableEntity, errorBody("validation_error", field+": "+problem,
		map[string]any{field: problem}))
}

func notAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, errorBody("method_not_allowed", "use "+allow, nil))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
