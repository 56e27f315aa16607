package payments

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
)

// TestTransferRecordJSON checks that the hand encoder gives exactly the
// bytes of json.Marshal, odd strings included.
func TestTransferRecordJSON(t *testing.T) {
	base := Transfer{ID: "01J0000000000000000000000A", AccountID: "acc", EntityID: "ent", CounterpartyID: "cp",
		PaymentDetailID: "pd", Type: "outflow", Currency: "USD", Amount: 12345, ApplicableFee: 7,
		Status: StatusPending, StatusReason: ReasonAwaitingProcessing, PaymentType: BankTransfer,
		Narration: "invoice", UniqueReference: "ref-1", Meta: map[string]string{}, Created: 1, Updated: 2}
	odd := []string{"", `<"quoted" & ünïcode \ back>`, "tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f", "\u2028\u2029",
		"bad \xff\xfe utf8 \xe2\x82", "emoji 😀", "-9223372036854775808"}
	cases := []struct {
		name string
		r    transferRecord
	}{
		{"OK", transferRecord{Transfer: base, Holds: []string{"h1"}, DueAt: 1700000000000}},
		{"NoDueNoHolds", transferRecord{Transfer: base}},
		{"EmptyHolds", transferRecord{Transfer: base, Holds: []string{}}},
		{"NilMeta", func() transferRecord { tr := base; tr.Meta = nil; return transferRecord{Transfer: tr} }()},
		{"MetaAndFX", func() transferRecord {
			tr := base
			tr.Meta = map[string]string{"b": "2", "a": "<1>", "": "x"}
			tr.FXQuoteID, tr.SourceCurrency, tr.SourceAmount = "q", "EUR", -99
			return transferRecord{Transfer: tr, Holds: []string{"h1", "h2"}, DueAt: 5}
		}()},
	}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		tr := base
		pick := func() string {
			if rnd.Intn(3) == 0 {
				b := make([]byte, rnd.Intn(12))
				rnd.Read(b)
				return string(b)
			}
			return odd[rnd.Intn(len(odd))]
		}
		tr.Narration, tr.UniqueReference, tr.StatusReason, tr.FXQuoteID = pick(), pick(), pick(), pick()
		tr.Meta = map[string]string{pick(): pick(), pick(): pick()}
		tr.Amount, tr.SourceAmount = rnd.Int63()-rnd.Int63(), int64(rnd.Intn(3)-1)
		cases = append(cases, struct {
			name string
			r    transferRecord
		}{"Random", transferRecord{Transfer: tr, Holds: []string{pick()}, DueAt: int64(rnd.Intn(2))}})
	}
	full := transferRecord{Holds: []string{"h"}, DueAt: 3}
	fillAll(t, reflect.ValueOf(&full.Transfer).Elem())
	cases = append(cases, struct {
		name string
		r    transferRecord
	}{"EveryField", full})
	for _, c := range cases {
		want, err := json.Marshal(&c.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.r.appendJSON(nil); !bytes.Equal(want, got) {
			t.Errorf("%s record:\nwant %s\ngot  %s", c.name, want, got)
		}
		for _, html := range []bool{true, false} {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(&c.r.Transfer); err != nil {
				t.Fatal(err)
			}
			want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if got := c.r.Transfer.AppendJSON([]byte("prefix"), html); !bytes.Equal(append([]byte("prefix"), want...), got) {
				t.Errorf("%s AppendJSON(html %v):\nwant %s\ngot  %s", c.name, html, want, got)
			}
		}
	}
}

// fillAll sets every field of the struct v to a non-zero value, so that a
// field added to Transfer and not to the encoder fails the test.
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
