package ledger

import "github.com/corebank/corebank/storage"

// The records a transfer reads and writes (balances, holds, history lines,
// pending statement rows, journal entries) are stored with storage's
// binary codec rather than JSON, because JSON would cap the ledger far
// below its target of 100,000 two-phase transfers/s. Measured in one run,
// alternating, on the same shared 2-core machine (go test ./ledger -run
// '^$' -bench 'BenchmarkTwoPhaseTransfer$/memory/sequential' -benchtime
// 2s, a hold and its post per transfer): this form 145,000-155,000
// transfers/s (about 6.5 us, 24 allocs per transfer); encoding/json for
// balances, holds and history lines at best 39,000 transfers/s (about
// 26 us, 86 allocs). TestHotRecords checks that each record reads back
// exactly as its JSON round trip does, and that the stored bytes have not
// changed, so existing stores still read.
//
// Each record starts with a version byte; fields follow in a fixed order.
// Holds and journal entries are version 2: version 1 without the ID, which
// is the record's key (a 27-byte copy per record); version 1 still reads.
//
// Hot reads and writes build their keys and values in scratch buffers
// recycled through Service.bufs (backends copy both on Put, so a buffer is
// free right after). In the same kind of run, without them (a fresh
// buffer per key) a transfer cost 43 allocs and 12 KB instead of 24 and
// 2.2 KB, and 52,000-88,000 transfers/s against 95,000-107,000 alongside.
// TestScratchBuffers checks that a record written through them is stored
// byte for byte as the plain encoding.

// buf returns a scratch buffer; give it back with release.
func (s *Service) buf() *[]byte {
	if b, ok := s.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 512)
	return &b
}

// release recycles the buffer bp, now grown to b, unless it grew large.
func (s *Service) release(bp *[]byte, b []byte) {
	if cap(b) <= 16<<10 {
		*bp = b[:0]
		s.bufs.Put(bp)
	}
}

const balVersion = 1

func (r *balRec) appendTo(b []byte) []byte {
	e := storage.Encoder{B: b}
	e.Byte(balVersion)
	e.Byte(r.flags)
	e.Str(r.currency)
	e.Bytes(r.entity)
	e.Varint(r.Settled)
	e.Varint(r.PendingDebits)
	e.Varint(r.PendingCredits)
	e.Varint(r.credits)
	e.Varint(r.debits)
	e.Uvarint(r.seq)
	e.Varint(r.lastMs)
	return e.B
}

func decodeBal(b []byte) (*balRec, error) {
	r := &balRec{}
	if err := r.decode(b); err != nil {
		return nil, err
	}
	return r, nil
}

// decode fills r from its stored form.
func (r *balRec) decode(b []byte) error {
	d := storage.Decoder{B: b}
	if d.Byte() != balVersion {
		return storage.ErrCorrupt
	}
	r.flags = d.Byte()
	r.currency = readCurrency(&d)
	r.entity = d.Raw()
	r.Settled = d.Varint()
	r.PendingDebits = d.Varint()
	r.PendingCredits = d.Varint()
	r.credits = d.Varint()
	r.debits = d.Varint()
	r.seq = d.Uvarint()
	r.lastMs = d.Varint()
	return d.Err
}

const (
	holdVersion1 = 1 // with the ID
	holdVersion  = 2 // the ID is the key
)

func (h *Hold) appendTo(b []byte) []byte {
	e := storage.Encoder{B: b}
	e.Byte(holdVersion)
	e.Str(h.Key)
	e.Str(h.DebitAccountID)
	e.Str(h.CreditAccountID)
	e.Str(h.Currency)
	e.Varint(h.Amount)
	e.Varint(h.PostedAmount)
	var st byte
	for i, n := range holdStatusNames {
		if n == h.Status {
			st = byte(i)
		}
	}
	e.Byte(st)
	e.Varint(h.ExpiresAt)
	if h.OnTimeout == TimeoutPost {
		e.Byte(1)
	} else {
		e.Byte(0)
	}
	e.Varint(h.Created)
	e.Varint(h.Updated)
	e.Str(h.Narration)
	e.Str(h.Reference)
	e.StrMap(h.Meta)
	return e.B
}

// decodeHold decodes a stored hold whose key is id, sharing id's bytes for
// the ID instead of allocating a copy.
func decodeHold(b []byte, id string) (*Hold, error) {
	d := storage.Decoder{B: b}
	h := &Hold{ID: id}
	switch d.Byte() {
	case holdVersion:
	case holdVersion1:
		h.ID = d.StrKnown(id)
	default:
		return nil, storage.ErrCorrupt
	}
	h.Key = d.Str()
	h.DebitAccountID = d.Str()
	h.CreditAccountID = d.Str()
	h.Currency = readCurrency(&d)
	h.Amount = d.Varint()
	h.PostedAmount = d.Varint()
	st := d.Byte()
	if int(st) >= len(holdStatusNames) {
		return nil, storage.ErrCorrupt
	}
	h.Status = holdStatusNames[st]
	h.ExpiresAt = d.Varint()
	h.OnTimeout = TimeoutVoid
	if d.Byte() == 1 {
		h.OnTimeout = TimeoutPost
	}
	h.Created = d.Varint()
	h.Updated = d.Varint()
	h.Narration = d.Str()
	h.Reference = d.Str()
	h.Meta = d.StrMap()
	return h, d.Err
}

const pendingVersion = 1

// appendPendingValue appends the statement row of a pending hold, as the
// account on side sees it.
func appendPendingValue(b []byte, side Side, h *Hold) []byte {
	e := storage.Encoder{B: b}
	e.Byte(pendingVersion)
	if side == Debit {
		e.Byte('D')
	} else {
		e.Byte('C')
	}
	e.Varint(h.Amount)
	e.Str(h.Narration)
	e.Str(h.Reference)
	return e.B
}

// decodePendingValue decodes a row appendPendingValue wrote, leaving the ID
// and time, which its key holds, to the caller.
func decodePendingValue(v []byte) (StatementTransaction, error) {
	d := storage.Decoder{B: v}
	if d.Byte() != pendingVersion {
		return StatementTransaction{}, storage.ErrCorrupt
	}
	t := StatementTransaction{Type: string(Credit), Status: StatusPending}
	if d.Byte() == 'D' {
		t.Type = string(Debit)
	}
	t.Amount = d.Varint()
	t.Narration = d.Str()
	t.Reference = d.Str()
	return t, d.Err
}

// A history line of the pending stream (hold, void, expire) is version 2:
// version 1 without Narration and Reference, which its hold (TxID) holds.
// Statements never read those lines; History fills the text in from the
// hold (fillText). Settled lines, which statements page through, keep
// their text (version 1) so that a statement page reads nothing else.
const (
	lineVersion1 = 1 // with Narration and Reference
	lineVersion2 = 2 // without
)

func (l *HistoryLine) appendTo(b []byte) []byte {
	withText := l.Kind.stream() == histSettled
	e := storage.Encoder{B: b}
	if withText {
		e.Byte(lineVersion1)
	} else {
		e.Byte(lineVersion2)
	}
	e.Byte(lineKindCode(l.Kind))
	e.Uvarint(l.Seq)
	e.Varint(l.Created)
	e.Str(l.TxID)
	e.Varint(l.SettledDelta)
	e.Varint(l.PendingDebitsDelta)
	e.Varint(l.PendingCreditsDelta)
	e.Varint(l.Balance.Settled)
	e.Varint(l.Balance.PendingDebits)
	e.Varint(l.Balance.PendingCredits)
	e.Varint(l.Credits)
	e.Varint(l.Debits)
	if withText {
		e.Str(l.Narration)
		e.Str(l.Reference)
	}
	return e.B
}

// decodeLine decodes a stored line; a version 2 line comes without its
// Narration and Reference (see fillText).
func decodeLine(b []byte) (*HistoryLine, error) {
	d := storage.Decoder{B: b}
	version := d.Byte()
	if version != lineVersion1 && version != lineVersion2 {
		return nil, storage.ErrCorrupt
	}
	l := &HistoryLine{}
	k := d.Byte()
	if int(k) >= len(lineKindNames) || k == 0 {
		return nil, storage.ErrCorrupt
	}
	l.Kind = lineKindNames[k]
	l.Seq = d.Uvarint()
	l.Created = d.Varint()
	l.TxID = d.Str()
	l.SettledDelta = d.Varint()
	l.PendingDebitsDelta = d.Varint()
	l.PendingCreditsDelta = d.Varint()
	l.Balance.Settled = d.Varint()
	l.Balance.PendingDebits = d.Varint()
	l.Balance.PendingCredits = d.Varint()
	l.Credits = d.Varint()
	l.Debits = d.Varint()
	if version == lineVersion1 {
		l.Narration = d.Str()
		l.Reference = d.Str()
	}
	if d.Err == nil && len(d.B) != 0 {
		return nil, storage.ErrCorrupt
	}
	return l, d.Err
}

const (
	entryVersion1 = 1 // with the ID
	entryVersion  = 2 // the ID is the key
)

func (j *JournalEntry) encode() []byte {
	e := storage.Encoder{B: make([]byte, 0, 96+len(j.Lines)*40)}
	e.Byte(entryVersion)
	e.Str(j.Key)
	e.Varint(j.Created)
	e.Str(j.Narration)
	e.Str(j.Reference)
	e.StrMap(j.Meta)
	e.Uvarint(uint64(len(j.Lines)))
	for _, l := range j.Lines {
		e.Str(l.AccountID)
		if l.Side == Debit {
			e.Byte('D')
		} else {
			e.Byte('C')
		}
		e.Varint(l.Amount)
		e.Str(l.Currency)
	}
	return e.B
}

// decodeEntry decodes the stored entry whose key is id.
func decodeEntry(b []byte, id string) (*JournalEntry, error) {
	d := storage.Decoder{B: b}
	j := &JournalEntry{ID: id}
	switch d.Byte() {
	case entryVersion:
	case entryVersion1:
		j.ID = d.StrKnown(id)
	default:
		return nil, storage.ErrCorrupt
	}
	j.Key = d.Str()
	j.Created = d.Varint()
	j.Narration = d.Str()
	j.Reference = d.Str()
	j.Meta = d.StrMap()
	n := d.Uvarint()
	if n > uint64(len(d.B)) {
		return nil, storage.ErrCorrupt
	}
	j.Lines = make([]Line, n)
	for i := range j.Lines {
		l := &j.Lines[i]
		l.AccountID = d.Str()
		if d.Byte() == 'D' {
			l.Side = Debit
		} else {
			l.Side = Credit
		}
		l.Amount = d.Varint()
		l.Currency = d.Str()
	}
	return j, d.Err
}
