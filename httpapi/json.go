package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/corebank/corebank"
)

// Request bodies and responses go through github.com/go-json-experiment/json,
// the proposal that became encoding/json/v2: it rejects unknown members
// itself and names a failing member by its JSON Pointer. (Go 1.26 ships it
// as encoding/json/v2 only behind GOEXPERIMENT=jsonv2.) Its defaults differ
// from encoding/json's, and the API's bodies were defined by encoding/json,
// so the options below name each v1 behaviour the API keeps.

// decodeOptions: v2 defaults, unknown members rejected, and encoding/json's
// leniencies that clients may rely on kept: member names matched without
// regard to case (but not ignoring '_' and '-') and a repeated member
// taking the later value. Invalid UTF-8, which encoding/json read as
// U+FFFD, is refused (checkText names the field first).
var decodeOptions = json.JoinOptions(
	json.DefaultOptionsV2(),
	json.RejectUnknownMembers(true),
	json.MatchCaseInsensitiveNames(true),
	jsonv1.MatchCaseSensitiveDelimiter(true),
	jsontext.AllowDuplicateNames(true),
)

// scanOptions read a body token by token as decodeOptions do, but let
// invalid UTF-8 through so that checkText can name the string holding it.
var scanOptions = json.JoinOptions(decodeOptions, jsontext.AllowInvalidUTF8(true))

// encodeOptions: v2 defaults set to write the bytes encoding/json wrote
// (with SetEscapeHTML(false)), which TestEncodeMatchesEncodingJSON checks:
// map keys sorted, nil slices and maps as null, omitempty omitting false
// and 0 too, durations as nanoseconds, methods called as v1 did and their
// output's escapes kept, a struct without exported fields as {} (v2 calls
// that a type error), and U+2028 and U+2029 escaped. One difference stays
// (TestEncodeInvalidUTF8): an invalid UTF-8 byte, which reaches a body only
// from a request path echoed in a message, is written as U+FFFD itself,
// not as the escape \ufffd; both are the same JSON string.
var encodeOptions = json.JoinOptions(
	json.DefaultOptionsV2(),
	json.Deterministic(true),
	json.FormatNilSliceAsNull(true),
	json.FormatNilMapAsNull(true),
	jsonv1.OmitEmptyWithLegacySemantics(true),
	jsonv1.CallMethodsWithLegacySemantics(true),
	jsonv1.FormatDurationAsNano(true),
	jsonv1.ReportErrorsWithLegacySemantics(true),
	jsontext.EscapeForJS(true),
	jsontext.PreserveRawStrings(true),
	jsontext.AllowInvalidUTF8(true),
)

// maxBody is the largest request body accepted (SPEC: 10 MiB, else 413).
const maxBody = 10 << 20

// maxDepth is the deepest nesting of objects and arrays a body may have.
const maxDepth = 64

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		bufPool.Put(b)
	}
}

// internalErrorBody is what writeJSON answers when v cannot be encoded.
const internalErrorBody = `{"status":"error","code":"internal_error","message":"an internal error occurred","details":{}}` + "\n"

// writeJSON encodes v, with a trailing newline, and writes it with status.
// net/http adds Content-Length itself for bodies that fit its buffer.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := getBuf()
	defer putBuf(buf)
	if err := json.MarshalWrite(buf, v, encodeOptions); err != nil {
		// Encoding our own types fails only on a programming error
		// (a NaN or a channel); answer a plain 500 rather than half a body.
		buf.Reset()
		buf.WriteString(internalErrorBody)
		status = http.StatusInternalServerError
	} else {
		buf.WriteByte('\n')
	}
	writeRaw(w, status, buf.Bytes())
}

// writeRaw writes body, already JSON, with status.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

var jsonContentType = []string{"application/json"}

// readBody reads at most maxBody bytes of r's body into buf, or the
// route's own limit from bodyLimits (keyed by r.Pattern).
func readBody(r *http.Request, buf *bytes.Buffer) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	limit, tooLarge := int64(maxBody), errTooLarge
	if n, ok := bodyLimits[r.Pattern]; ok {
		limit = n
		tooLarge = errTooLarge.With("the request body is larger than " + strconv.FormatInt(n>>20, 10) + " MiB")
	}
	if r.ContentLength > limit {
		return tooLarge
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return corebank.E(corebank.KindBadRequest, codeBadRequest, "the request body could not be read")
	}
	if int64(buf.Len()) > limit {
		return tooLarge
	}
	return nil
}

// decodeJSON strictly decodes body into v, which must point to a struct.
// An empty body decodes as {}. Unknown fields, wrong types, malformed JSON,
// trailing data, nesting deeper than maxDepth and strings that are not
// clean text (checkText) are validation errors that name the field (dotted
// JSON path) or "body".
func decodeJSON(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if err := checkDepth(body); err != nil {
		return err
	}
	if err := checkText(body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v, decodeOptions); err != nil {
		return decodeError(body, err)
	}
	return nil
}

// decodeError turns the library's error for body into the API's. The
// library stops at the first problem in reading order; encoding/json, which
// the API's answers were defined with, read the first JSON value whole
// before decoding it, so a syntax error in that value outranks a type error
// before it, and trailing data comes last. That order is kept.
func decodeError(body []byte, err error) error {
	if serr := syntaxError(body); serr != nil {
		return serr
	}
	// Errors from a field's own UnmarshalJSON (EnabledEvents) are already
	// the API's.
	var ce *corebank.Error
	if errors.As(err, &ce) {
		return ce
	}
	var se *json.SemanticError
	if errors.As(err, &se) {
		return semanticError(se)
	}
	// The first value is well formed, so what failed follows it.
	return corebank.InvalidField("body", "unexpected data after the JSON object")
}

// syntaxError reports the syntax error in body's first JSON value, or nil
// when that value is well formed. It names the member being read where the
// JSON breaks (syntaxPath).
func syntaxError(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), decodeOptions)
	for {
		_, err := dec.ReadToken()
		if err == nil {
			if dec.StackDepth() == 0 {
				return nil
			}
			continue
		}
		path := orBody(dotted(syntaxPath(dec, body)))
		var se *jsontext.SyntacticError
		if !errors.As(err, &se) || errors.Is(se.Err, io.ErrUnexpectedEOF) {
			return corebank.InvalidField(path, "malformed JSON: unexpected end of input")
		}
		msg := "syntax error"
		if se.Err != nil {
			msg = se.Err.Error()
		}
		return corebank.InvalidField(path, "malformed JSON at offset "+strconv.FormatInt(se.ByteOffset, 10)+": "+msg)
	}
}

// syntaxPath names the value dec, stopped by a syntax error in body, was
// reading, so that the error points at a field as CONTRACT asks: the member
// in progress ("amount" for {"amount": } or {"amount": 12-3}), else the one
// just read ("amount" for {"amount":12 3}, "items.0" for {"items":[1 2]}),
// else, once a ',' has begun the next one, that array element ("items.1"
// for {"items":[1,}) or the object whose member has no name yet (the body
// for {"type":"checking",}). The library's own pointer would name the
// enclosing object or array in some of these cases.
func syntaxPath(dec *jsontext.Decoder, body []byte) jsontext.Pointer {
	depth := dec.StackDepth()
	if depth == 0 {
		return ""
	}
	last := dec.StackPointer() // the value or member name read last
	kind, n := dec.StackIndex(depth)
	if n == 0 { // just inside '{' or '['
		if kind == '[' {
			return last.AppendToken("0")
		}
		return last
	}
	rest := bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")
	comma := len(rest) > 0 && rest[0] == ','
	switch {
	case !comma || kind == '{' && n%2 == 1:
		return last
	case kind == '[':
		return last.Parent().AppendToken(strconv.FormatInt(n, 10))
	default:
		return last.Parent()
	}
}

// semanticError turns a value the library could not store into the API's
// error for its path.
func semanticError(se *json.SemanticError) error {
	path := dotted(se.JSONPointer)
	switch {
	case errors.Is(se.Err, json.ErrUnknownName):
		return corebank.InvalidField(orBody(path), "unknown field")
	case path == "":
		return corebank.InvalidField("body", "must be a JSON object")
	}
	msg := "must be " + describeType(se.GoType)
	switch kind := se.JSONKind; {
	case kind == '0' && len(se.JSONValue) > 0:
		msg += ", not number " + string(se.JSONValue)
	case se.Err != nil:
		// The value has the right kind but a method refused it.
	case kind == '"':
		msg += ", not a string"
	case kind == '0':
		msg += ", not a number"
	case kind == 't', kind == 'f':
		msg += ", not a boolean"
	case kind == '{':
		msg += ", not an object"
	case kind == '[':
		msg += ", not an array"
	}
	return corebank.InvalidField(path, msg)
}

// dotted is the API's name for the member at p: its reference tokens
// joined by dots ("/officers/0/email" is "officers.0.email").
func dotted(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// describeType names the JSON a Go type takes, for error messages.
func describeType(t reflect.Type) string {
	if t == nil {
		return "a valid value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		if t.Name() == "Decimal" { // decimal.Decimal and payments.Decimal
			return "a decimal number"
		}
		return "an object"
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return "a " + t.String()
}

// checkText refuses a body whose first JSON value holds a string, member
// names included, that no text field may hold (corebank.TextProblem:
// invalid UTF-8, a lone surrogate escape such as \ud800, a control
// character other than a newline or a tab, a bidirectional control), naming
// the member it is in. This is the floor every field of every request
// gets; a domain applies its field's own corebank.TextRule on top (a name
// refuses a newline too). A body of printable ASCII without escapes, the
// common case, is passed by one byte scan. A body that is not well formed
// is passed as well, for decodeJSON to report its syntax error.
func checkText(body []byte) error {
	if plainASCII(body) {
		return nil
	}
	// A scanner grows to the largest string it reads; only those of small
	// bodies go back to the pool, as in putBuf.
	sc := new(textScanner)
	if len(body) <= 64<<10 {
		sc = scanPool.Get().(*textScanner)
		defer func() {
			sc.rd.Reset(nil)
			sc.dec.Reset(&sc.rd)
			scanPool.Put(sc)
		}()
	}
	sc.rd.Reset(body)
	sc.dec.Reset(&sc.rd, scanOptions)
	dec := &sc.dec
	buf := sc.buf[:0]
	defer func() { sc.buf = buf[:0] }()
	var found error
	for {
		if dec.PeekKind() == '"' {
			raw, err := dec.ReadValue()
			if err != nil {
				return nil
			}
			if found == nil {
				var uerr error
				buf, uerr = jsontext.AppendUnquote(buf[:0], raw)
				problem := "must be valid UTF-8"
				if uerr == nil {
					problem = corebank.TextProblem(string(buf), true)
				}
				if problem != "" {
					found = corebank.InvalidField(orBody(dotted(dec.StackPointer())), problem)
				}
			}
		} else if _, err := dec.ReadToken(); err != nil {
			return nil
		}
		if dec.StackDepth() == 0 {
			return found
		}
	}
}

// textScanner is checkText's reusable state.
type textScanner struct {
	rd  bytes.Reader
	dec jsontext.Decoder
	buf []byte
}

var scanPool = sync.Pool{New: func() any { return new(textScanner) }}

// plainASCII reports whether b has no byte above 0x7e and no backslash:
// then no string in it can break the text rule (a raw control byte inside
// a string is a syntax error the library reports itself), and checkText
// has nothing to look at.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// checkDepth refuses bodies nested deeper than maxDepth, with a byte scan
// that costs far less than decoding. (The library's own limit, 10000, is
// not adjustable.)
func checkDepth(b []byte) error {
	depth := 0
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				return corebank.InvalidField("body", "JSON nested deeper than "+strconv.Itoa(maxDepth)+" levels")
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
