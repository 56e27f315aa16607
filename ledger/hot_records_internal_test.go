package ledger

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestHotRecords checks the binary records of hot_records.go against the
// plain path: each reads back exactly as its JSON round trip does, and its
// bytes are those stores already hold (hex written by the codec before it
// moved onto storage.Encoder, and version 1 of holds and entries).
func TestHotRecords(t *testing.T) {
	r := &balRec{flags: flagNoInflows, currency: "USD", entity: []byte("01JENT0000000000000000000A"), Balance: Balance{Settled: 12345, PendingDebits: 67, PendingCredits: 89}, credits: 20000, debits: 7655, seq: 42, lastMs: 1780000000123}
	h := &Hold{ID: "01JHOLD000000000000000000A", Key: "k-1", DebitAccountID: "01JACCT000000000000000000A", CreditAccountID: "sys:USD:clearing.bank", Currency: "USD", Amount: 500, PostedAmount: 300, Status: HoldPosted, ExpiresAt: 1780000060123, OnTimeout: TimeoutPost, Narration: "card", Reference: "ref-9", Meta: map[string]string{"b": "2", "a": "1"}, Created: 1780000000123, Updated: 1780000001123}
	l := &HistoryLine{Seq: 7, Created: 1780000000123, Kind: LinePost, TxID: h.ID, SettledDelta: -300, PendingDebitsDelta: -500, Balance: Balance{Settled: 1000, PendingCredits: 5}, Credits: 2000, Debits: 1000, Narration: "card", Reference: "ref-9"}
	j := &JournalEntry{ID: "01JENTRY00000000000000000A", Key: "e-1", Narration: "fund", Reference: "r", Meta: map[string]string{"x": "y"}, Created: 1780000000123, Lines: []Line{{AccountID: "sys:USD:clearing.bank", Side: Debit, Amount: 100, Currency: "USD"}, {AccountID: h.DebitAccountID, Side: Credit, Amount: 100, Currency: "USD"}}}

	// plain is v through encoding/json, the form the records would have
	// without this codec.
	plain := func(t *testing.T, v, into any) {
		t.Helper()
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatal(err)
		}
	}
	stored := func(t *testing.T, want string, got []byte) {
		t.Helper()
		if diff := cmp.Diff(want, hex.EncodeToString(got)); diff != "" {
			t.Errorf("stored bytes changed (-want +got):\n%s", diff)
		}
	}
	t.Run("Balance", func(t *testing.T) {
		b := r.appendTo(nil)
		stored(t, "0104035553441a30314a454e543030303030303030303030303030303030303041f2c0018601b201c0b802ce772af6a1a484ce67", b)
		got, err := decodeBal(b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got, cmp.AllowUnexported(balRec{})); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("Hold", func(t *testing.T) {
		b := h.appendTo(nil)
		stored(t, "02036b2d311a30314a4143435430303030303030303030303030303030303041157379733a5553443a636c656172696e672e62616e6b03555344e807d80401b6cbab84ce6701f6a1a484ce67c6b1a484ce670463617264057265662d39020161013101620132", b)
		var want Hold
		plain(t, h, &want)
		// Version 1, with the ID, as earlier releases stored it, still reads.
		v1, _ := hex.DecodeString("011a30314a484f4c4430303030303030303030303030303030303041036b2d311a30314a4143435430303030303030303030303030303030303041157379733a5553443a636c656172696e672e62616e6b03555344e807d80401b6cbab84ce6701f6a1a484ce67c6b1a484ce670463617264057265662d39020161013101620132")
		for _, b := range [][]byte{b, v1} {
			got, err := decodeHold(b, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("version %d (-json +binary):\n%s", b[0], diff)
			}
		}
	})
	t.Run("HistoryLine", func(t *testing.T) {
		// A settled line keeps its text (version 1, the bytes stores hold).
		b := l.appendTo(nil)
		stored(t, "010307f6a1a484ce671a30314a484f4c4430303030303030303030303030303030303041d704e70700d00f000aa01fd00f0463617264057265662d39", b)
		var want HistoryLine
		plain(t, l, &want)
		got, err := decodeLine(b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("settled (-json +binary):\n%s", diff)
		}
		// A pending-stream line leaves its text to its hold (fillText).
		p := *l
		p.Kind, p.SettledDelta = LineHold, 0
		b = p.appendTo(nil)
		stored(t, "020207f6a1a484ce671a30314a484f4c4430303030303030303030303030303030303041"+"00e70700d00f000aa01fd00f", b)
		plain(t, &p, &want)
		want.Narration, want.Reference = "", ""
		if got, err = decodeLine(b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("pending (-json without text +binary):\n%s", diff)
		}
	})
	t.Run("JournalEntry", func(t *testing.T) {
		b := j.encode()
		stored(t, "0203652d31f6a1a484ce670466756e640172010178017902157379733a5553443a636c656172696e672e62616e6b44c801035553441a30314a414343543030303030303030303030303030303030304143c80103555344", b)
		var want JournalEntry
		plain(t, j, &want)
		v1, _ := hex.DecodeString("011a30314a454e54525930303030303030303030303030303030304103652d31f6a1a484ce670466756e640172010178017902157379733a5553443a636c656172696e672e62616e6b44c801035553441a30314a414343543030303030303030303030303030303030304143c80103555344")
		for _, b := range [][]byte{b, v1} {
			got, err := decodeEntry(b, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("version %d (-json +binary):\n%s", b[0], diff)
			}
		}
	})
	t.Run("PendingRow", func(t *testing.T) {
		b := appendPendingValue(nil, Debit, h)
		stored(t, "0144e8070463617264057265662d39", b)
		got, err := decodePendingValue(b)
		if err != nil {
			t.Fatal(err)
		}
		want := StatementTransaction{Type: string(Debit), Amount: h.Amount, Status: StatusPending, Narration: h.Narration, Reference: h.Reference}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("ErrCorrupt", func(t *testing.T) {
		for name, b := range map[string][]byte{"balance": r.appendTo(nil), "hold": h.appendTo(nil), "line": l.appendTo(nil), "entry": j.encode()} {
			for _, bad := range [][]byte{nil, {99}, b[:len(b)/2]} {
				var err error
				switch name {
				case "balance":
					_, err = decodeBal(bad)
				case "hold":
					_, err = decodeHold(bad, h.ID)
				case "line":
					_, err = decodeLine(bad)
				case "entry":
					_, err = decodeEntry(bad, j.ID)
				}
				if err != storage.ErrCorrupt {
					t.Errorf("%s %x: err = %v, want storage.ErrCorrupt", name, bad, err)
				}
			}
		}
	})
}

// TestScratchBuffers checks that records written through the recycled
// scratch buffers are stored exactly as their plain encoding, also when a
// buffer is reused for a longer and then a shorter record.
func TestScratchBuffers(t *testing.T) {
	db := memory.New()
	defer db.Close()
	s := NewService(db, nil)
	recs := []*balRec{
		{currency: "USD", entity: []byte("e1"), Balance: Balance{Settled: 5}},
		{currency: "USC", entity: []byte(strings.Repeat("long entity ", 100)), Balance: Balance{Settled: -1 << 40}, seq: 9},
		{flags: flagSystem, currency: "EUR"},
	}
	for i, r := range recs {
		id := fmt.Sprintf("acct%d", i)
		err := db.Update(context.Background(), func(tx storage.Tx) error { return s.putRecord(tx, id, r) })
		if err != nil {
			t.Fatal(err)
		}
		got, err := storage.View(context.Background(), db, func(tx storage.Tx) ([]byte, error) {
			return tx.Get(bucketBalances, []byte(id))
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r.appendTo(nil), got); diff != "" {
			t.Errorf("record %d (-plain +stored):\n%s", i, diff)
		}
	}
}

// TestHistoryTextFromSource: History shows a pending-stream line stored
// without text (version 2) with its hold's, and one stored with text
// (version 1, as earlier releases wrote them) with its own.
func TestHistoryTextFromSource(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	defer db.Close()
	s := NewService(db, nil)
	bank := s.SystemAccount("USD", PurposeClearingBank)
	a, err := s.CreateAccount(ctx, corebank.System(), NewAccount{EntityID: "ent1", Type: TypeChecking, Currency: "USD", DisplayName: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(ctx, Entry{Narration: "fund", Lines: []Line{{AccountID: bank, Side: Debit, Amount: 50}, {AccountID: a.ID, Side: Credit, Amount: 50}}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"first", "second"} {
		if _, err := s.Hold(ctx, HoldRequest{DebitAccountID: a.ID, CreditAccountID: bank, Amount: 5, Narration: n, Reference: "ref-" + n}); err != nil {
			t.Fatal(err)
		}
	}
	// Store the first hold line as version 1 with text of its own.
	if err := db.Update(ctx, func(tx storage.Tx) error {
		var k, v []byte
		err := tx.Scan(bucketHistory, storage.ScanOptions{Prefix: histPrefix(a.ID, histPending), Limit: 1}, func(key, val []byte) error {
			k, v = bytes.Clone(key), bytes.Clone(val)
			return nil
		})
		if err != nil {
			return err
		}
		if v[0] != lineVersion2 {
			t.Errorf("hold line stored as version %d, want %d", v[0], lineVersion2)
		}
		e := storage.Encoder{B: append([]byte{lineVersion1}, v[1:]...)}
		e.Str("old")
		e.Str("ref-1")
		return tx.Put(bucketHistory, k, e.B)
	}); err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	if err := s.History(ctx, a.ID, nil, func(l HistoryLine) error {
		got = append(got, [2]string{l.Narration, l.Reference})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]string{{"fund", ""}, {"old", "ref-1"}, {"second", "ref-second"}}, got); diff != "" {
		t.Errorf("history text (-want +got):\n%s", diff)
	}
}
