package ledger

import (
	"context"
	"encoding/binary"
	"sort"

	"github.com/corebank/corebank/storage"
)

// LineKind says what wrote a HistoryLine.
type LineKind string

// Line kinds. Entry and post lines change the settled balance and appear on
// statements; hold, void and expire lines change only pending amounts.
const (
	LineEntry  LineKind = "entry"  // a journal entry line (Post)
	LineHold   LineKind = "hold"   // a hold was placed
	LinePost   LineKind = "post"   // a hold was posted (settled, remainder released)
	LineVoid   LineKind = "void"   // a hold was voided
	LineExpire LineKind = "expire" // a hold timed out and voided itself
)

// lineKindCode is the stored code of a kind (its index in lineKindNames).
func lineKindCode(k LineKind) byte {
	switch k {
	case LineEntry:
		return 1
	case LineHold:
		return 2
	case LinePost:
		return 3
	case LineVoid:
		return 4
	case LineExpire:
		return 5
	}
	return 0
}

var lineKindNames = [...]LineKind{"", LineEntry, LineHold, LinePost, LineVoid, LineExpire}

// History streams: settled lines (statements) and pending-only lines.
const (
	histSettled byte = 'S'
	histPending byte = 'P'
)

func (k LineKind) stream() byte {
	if k == LineEntry || k == LinePost {
		return histSettled
	}
	return histPending
}

// HistoryLine is one change to one account's balance, with the balance
// after it. Every journal line and every hold state change writes one, so
// the history of an account replays its balance exactly.
type HistoryLine struct {
	// Seq numbers the account's lines from 1 without gaps.
	Seq uint64 `json:"seq"`
	// Created is when the change was written (Unix ms, never decreasing per account).
	Created int64    `json:"created"`
	Kind    LineKind `json:"kind"`
	// TxID is the journal entry ID (entry lines) or the hold ID.
	TxID string `json:"tx_id"`
	// SettledDelta, PendingDebitsDelta and PendingCreditsDelta are the change.
	SettledDelta        int64 `json:"settled_delta"`
	PendingDebitsDelta  int64 `json:"pending_debits_delta"`
	PendingCreditsDelta int64 `json:"pending_credits_delta"`
	// Balance is the account's balance after the change.
	Balance Balance `json:"balance"`
	// Credits and Debits are the cumulative settled credits and debits after
	// the change; the difference of two lines' values is the total between them.
	Credits   int64  `json:"credits"`
	Debits    int64  `json:"debits"`
	Narration string `json:"narration,omitempty"`
	Reference string `json:"reference,omitempty"`
}

// histPrefix is "<account>/<stream>/".
func histPrefix(account string, stream byte) []byte {
	k := make([]byte, 0, len(account)+3+16)
	k = append(k, account...)
	return append(k, '/', stream, '/')
}

func histKey(account string, stream byte, ms int64, seq uint64) []byte {
	k := histPrefix(account, stream)
	k = storage.AppendInt64(k, ms)
	return storage.AppendUint64(k, seq)
}

// writeLine applies l's deltas to r, stamps l with the account's next seq,
// the time and the balance after, and stores it. The caller stores r.
func (s *Service) writeLine(tx storage.Tx, account string, r *balRec, nowMs int64, l *HistoryLine) error {
	r.Settled += l.SettledDelta
	r.PendingDebits += l.PendingDebitsDelta
	r.PendingCredits += l.PendingCreditsDelta
	if l.SettledDelta > 0 {
		r.credits += l.SettledDelta
	} else {
		r.debits -= l.SettledDelta
	}
	r.seq++
	if nowMs < r.lastMs {
		nowMs = r.lastMs // keep each account's history in time order
	}
	r.lastMs = nowMs
	l.Seq = r.seq
	l.Created = nowMs
	l.Balance = r.Balance
	l.Credits = r.credits
	l.Debits = r.debits
	if r.system() {
		// A system account keeps no history (see doc.go, "Double entry"):
		// every movement crosses one, so its lines would be a third of the
		// store, and no statement or API reads them.
		return nil
	}
	bp := s.buf()
	b := append(*bp, account...)
	b = append(b, '/', l.Kind.stream(), '/')
	b = storage.AppendInt64(b, nowMs)
	b = storage.AppendUint64(b, l.Seq)
	k := len(b)
	b = l.appendTo(b)
	err := tx.Put(bucketHistory, b[:k], b[k:])
	s.release(bp, b)
	return err
}

// fillText sets the Narration and Reference of the pending-stream lines,
// stored without them (version 2), from their holds: one read per line. A
// line with neither was either stored with them empty or without them, and
// reading its hold answers both alike.
func fillText(tx storage.Tx, lines []*HistoryLine) error {
	for _, l := range lines {
		if l.Kind.stream() != histPending || l.Narration != "" || l.Reference != "" {
			continue
		}
		h, err := getHold(tx, l.TxID)
		if err != nil {
			return err
		}
		l.Narration, l.Reference = h.Narration, h.Reference
	}
	return nil
}

// lastLineBefore returns the account's last line in stream stamped before
// msExclusive, or nil; a pending-stream line comes without its Narration
// and Reference (fillText).
func lastLineBefore(tx storage.Tx, account string, stream byte, msExclusive uint64) (*HistoryLine, error) {
	p := histPrefix(account, stream)
	var out *HistoryLine
	err := tx.Scan(bucketHistory, storage.ScanOptions{
		Prefix:  p,
		After:   binary.BigEndian.AppendUint64(append([]byte(nil), p...), msExclusive),
		Reverse: true,
		Limit:   1,
	}, func(_, v []byte) error {
		var err error
		out, err = decodeLine(v)
		return err
	})
	return out, err
}

// History calls fn for the account's history lines in Seq order; a
// system account has none. When
// after is non-nil (the last line the caller already has) the walk resumes
// after it with one seek per stream; otherwise it reads the whole history,
// O(n): for audits, exports and tests. It returns ErrAccountNotFound for an
// unknown account; an error from fn ends the walk and is returned. fn runs
// after the read transaction ends, so it may call the ledger.
func (s *Service) History(ctx context.Context, accountID string, after *HistoryLine, fn func(HistoryLine) error) error {
	lines, err := storage.View(ctx, s.db, func(tx storage.Tx) ([]*HistoryLine, error) {
		if r, err := loadBal(tx, accountID); err != nil || r.system() {
			return nil, err // lines an earlier release wrote are not read
		}
		var lines []*HistoryLine
		for _, stream := range []byte{histSettled, histPending} {
			o := storage.ScanOptions{Prefix: histPrefix(accountID, stream)}
			if after != nil {
				// Per account, time never decreases as Seq grows, so every
				// later line sorts after (Created, Seq) in either stream.
				o.After = histKey(accountID, stream, after.Created, after.Seq)
			}
			err := tx.Scan(bucketHistory, o, func(_, v []byte) error {
				l, err := decodeLine(v)
				if err != nil {
					return err
				}
				lines = append(lines, l)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		sort.Slice(lines, func(i, j int) bool { return lines[i].Seq < lines[j].Seq })
		return lines, fillText(tx, lines)
	})
	if err != nil {
		return err
	}
	for _, l := range lines {
		if err := fn(*l); err != nil {
			return err
		}
	}
	return nil
}
