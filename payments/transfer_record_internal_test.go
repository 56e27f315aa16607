package payments

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTransferRecordEqualsJSON: a transfer record read back from its binary
// form is exactly what its JSON (the plain path, and what earlier releases
// stored) reads back as; a JSON record still reads; no truncation of a
// record decodes or panics.
func TestTransferRecordEqualsJSON(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	str := func() string {
		r := make([]rune, rng.IntN(8))
		for i := range r {
			r[i] = []rune{'a', 'Z', '0', ' ', '"', '\\', 'é', 0x2028, 0x1f600, 0}[rng.IntN(10)]
		}
		return string(r)
	}
	num := func() int64 { return rng.Int64N(1<<53) - rng.Int64N(1<<40) }
	for i := 0; i < 500; i++ {
		r := &transferRecord{Transfer: Transfer{ID: str(), AccountID: str(), EntityID: str(), CounterpartyID: str(),
			PaymentDetailID: str(), Type: str(), Currency: str(), Amount: num(), ApplicableFee: num(), Status: str(),
			StatusReason: str(), PaymentType: str(), Narration: str(), UniqueReference: str(), FXQuoteID: str(),
			SourceCurrency: str(), SourceAmount: num(), Created: num(), Updated: num()}, DueAt: num()}
		switch rng.IntN(3) {
		case 1:
			r.Meta = map[string]string{}
		case 2:
			r.Meta = map[string]string{str(): str(), str(): str()}
		}
		switch rng.IntN(3) {
		case 1:
			r.Holds = []string{}
		case 2:
			r.Holds = []string{str(), str()}
		}
		if rng.IntN(2) == 0 {
			r.ReceiverID = str()
		}
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var want transferRecord
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeTransferRecord(r.encode())
		if err != nil {
			t.Fatalf("seed %d record %d: %v", seed, i, err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Fatalf("seed %d record %d: binary vs JSON (-json +binary)\n%s", seed, i, diff)
		}
		legacy, err := decodeTransferRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, legacy); diff != "" {
			t.Fatalf("seed %d record %d: a JSON record reads differently\n%s", seed, i, diff)
		}
		b := r.encode()
		for n := 0; n < len(b); n++ {
			if _, err := decodeTransferRecord(b[:n]); err == nil && n > 0 && b[0] != '{' {
				t.Fatalf("seed %d record %d: %d of %d bytes decoded", seed, i, n, len(b))
			}
		}
	}
}
