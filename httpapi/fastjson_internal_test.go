package httpapi

import (
	"math/rand"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/payments"
)

// TestDecodeTransferMatchesDecodeJSON checks the hand-parsed fast path of
// POST /transfers against decodeJSON on bodies of every kind: whenever the
// fast path accepts a body, decodeJSON must accept it too and give the
// same struct; decodeTransfer must always agree with decodeJSON, errors
// included.
func TestDecodeTransferMatchesDecodeJSON(t *testing.T) {
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
		`{"unknown":1}`, `{"narration":"a\"b"}`, `{"narration":"a\\b"}`, `{"narration":"\u00e9"}`, `{"narration":"é"}`,
		"{\"narration\":\"a\tb\"}", "{\"narration\":\"\x7f\"}", "{\"narration\":\"\xff\"}", `{"narration":null}`,
		`{"narration":1}`, `{"narration":"a","narration":"b"}`, `{"meta":{"a":"1"},"meta":{"b":"2"}}`,
		`{"meta":null}`, `{"meta":[]}`, `{"meta":{"a":1}}`, `{"meta":{"a":{"b":"c"}}}`, `{"meta":{"a":"1",}}`,
		`{"meta":{"a":"1"}`, `{"narration":"unterminated`, `{"amount":1`, `{"amount":12 3}`,
		`{"account_id":"a"} `, "{\"account_id\":\"a\"}\n\n", `{"account_id":"a"}]`,
	}
	// Mutations of the common body: drop, duplicate or swap bytes.
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
	fast := 0
	for _, body := range bodies {
		var want payments.NewTransfer
		wantErr := decodeJSON([]byte(body), &want)
		var got payments.NewTransfer
		if fastTransfer([]byte(body), &got) {
			fast++
			if wantErr != nil {
				t.Errorf("fast path accepted %q; decodeJSON: %v", body, wantErr)
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fast path on %q (-decodeJSON +fast):\n%s", body, diff)
			}
		}
		var via payments.NewTransfer
		err := decodeTransfer([]byte(body), &via)
		if errString(err) != errString(wantErr) {
			t.Errorf("decodeTransfer(%q) error = %v, want %v", body, err, wantErr)
		}
		if wantErr == nil {
			if diff := cmp.Diff(want, via); diff != "" {
				t.Errorf("decodeTransfer(%q) (-decodeJSON +decodeTransfer):\n%s", body, diff)
			}
		}
	}
	if !fastTransfer([]byte(common), new(payments.NewTransfer)) {
		t.Error("the common body does not take the fast path")
	}
	t.Logf("%d of %d bodies took the fast path", fast, len(bodies))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}

// TestOKTransferMatchesOK checks the hand-encoded POST /transfers response
// against the envelope writeJSON encodes.
func TestOKTransferMatchesOK(t *testing.T) {
	for _, tr := range []*payments.Transfer{
		{ID: "t1", Meta: map[string]string{}},
		{ID: "t2", Narration: `<b>"x" & \ é` + "\u2028\xff", Meta: map[string]string{"<k>": "&v"}, FXQuoteID: "q",
			SourceCurrency: "EUR", SourceAmount: 5, Amount: -1, Created: 1, Updated: 2},
		{ID: "t3"},
	} {
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		if err := ok(want, 201, "transfer created", tr); err != nil {
			t.Fatal(err)
		}
		okTransfer(got, 201, "transfer created", tr)
		if want.Code != got.Code || want.Body.String() != got.Body.String() ||
			want.Header().Get("Content-Type") != got.Header().Get("Content-Type") {
			t.Errorf("okTransfer:\nwant %d %s %s\ngot  %d %s %s", want.Code, want.Header(), want.Body, got.Code, got.Header(), got.Body)
		}
	}
}
