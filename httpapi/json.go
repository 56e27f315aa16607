package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/corebank/corebank"
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

// encoder is a buffer with its json.Encoder, pooled together.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encPool = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// writeJSON encodes v and writes it with status. net/http adds
// Content-Length itself for bodies that fit its buffer.
func writeJSON(w http.ResponseWriter, status int, v any) {
	e := encPool.Get().(*encoder)
	e.buf.Reset()
	defer func() {
		if e.buf.Cap() <= 64<<10 {
			encPool.Put(e)
		}
	}()
	if err := e.enc.Encode(v); err != nil {
		// Encoding our own types fails only on a programming error
		// (a NaN or a channel); answer a plain 500 rather than half a body.
		e.buf.Reset()
		e.buf.WriteString(`{"status":"error","code":"internal_error","message":"an internal error occurred","details":{}}` + "\n")
		status = http.StatusInternalServerError
	}
	writeRaw(w, status, e.buf.Bytes())
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
// trailing data and nesting deeper than maxDepth are validation errors that
// name the field (dotted JSON path) or "body".
func decodeJSON(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if err := checkDepth(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(body, v, err)
	}
	if dec.More() {
		return corebank.InvalidField("body", "unexpected data after the JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return corebank.InvalidField("body", "unexpected data after the JSON object")
	}
	return nil
}

func decodeError(body []byte, v any, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return corebank.InvalidField(orBody(malformedPath(body)), "malformed JSON at offset "+strconv.FormatInt(syn.Offset, 10)+": "+syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return corebank.InvalidField(orBody(malformedPath(body)), "malformed JSON: unexpected end of input")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return corebank.InvalidField("body", "must be a JSON object")
		}
		// The decoder names a map or a slice, not the element in it; find
		// the element when the path below the named field is unambiguous.
		if path := mismatchPath(body, reflect.TypeOf(v)); path != "" && strings.HasPrefix(dropIndexes(path), field) {
			field = path
		}
		return corebank.InvalidField(field, "must be "+describeType(typ.Type)+", not "+describeValue(typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		if path := unknownPath(body, reflect.TypeOf(v)); path != "" {
			name = path
		}
		return corebank.InvalidField(name, "unknown field")
	}
	var ute *json.UnsupportedTypeError
	if errors.As(err, &ute) {
		return err
	}
	// Errors from a field's own UnmarshalJSON (decimal, enums) are the
	// caller's input too.
	var ce *corebank.Error
	if errors.As(err, &ce) {
		return ce
	}
	return corebank.InvalidField("body", "invalid JSON: "+err.Error())
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// malformedPath names the value that was being read where body stops being
// valid JSON ("amount" for {"amount": } or {"amount": 12-3}, "items.1" for
// {"items":[1,}), so that a syntax error points at a field as CONTRACT
// asks. It returns "" when no member is in progress or just read at the
// break (after a comma in an object, before the first key, at the top
// level): the error is then about the body as a whole.
func malformedPath(body []byte) string {
	type frame struct {
		object  bool
		wantKey bool // an object member is complete (or none has started)
		key     string
		index   int // members of an array completed so far
	}
	var stack []frame
	valueDone := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var off int64
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		off = dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, wantKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		default:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				stack[n-1].key, _ = t.(string)
				stack[n-1].wantKey = false
				continue
			}
			valueDone()
		}
	}
	if len(stack) == 0 {
		return ""
	}
	// Was the separator after the last good token already read? Then the
	// next member is in progress; otherwise the break follows the member
	// just read, which is the one to blame.
	rest := bytes.TrimLeft(body[min(off, int64(len(body))):], " \t\r\n")
	afterComma := len(rest) > 0 && rest[0] == ','
	parts := make([]string, 0, len(stack))
	for i, f := range stack {
		top := i == len(stack)-1
		switch {
		case f.object && !f.wantKey:
			parts = append(parts, f.key)
		case f.object:
			if !top || afterComma || f.key == "" {
				return strings.Join(parts, ".")
			}
			parts = append(parts, f.key)
		case top && !afterComma && f.index > 0:
			parts = append(parts, strconv.Itoa(f.index-1))
		default:
			parts = append(parts, strconv.Itoa(f.index))
		}
	}
	return strings.Join(parts, ".")
}

// dropIndexes removes the array indexes from a dotted path
// ("items.0.name" -> "items.name"), the form encoding/json names a field in.
func dropIndexes(path string) string {
	parts := strings.Split(path, ".")
	out := parts[:0]
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

func describeType(t reflect.Type) string {
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
		if t.String() == "decimal.Decimal" {
			return "a decimal number"
		}
		return "an object"
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return "a " + t.String()
}

func describeValue(v string) string {
	switch {
	case v == "string", v == "object", v == "array", v == "bool":
		return "a " + strings.Replace(v, "bool", "boolean", 1)
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number"):
		return v
	}
	return v
}

// checkDepth refuses bodies nested deeper than maxDepth, with a byte scan
// that costs far less than decoding.
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

// unknownPath finds the dotted path of the first key in body that t (a
// struct, or a pointer to one) does not declare, as encoding/json matches
// names (case-insensitively). It runs only after the decoder has refused a
// body, so its cost is off the hot path.
func unknownPath(body []byte, t reflect.Type) string {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&raw) != nil {
		return ""
	}
	return walkUnknown(raw, t, "")
}

func walkUnknown(v any, t reflect.Type, prefix string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	join := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() == reflect.Map {
			for k, e := range x {
				if p := walkUnknown(e, t.Elem(), join(k)); p != "" {
					return p
				}
			}
			return ""
		}
		if t.Kind() != reflect.Struct {
			return ""
		}
		fields := jsonFields(t)
		// Visit keys in body order for a stable answer.
		for _, k := range orderedKeys(x) {
			ft, ok := fields[strings.ToLower(k)]
			if !ok {
				return join(k)
			}
			if p := walkUnknown(x[k], ft, join(k)); p != "" {
				return p
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return ""
		}
		for i, e := range x {
			if p := walkUnknown(e, t.Elem(), join(strconv.Itoa(i))); p != "" {
				return p
			}
		}
	}
	return ""
}

func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Sorted: map order is random and a deterministic message is kinder.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// jsonFields maps the lower-cased JSON names of t's fields, embedded
// structs included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[strings.ToLower(name)] = f.Type
	}
	return out
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// mismatchPath finds the dotted path of the first value in body whose JSON
// kind does not fit t's field there. Like unknownPath it runs only on the
// error path.
func mismatchPath(body []byte, t reflect.Type) string {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&raw) != nil {
		return ""
	}
	return walkMismatch(raw, t, "")
}

func walkMismatch(v any, t reflect.Type, path string) string {
	if v == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return ""
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch x := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Map:
			for _, k := range orderedKeys(x) {
				if p := walkMismatch(x[k], t.Elem(), join(k)); p != "" {
					return p
				}
			}
			return ""
		case reflect.Struct:
			fields := jsonFields(t)
			for _, k := range orderedKeys(x) {
				if ft, ok := fields[strings.ToLower(k)]; ok {
					if p := walkMismatch(x[k], ft, join(k)); p != "" {
						return p
					}
				}
			}
			return ""
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range x {
				if p := walkMismatch(e, t.Elem(), join(strconv.Itoa(i))); p != "" {
					return p
				}
			}
			return ""
		}
	case string:
		if t.Kind() == reflect.String {
			return ""
		}
	case bool:
		if t.Kind() == reflect.Bool {
			return ""
		}
	case json.Number:
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if _, err := strconv.ParseInt(string(x), 10, t.Bits()); err == nil {
				return ""
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if _, err := strconv.ParseUint(string(x), 10, t.Bits()); err == nil {
				return ""
			}
		case reflect.Float32, reflect.Float64:
			return ""
		}
	}
	if path == "" {
		return ""
	}
	return path
}
