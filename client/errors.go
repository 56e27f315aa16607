package client

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// APIError is a refusal from the server: any answer outside 2xx.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the machine-readable reason: validation_error, not_found,
	// insufficient_funds, unauthorized, rate_limited, ...
	Code string
	// Message is the human-readable reason.
	Message string
	// Details holds the problems by field, keyed by JSON path (dotted for
	// nesting), query parameter or header name; a 429's limits are here
	// too, as strings.
	Details map[string]string
	// RequestID is the X-Request-Id the server gave the request; quote it
	// when asking about one.
	RequestID string
	// RetryAfter is how long a 429 asks to wait, zero otherwise.
	RetryAfter time.Duration
	// Data is the original object of a 409 duplicate_reference, as sent.
	Data json.RawMessage
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "corebank: %d %s: %s", e.StatusCode, e.Code, e.Message)
	if len(e.Details) > 0 {
		keys := slices.Sorted(maps.Keys(e.Details))
		b.WriteString(" (")
		for i, k := range keys {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", k, e.Details[k])
		}
		b.WriteString(")")
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// errorBody is the union of the two error forms: the common one, and 401
// and 403's {"error": {...}}.
type errorBody struct {
	Code       string                     `json:"code"`
	Message    string                     `json:"message"`
	Details    map[string]json.RawMessage `json:"details"`
	RequestID  string                     `json:"request_id"`
	RetryAfter json.Number                `json:"retry_after"`
	Data       json.RawMessage            `json:"data"`
	Error      *struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
	} `json:"error"`
}

// newError reads a refusal's body; one that is not the API's (a proxy's
// page, say) keeps the status and says what it was.
func newError(status int, requestID, retryAfter string, raw []byte) *APIError {
	e := &APIError{StatusCode: status, RequestID: requestID}
	var body errorBody
	if err := json.Unmarshal(raw, &body); err != nil || (body.Code == "" && body.Error == nil) {
		e.Code = "http_" + strconv.Itoa(status)
		e.Message = strings.TrimSpace(string(truncate(raw, 200)))
		return e
	}
	if body.Error != nil {
		e.Code, e.Message = body.Error.Code, body.Error.Message
		if body.Error.RequestID != "" {
			e.RequestID = body.Error.RequestID
		}
	} else {
		e.Code, e.Message, e.Data = body.Code, body.Message, body.Data
		if body.RequestID != "" {
			e.RequestID = body.RequestID
		}
	}
	if len(body.Details) > 0 {
		e.Details = make(map[string]string, len(body.Details))
		for k, v := range body.Details {
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
			}
			e.Details[k] = s
		}
	}
	secs := retryAfter
	if secs == "" {
		secs = body.RetryAfter.String()
	}
	if n, err := strconv.Atoi(secs); err == nil && n > 0 {
		e.RetryAfter = time.Duration(n) * time.Second
	}
	return e
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
