package payments

import (
	"encoding/hex"
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
		got, err := decodeTransferRecord(r.encode(), r.ID)
		if err != nil {
			t.Fatalf("seed %d record %d: %v", seed, i, err)
		}
		if diff := cmp.Diff(&want, got, cmp.AllowUnexported(transferRecord{})); diff != "" {
			t.Fatalf("seed %d record %d: binary vs JSON (-json +binary)\n%s", seed, i, diff)
		}
		legacy, err := decodeTransferRecord(raw, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, legacy, cmp.AllowUnexported(transferRecord{})); diff != "" {
			t.Fatalf("seed %d record %d: a JSON record reads differently\n%s", seed, i, diff)
		}
		b := r.encode()
		for n := 0; n < len(b); n++ {
			if _, err := decodeTransferRecord(b[:n], r.ID); err == nil && n > 0 && b[0] != '{' {
				t.Fatalf("seed %d record %d: %d of %d bytes decoded", seed, i, n, len(b))
			}
		}
	}
}

// TestTransferRecordVersions: records of versions 1 and 2, with the ID, as
// earlier releases stored them (bytes written by that encoder), read as the
// current version 3 of the same transfer does.
func TestTransferRecordVersions(t *testing.T) {
	for _, c := range []struct{ receiver, stored string }{
		{"", "011a30314a5452414e534645523030303030303030303030303030301a30314a4143434f554e54303030303030303030303030303030301a30314a454e544954593030303030303030303030303030303030026370027064076f7574666c6f77035553440a7375636365737366756c026f6b0d626f6f6b2d7472616e736665720472656e74057265662d310000b8171e00f6a1a484ce67c6b1a484ce670001010161013101011a30314a484f4c4430303030303030303030303030303030303041"},
		{"01JRECEIVER000000000000000", "021a30314a5452414e534645523030303030303030303030303030301a30314a4143434f554e54303030303030303030303030303030301a30314a454e544954593030303030303030303030303030303030026370027064076f7574666c6f77035553440a7375636365737366756c026f6b0d626f6f6b2d7472616e736665720472656e74057265662d310000b8171e00f6a1a484ce67c6b1a484ce670001010161013101011a30314a484f4c44303030303030303030303030303030303030411a30314a5245434549564552303030303030303030303030303030"},
	} {
		r := &transferRecord{Transfer: Transfer{ID: "01JTRANSFER000000000000000", AccountID: "01JACCOUNT0000000000000000", EntityID: "01JENTITY00000000000000000", CounterpartyID: "cp", PaymentDetailID: "pd", Type: "outflow", Currency: "USD", Amount: 1500, ApplicableFee: 15, Status: StatusSuccessful, StatusReason: "ok", PaymentType: BookTransfer, Narration: "rent", UniqueReference: "ref-1", Meta: map[string]string{"a": "1"}, Created: 1780000000123, Updated: 1780000001123}, Holds: []string{"01JHOLD000000000000000000A"}, ReceiverID: c.receiver}
		old, err := hex.DecodeString(c.stored)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeTransferRecord(r.encode(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeTransferRecord(old, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(transferRecord{})); diff != "" {
			t.Errorf("version %d (-v3 +stored):\n%s", old[0], diff)
		}
		if n := len(old) - len(r.encode()); n < 26 {
			t.Errorf("version 3 is %d bytes shorter than version %d; want 26 or more (the ID, less an empty receiver)", n, old[0])
		}
	}
}
