package httpapi

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"math/rand"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/webhooks"
)

// The API's bodies were defined by encoding/json. These tests hold the
// library path (decodeOptions, encodeOptions) to it, so that moving to
// github.com/go-json-experiment/json changed nothing a client sees.

// transferBodies are POST /transfers bodies of every kind: the common one,
// odd spellings, wrong types, malformed JSON and random mutations.
func transferBodies() []string {
	common := `{"account_id":"01J0000000000000000000000A","payment_detail_id":"01J0000000000000000000000B","amount":1,"payment_type":"bank-transfer","narration":"bench","unique_reference":"b-1"}`
	bodies := []string{
		common,
		` { "entity_id" : "e" , "account_id":"a","payment_detail_id":"p","counterparty_id":"c","currency":"USD","amount":-0,
			"payment_type":"x","narration":"n","unique_reference":"u","fx_quote_id":"q","meta":{"a":"1","b":"2","a":"3"}}` + "\n\t",
		`{}`, ``, ` `, `{ }`, `[]`, `null`, `"x"`, `{"meta":{}}`, `{"meta":{ }}`,
		`{"amount":9223372036854775807}`, `{"amount":9223372036854775808}`, `{"amount":-9223372036854775808}`,
		`{"amount":-9223372036854775809}`, `{"amount":1.0}`, `{"amount":1e2}`, `{"amount":1E2}`, `{"amount":01}`,
		`{"amount":-}`, `{"amount":"1"}`, `{"amount":null}`, `{"amount":true}`, `{"amount":1}x`, `{"amount":1}{}`,
		`{"amount":1,}`, `{,"amount":1}`, `{"amount" 1}`, `{"Amount":1}`, `{"AMOUNT":1}`, `{"account_ID":"a"}`,
		`{"accountid":"a"}`, `{"account-id":"a"}`, `{"ſtatus":"x"}`,
		`{"unknown":1}`, `{"narration":"a\"b"}`, `{"narration":"a\\b"}`, `{"narration":"\u00e9"}`, `{"narration":"é"}`,
		"{\"narration\":\"a\tb\"}", "{\"narration\":\"\x7f\"}", "{\"narration\":\"\xff\"}", `{"narration":null}`,
		`{"narration":"\ud800"}`, `{"narration":"\ud83d\ude00"}`,
		`{"narration":1}`, `{"narration":"a","narration":"b"}`, `{"meta":{"a":"1"},"meta":{"b":"2"}}`,
		`{"meta":null}`, `{"meta":[]}`, `{"meta":{"a":1}}`, `{"meta":{"a":{"b":"c"}}}`, `{"meta":{"a":"1",}}`,
		`{"meta":{"a":"1"}`, `{"narration":"unterminated`, `{"amount":1`, `{"amount":12 3}`,
		`{"account_id":"a"} `, "{\"account_id\":\"a\"}\n\n", `{"account_id":"a"}]`,
	}
	rnd := rand.New(rand.NewSource(1))
	alphabet := []byte(`{}[]":,. -+0123456789eEaAnultrue\\` + "\t\n\xff")
	for i := 0; i < 3000; i++ {
		b := []byte(common)
		for n := rnd.Intn(3) + 1; n > 0; n-- {
			j := rnd.Intn(len(b))
			switch rnd.Intn(3) {
			case 0:
				b = append(b[:j], b[j+1:]...)
			case 1:
				b[j] = alphabet[rnd.Intn(len(alphabet))]
			default:
				b = append(b[:j], append([]byte{alphabet[rnd.Intn(len(alphabet))]}, b[j:]...)...)
			}
		}
		bodies = append(bodies, string(b))
	}
	return bodies
}

// decodeV1 is what decodeJSON did with encoding/json: strict, one value.
func decodeV1(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	dec := stdjson.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); dec.More() || err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// TestDecodeMatchesEncodingJSON: decodeJSON accepts exactly the bodies
// encoding/json accepted (unknown fields aside, which both reject) and
// decodes them to the same values; what it refuses is a validation error
// that names a field or the body.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	bodies := transferBodies()
	bodies = append(bodies, `{"name":"a","nested":{"inner":"x"},"items":[{"x":1},{"X":2}]}`,
		`{"name":"a","nested":{"inner":"x","outer":1}}`, `{"items":[{"x":1.5}]}`, `{"items":{}}`, `{"nested":[]}`,
		`{"items":null,"nested":null}`, `{"Items":[{"x":-0}]}`)
	for _, body := range bodies {
		for _, newV := range []func() any{func() any { return new(payments.NewTransfer) }, func() any { return new(echoReq) }} {
			want, got := newV(), newV()
			wantErr := decodeV1([]byte(body), want)
			if wantErr == nil && checkText(bytes.TrimSpace([]byte(body))) != nil {
				// encoding/json took strings that are not clean text; the
				// API refuses them (TestDecodeText).
				wantErr = errors.New("not clean text")
			}
			err := decodeJSON([]byte(body), got)
			if (wantErr == nil) != (err == nil) {
				t.Errorf("decodeJSON(%T, %q) = %v; encoding/json: %v", got, body, err, wantErr)
				continue
			}
			if err == nil {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("decodeJSON(%T, %q) (-encoding/json +decodeJSON):\n%s", got, body, diff)
				}
				continue
			}
			var ce *corebank.Error
			if !errors.As(err, &ce) || ce.Kind != corebank.KindInvalid || len(ce.Fields) != 1 {
				t.Errorf("decodeJSON(%T, %q) = %#v, want a validation error naming one field", got, body, err)
			}
		}
	}
}

// TestDecodeText: a string that is not clean text, anywhere in a body, is
// refused naming the member that holds it; newlines and tabs pass (the
// domain refuses them where a field is a single line).
func TestDecodeText(t *testing.T) {
	for _, tc := range []struct{ name, body, field, msg string }{
		{"NUL", `{"name":"a\u0000b"}`, "name", "must not contain the control character U+0000"},
		{"RawNUL", "{\"name\":\"a\x00b\"}", "name", "malformed JSON at offset 10: invalid character '\\x00' in string (expecting non-control character)"},
		{"ESC", `{"nested":{"inner":"\u001b[31mred"}}`, "nested.inner", "must not contain the control character U+001B"},
		{"CR", `{"name":"a\rb"}`, "name", "must not contain the control character U+000D"},
		{"DEL", "{\"name\":\"a\x7f\"}", "name", "must not contain the control character U+007F"},
		{"C1", `{"name":"\u0085"}`, "name", "must not contain the control character U+0085"},
		{"RLO", `{"items":[{"x":1},{"s":"\u202e"}]}`, "items.1.s", "must not contain the bidirectional control character U+202E"},
		{"RawRLO", "{\"name\":\"gpj.\u202eexe\"}", "name", "must not contain the bidirectional control character U+202E"},
		{"Isolate", `{"name":"\u2066"}`, "name", "must not contain the bidirectional control character U+2066"},
		{"LoneSurrogate", `{"name":"\ud800"}`, "name", "must be valid UTF-8"},
		{"LoneLowSurrogate", `{"name":"x\udc00y"}`, "name", "must be valid UTF-8"},
		{"SurrogateThenLetter", `{"name":"\ud83dA"}`, "name", "must be valid UTF-8"},
		{"InvalidByte", "{\"name\":\"a\xffb\"}", "name", "must be valid UTF-8"},
		{"EncodedSurrogate", "{\"name\":\"\xed\xa0\x80\"}", "name", "must be valid UTF-8"},
		{"InMemberName", `{"nested":{"in\u0000ner":"x"}}`, "nested.in\x00ner", "must not contain the control character U+0000"},
		{"InMap", `{"meta":{"tax_id":"\u001b"}}`, "meta.tax_id", "must not contain the control character U+001B"},
		{"FirstOneNamed", `{"a":"\u0000","b":"\u0001"}`, "a", "must not contain the control character U+0000"},
		{"SyntaxOutranks", `{"name":"\u0000",`, "body", "malformed JSON: unexpected end of input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v map[string]any
			err := decodeJSON([]byte(tc.body), &v)
			var ce *corebank.Error
			if !errors.As(err, &ce) || ce.Kind != corebank.KindInvalid {
				t.Fatalf("decodeJSON(%q) = %v, want a validation error", tc.body, err)
			}
			if diff := cmp.Diff(map[string]string{tc.field: tc.msg}, ce.Fields); diff != "" {
				t.Errorf("decodeJSON(%q) fields (-want +got):\n%s", tc.body, diff)
			}
		})
	}
	for _, body := range []string{`{"name":"line\nbreak\ttab"}`, `{"name":"é 😀 \ud83d\ude00 مرحبا"}`, "{\"name\":\"\u00e9\"}", `{"name":"a\/b\"c\\"}`} {
		var v map[string]any
		if err := decodeJSON([]byte(body), &v); err != nil {
			t.Errorf("decodeJSON(%q) = %v, want nil", body, err)
		}
	}
}

// TestDecodeErrors pins the field and message of each kind of refusal.
func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ body, field, msg string }{
		{`{"name":5}`, "name", "must be a string, not a number"},
		{`{"amount":1.5}`, "amount", "must be an integer in range, not number 1.5"},
		{`{"amount":1e40}`, "amount", "must be an integer in range, not number 1e40"},
		{`{"amount":"1"}`, "amount", "must be an integer in range, not a string"},
		{`{"nested":{"inner":true}}`, "nested.inner", "must be a string, not a boolean"},
		{`{"nested":[]}`, "nested", "must be an object, not an array"},
		{`{"items":{}}`, "items", "must be an array, not an object"},
		{`{"items":[{"x":1},{"x":"2"}]}`, "items.1.x", "must be an integer in range, not a string"},
		{`{"items":[{"x":1},{"y":2}]}`, "items.1.y", "unknown field"},
		{`{"nested":{"inner":"x","outer":1}}`, "nested.outer", "unknown field"},
		{`{"entity_idd":"x"}`, "entity_idd", "unknown field"},
		{`{"a/b~c":1}`, "a/b~c", "unknown field"},
		{`[1,2]`, "body", "must be a JSON object"},
		{`"x"`, "body", "must be a JSON object"},
		{`{"name":`, "name", "malformed JSON: unexpected end of input"},
		{`{"name":5,`, "body", "malformed JSON: unexpected end of input"}, // syntax outranks the type error before it
		{`{"name":"a"} {}`, "body", "unexpected data after the JSON object"},
		{`{"name":5} x`, "name", "must be a string, not a number"}, // the first value's problems come first
		{`{"name":"a"}x`, "body", "unexpected data after the JSON object"},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), "body", "JSON nested deeper than 64 levels"},
	} {
		err := decodeJSON([]byte(tc.body), new(echoReq))
		var ce *corebank.Error
		if !errors.As(err, &ce) || ce.Kind != corebank.KindInvalid {
			t.Errorf("decodeJSON(%s) = %v, want a validation error", tc.body, err)
			continue
		}
		if diff := cmp.Diff(map[string]string{tc.field: tc.msg}, ce.Fields); diff != "" {
			t.Errorf("decodeJSON(%s) fields (-want +got):\n%s", tc.body, diff)
		}
	}
	// A field's own UnmarshalJSON answers in the API's terms already.
	var hook struct {
		EnabledEvents webhooks.EnabledEvents `json:"enabled_events"`
	}
	err := decodeJSON([]byte(`{"enabled_events":{"all":1}}`), &hook)
	var ce *corebank.Error
	if !errors.As(err, &ce) || ce.Fields["enabled_events.all"] == "" {
		t.Errorf("EnabledEvents error = %v, want enabled_events.all named", err)
	}
	var q struct {
		Rate payments.Decimal `json:"rate"`
	}
	if err := decodeJSON([]byte(`{"rate":"1.5"}`), &q); err != nil || q.Rate.String() != "1.5" {
		t.Errorf("decimal string: %v %v", q.Rate, err)
	}
	err = decodeJSON([]byte(`{"rate":"abc"}`), &q)
	if !errors.As(err, &ce) || ce.Fields["rate"] != "must be a decimal number" {
		t.Errorf("bad decimal = %v, want rate named", err)
	}
}

type legacyMethod struct{ _ int }

// MarshalJSON has a pointer receiver: encoding/json calls it only on an
// addressable value.
func (m *legacyMethod) MarshalJSON() ([]byte, error) { return []byte(`"method"`), nil }

type embedded struct {
	Inner  string `json:"inner"`
	Shadow string `json:"shadow"`
}

// shapes covers each place where v2's defaults differ from encoding/json's.
type shapes struct {
	embedded
	Shadow   string                  `json:"shadow"`
	NilSlice []string                `json:"nil_slice"`
	NilMap   map[string]string       `json:"nil_map"`
	Empty    []int                   `json:"empty"`
	Map      map[string]any          `json:"map"`
	OmitInt  int64                   `json:"omit_int,omitempty"`
	OmitBool bool                    `json:"omit_bool,omitempty"`
	OmitPtr  *int                    `json:"omit_ptr,omitempty"`
	OmitMap  map[string]string       `json:"omit_map,omitempty"`
	OmitStr  string                  `json:"omit_str,omitempty"`
	Ptr      *int                    `json:"ptr"`
	Iface    any                     `json:"iface"`
	Dur      time.Duration           `json:"dur"`
	Time     time.Time               `json:"time"`
	Bytes    []byte                  `json:"bytes"`
	Raw      stdjson.RawMessage      `json:"raw"`
	Floats   []float64               `json:"floats"`
	Dec      decimal.Decimal         `json:"dec"`
	PDec     payments.Decimal        `json:"pdec"`
	Method   legacyMethod            `json:"method"`
	MethodIn map[string]legacyMethod `json:"method_in"`
	NoTag    string
	Skip     string `json:"-"`
	hidden   string
}

// oddStrings are strings that need escaping, all valid UTF-8.
var oddStrings = []string{"", `<b>"x" & \ é`, "tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f", "\u2028\u2029", "emoji 😀", "ü/~"}

// TestEncodeMatchesEncodingJSON: writeJSON writes the bytes that
// encoding/json's Encoder with SetEscapeHTML(false) wrote.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	seven := 7
	tm := time.Date(2026, 3, 1, 12, 0, 0, 123000000, time.FixedZone("x", 3600))
	values := []any{
		&shapes{},
		&shapes{embedded: embedded{"in", "shadowed"}, Shadow: "outer", Empty: []int{}, OmitPtr: &seven, Ptr: &seven,
			OmitInt: -1, OmitBool: true, OmitMap: map[string]string{"z": "1", "a": "2", "B": "3"}, OmitStr: "s",
			Map:   map[string]any{"b": 1.5, "a": []any{nil, true, "x"}, "é": map[string]any{}, "A": 1e21, "c": 1e-7},
			Iface: map[string]int{"k": 1}, Dur: 1500 * time.Millisecond, Time: tm, Bytes: []byte("\x00\xff bytes"),
			Raw: stdjson.RawMessage(` { "a" : [ 1 , 2 ] } `), Floats: []float64{0, -0.5, 1e20, 1e21, 123456789.125, 1e-6, 5e-324},
			Dec: decimal.RequireFromString("12.3400"), PDec: payments.Decimal{Decimal: decimal.RequireFromString("-0.001")},
			MethodIn: map[string]legacyMethod{"m": {}}, NoTag: "nt", Skip: "skip", hidden: "h"},
		[]*legacyMethod{{}, nil},
		&envelope[any]{Status: "success", Message: "transfer created", Data: nil},
		&errorBody{Status: "error", Code: "validation_error", Message: "m", Details: map[string]string{"b.1": "x", "a": "<y>"}},
		entities.IssuedKey{Key: entities.APIKey{ID: "k", EntityID: "e", Prefix: "sk_", ReadOnly: true, Created: 3}, Secret: "s&<>"},
		webhooks.EnabledEvents{All: true},
		map[string]any{"n": nil, "s": []string(nil)},
	}
	for _, s := range oddStrings {
		values = append(values, &envelope[map[string]string]{Status: "success", Message: s, Data: map[string]string{s: s}})
	}
	// Transfer, whose response had a hand-written encoder.
	full := payments.Transfer{}
	fillAll(t, reflect.ValueOf(&full).Elem())
	values = append(values, &payments.Transfer{ID: "t1", Meta: map[string]string{}}, &payments.Transfer{ID: "t3"}, &full)
	rnd := rand.New(rand.NewSource(1))
	pick := func() string {
		if rnd.Intn(3) == 0 {
			r := make([]rune, rnd.Intn(12))
			for i := range r {
				r[i] = []rune{0, 0x1f, '"', '\\', '<', '&', 0x7f, 0xe9, 0x2028, 0x1f600, 'a'}[rnd.Intn(11)]
			}
			return string(r)
		}
		return oddStrings[rnd.Intn(len(oddStrings))]
	}
	for i := 0; i < 200; i++ {
		tr := full
		tr.Narration, tr.UniqueReference, tr.StatusReason, tr.FXQuoteID, tr.SourceCurrency = pick(), pick(), pick(), pick(), pick()
		tr.Meta = map[string]string{pick(): pick(), pick(): pick()}
		tr.Amount, tr.SourceAmount = rnd.Int63()-rnd.Int63(), int64(rnd.Intn(3)-1)
		values = append(values, &envelope[*payments.Transfer]{Status: "success", Message: "transfer created", Data: &tr})
	}
	for _, v := range values {
		var want bytes.Buffer
		enc := stdjson.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got := httptest.NewRecorder()
		writeJSON(got, 201, v)
		if got.Code != 201 || got.Body.String() != want.String() {
			t.Errorf("writeJSON(%T):\nwant %s\ngot  %d %s", v, want.String(), got.Code, got.Body)
		}
	}
}

// TestEncodeInvalidUTF8 pins the one byte-level difference from
// encoding/json: an invalid UTF-8 byte (it reaches a body only from a
// request's path, as in "account \xff not found") is written as U+FFFD
// itself rather than as the escape \ufffd. Both are the same JSON string.
func TestEncodeInvalidUTF8(t *testing.T) {
	v := &errorBody{Status: "error", Code: "not_found", Message: "account \xff\xfe not found", Details: emptyDetails}
	got := httptest.NewRecorder()
	writeJSON(got, 404, v)
	want := `{"status":"error","code":"not_found","message":"account ` + "\ufffd\ufffd" + ` not found","details":{}}` + "\n"
	if got.Body.String() != want {
		t.Errorf("writeJSON:\nwant %s\ngot  %s", want, got.Body)
	}
	var a, b any
	old, _ := stdjson.Marshal(v)
	if stdjson.Unmarshal(old, &a) != nil || stdjson.Unmarshal(got.Body.Bytes(), &b) != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("the bodies differ as JSON: %s and %s", old, got.Body)
	}
}

// TestEncodeFailure: a value that cannot be encoded is a plain 500.
func TestEncodeFailure(t *testing.T) {
	got := httptest.NewRecorder()
	writeJSON(got, 200, map[string]any{"c": make(chan int)})
	if got.Code != 500 || got.Body.String() != internalErrorBody {
		t.Errorf("got %d %s", got.Code, got.Body)
	}
}

// fillAll sets every field of the struct v to a non-zero value, so that a
// field added to the type is covered.
func fillAll(t *testing.T, v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("<" + v.Type().Field(i).Name + ">")
		case reflect.Int64, reflect.Int:
			f.SetInt(int64(i + 1))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"k": "v&"}))
		default:
			t.Fatalf("fillAll: field %s of kind %s", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestFlattenMatchesEncodingJSON: a 429 body, whose data is merged into
// its top level (and its rate-limit fields into details), has the bytes encoding/json gave it (HTML escaped, since
// flatten used json.Marshal).
func TestFlattenMatchesEncodingJSON(t *testing.T) {
	body := &errorBody{Status: "error", Code: "rate_limited", Message: "too <many> & more", Details: map[string]string{"k": "<v>"}}
	data := map[string]any{"retry_after": 30, "limit_type": "card<create>", "current_count": 21.5, "limit": 20, "status": "x"}
	want := `{"code":"rate_limited","current_count":21.5,` +
		`"data":{"current_count":21.5,"limit":20,"limit_type":"card\u003ccreate\u003e","retry_after":30,"status":"x"},` +
		`"details":{"current_count":21.5,"k":"\u003cv\u003e","limit":20,"limit_type":"card\u003ccreate\u003e","retry_after":30},"limit":20,"limit_type":"card\u003ccreate\u003e",` +
		`"message":"too \u003cmany\u003e \u0026 more","retry_after":30,"status":"error"}` + "\n"
	flat, ok := flatten(body, data)
	if !ok {
		t.Fatal("flatten refused an object")
	}
	got := httptest.NewRecorder()
	writeJSON(got, 429, flat)
	if got.Body.String() != want {
		t.Errorf("429 body:\nwant %s\ngot  %s", want, got.Body)
	}
	if _, ok := flatten(body, []int{1}); ok {
		t.Error("flatten merged an array")
	}
}

// BenchmarkCheckText measures the text floor on a transfer body: plain
// ASCII (one byte scan) and with non-ASCII text (a token walk).
func BenchmarkCheckText(b *testing.B) {
	ascii := []byte(`{"account_id":"01J0000000000000000000000A","payment_detail_id":"01J0000000000000000000000B","amount":1,"payment_type":"bank-transfer","narration":"invoice 2041","unique_reference":"b-1","meta":{"order":"A-1"}}`)
	accented := bytes.Replace(ascii, []byte("invoice 2041"), []byte("facture café n° 2041"), 1)
	for _, bc := range []struct {
		name string
		body []byte
	}{{"ASCII", ascii}, {"NonASCII", accented}} {
		b.Run(bc.name+"/checkText", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := checkText(bc.body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/decodeJSON", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v payments.NewTransfer
				if err := decodeJSON(bc.body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
