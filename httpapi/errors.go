package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Error codes the HTTP layer itself produces. Domain codes come from each
// package's errors.go and pass through unchanged.
const (
	codeUnauthorized        = "unauthorized"
	codeForbidden           = "forbidden"
	codeMethodNotAllowed    = "method_not_allowed"
	codeTooLarge            = "request_too_large"
	codeIdempotencyMismatch = "idempotency_key_mismatch"
	codeRateLimited         = "rate_limited"
	codeUnavailable         = "unavailable"
	codeBadRequest          = "bad_request"
)

var (
	errUnauthorized = corebank.E(corebank.KindUnauthorized, codeUnauthorized, "a valid API key is required: send Authorization: Bearer <key>")
	errTooLarge     = corebank.E(corebank.KindTooLarge, codeTooLarge, "the request body is larger than 10 MiB")
	errRouteMissing = corebank.E(corebank.KindNotFound, corebank.CodeNotFound, "no such route")
	errIdemMismatch = corebank.E(corebank.KindInvalid, codeIdempotencyMismatch, "this Idempotency-Key was used with a different request")
	errIdemBusy     = corebank.E(corebank.KindConflict, corebank.CodeConflict, "a request with this Idempotency-Key is still in progress")
	errIdemDiverged = corebank.E(corebank.KindConflict, corebank.CodeConflict, "the request with this Idempotency-Key took another path when retried than when it first ran; send it with a new key")
)

// kinds is the one map from a corebank.Kind to the HTTP status it answers
// and the code of an *Error of that Kind that carries none. A Kind not in
// it (KindInternal, or one added later) answers 500 internal_error.
var kinds = map[corebank.Kind]struct {
	status int
	code   string
}{
	corebank.KindInvalid:      {http.StatusUnprocessableEntity, corebank.CodeValidation},
	corebank.KindBadRequest:   {http.StatusBadRequest, codeBadRequest},
	corebank.KindNotFound:     {http.StatusNotFound, corebank.CodeNotFound},
	corebank.KindConflict:     {http.StatusConflict, corebank.CodeConflict},
	corebank.KindRejected:     {http.StatusUnprocessableEntity, "rejected"},
	corebank.KindUnavailable:  {http.StatusServiceUnavailable, codeUnavailable},
	corebank.KindForbidden:    {http.StatusForbidden, codeForbidden},
	corebank.KindUnauthorized: {http.StatusUnauthorized, codeUnauthorized},
	corebank.KindRateLimited:  {http.StatusTooManyRequests, codeRateLimited},
	corebank.KindTooLarge:     {http.StatusRequestEntityTooLarge, codeTooLarge},
}

// statusOf is the HTTP status of k (see kinds).
func statusOf(k corebank.Kind) int {
	if e, ok := kinds[k]; ok {
		return e.status
	}
	return http.StatusInternalServerError
}

// defaultCode is the code of an *Error of Kind k that carries none (see
// kinds).
func defaultCode(k corebank.Kind) string {
	if e, ok := kinds[k]; ok {
		return e.code
	}
	return corebank.CodeInternal
}

type authErrorBody struct {
	Error authError `json:"error"`
}

type authError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

type errorBody struct {
	Status  string            `json:"status"`
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Details map[string]string `json:"details"`
	Data    any               `json:"data,omitempty"`
	// RequestID is the request's X-Request-Id (see "Request IDs" in doc.go).
	RequestID string `json:"request_id,omitempty"`
}

var emptyDetails = map[string]string{}

// errorResponse turns err into a status and body. Anything that is not a
// *corebank.Error (or is KindInternal) is logged with its chain and answered
// as a sanitised 500.
func (h *handler) errorResponse(r *http.Request, id string, err error) (int, any) {
	var e *corebank.Error
	if !errors.As(err, &e) || statusOf(e.Kind) == http.StatusInternalServerError {
		h.log.ErrorContext(r.Context(), "request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("request_id", id),
			slog.String("error", err.Error()), slog.String("chain", chain(err)))
		return http.StatusInternalServerError, &errorBody{Status: "error", Code: corebank.CodeInternal,
			Message: "an internal error occurred", Details: emptyDetails, RequestID: id}
	}
	status := statusOf(e.Kind)
	code := e.Code
	if code == "" {
		code = defaultCode(e.Kind)
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return status, &authErrorBody{Error: authError{Code: code, Message: msg, RequestID: id}}
	}
	details := e.Fields
	if details == nil {
		details = emptyDetails
	}
	body := &errorBody{Status: "error", Code: code, Message: msg, Details: details, Data: e.Data, RequestID: id}
	if e.Kind == corebank.KindRateLimited && e.Data != nil {
		// SPEC: a 429 body carries retry_after, limit_type, current_count and
		// limit at its top level, and CONTRACT.md under details; they are
		// flattened out of Data into both.
		if flat, ok := flatten(body, e.Data); ok {
			return status, flat
		}
	}
	return status, body
}

// flatten merges the object fields of data into the top level of body.
// Its parts are encoded with HTML escaping, as encoding/json.Marshal wrote
// them before, so that the bytes of a 429 body did not change.
func flatten(body *errorBody, data any) (map[string]jsontext.Value, bool) {
	opts := json.JoinOptions(encodeOptions, jsontext.EscapeForHTML(true))
	raw, err := json.Marshal(data, opts)
	if err != nil {
		return nil, false
	}
	var m map[string]jsontext.Value
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	top, _ := json.Marshal(struct {
		Status    string            `json:"status"`
		Code      string            `json:"code"`
		Message   string            `json:"message"`
		Details   map[string]string `json:"details"`
		RequestID string            `json:"request_id,omitempty"`
	}{body.Status, body.Code, body.Message, body.Details, body.RequestID}, opts)
	var out map[string]jsontext.Value
	_ = json.Unmarshal(top, &out)
	for k, v := range m {
		if _, taken := out[k]; !taken {
			out[k] = v
		}
	}
	// CONTRACT.md: the four rate-limit fields are under details too.
	var details map[string]jsontext.Value
	_ = json.Unmarshal(out["details"], &details)
	if details == nil {
		details = map[string]jsontext.Value{}
	}
	for _, k := range rateLimitFields {
		if v, ok := m[k]; ok {
			if _, taken := details[k]; !taken {
				details[k] = v
			}
		}
	}
	if d, err := json.Marshal(details, opts, json.Deterministic(true)); err == nil {
		out["details"] = d
	}
	out["data"] = raw
	return out, true
}

// rateLimitFields are the fields of a 429 that details repeats.
var rateLimitFields = []string{"retry_after", "limit_type", "current_count", "limit"}

// writeError writes err as an error response.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := h.errorResponse(r, responseID(w), err)
	if status == http.StatusTooManyRequests {
		if m, ok := body.(map[string]jsontext.Value); ok {
			if ra, ok := m["retry_after"]; ok {
				if n, err := strconv.ParseFloat(string(ra), 64); err == nil && n >= 0 {
					w.Header().Set("Retry-After", strconv.FormatInt(int64(n+0.999), 10))
				}
			}
		}
	}
	if status == http.StatusServiceUnavailable && errors.Is(err, storage.ErrUnavailable) {
		h.storeDown(w, r, err)
	}
	writeJSON(w, status, body)
}

// retryAfterStore is the Retry-After, in seconds, of a 503 for a store
// that is out of reach: about how long a database takes to restart, so
// that clients neither hammer it nor wait long after it is back.
const retryAfterStore = "1"

// storeDown marks the 503 of a store out of reach (storage.ErrUnavailable)
// with Retry-After, and logs its cause, which the body does not show.
func (h *handler) storeDown(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Retry-After", retryAfterStore)
	h.log.WarnContext(r.Context(), "store unavailable",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("request_id", responseID(w)),
		slog.Bool("outcome_unknown", errors.Is(err, storage.ErrOutcomeUnknown)),
		slog.String("error", err.Error()))
}

// chain renders every error in err's chain, for logs.
func chain(err error) string {
	var b []byte
	for i := 0; err != nil && i < 16; i++ {
		if i > 0 {
			b = append(b, " <- "...)
		}
		b = fmt.Appendf(b, "%T", err)
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs := j.Unwrap()
			if len(errs) == 0 {
				break
			}
			err = errs[0]
			continue
		}
		err = errors.Unwrap(err)
	}
	return string(b)
}
