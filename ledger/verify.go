package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/corebank/corebank/storage"
)

// Kinds of storage.Finding the ledger's VerifyStore reports beside the shared
// ones (index, due and corrupt records).
const (
	// FindEntryUnbalanced: a journal entry's debits and credits differ in
	// a currency, or a line is malformed.
	FindEntryUnbalanced = "entry_unbalanced"
	// FindBalanceMismatch: an account's balance record differs from what
	// its journal lines and holds add up to.
	FindBalanceMismatch = "balance_mismatch"
	// FindHistoryMismatch: an account's history lines do not replay to its
	// balance, or skip or repeat a step.
	FindHistoryMismatch = "history_mismatch"
	// FindTrialBalance: a currency's balances do not sum to zero.
	FindTrialBalance = "trial_balance"
	// FindOverdrawn: a customer account without an overdraft has a
	// negative available balance.
	FindOverdrawn = "overdrawn"
)

// HoldSet is the storage.Verifier set Verify puts every pending hold in,
// for the domain that placed it to claim (a card authorization, a
// transfer, an inflow): bank/verify reports those left as unowned.
const HoldSet = "ledger.hold"

// expected is what an account's balance must be, summed from the journal
// and the holds.
type expected struct {
	currency string
	mixed    bool // lines in more than one currency
	Balance
	credits, debits int64
	lines           uint64 // history lines the account must have
}

// VerifyStore checks, in tx, what the ledger promises, and reports each broken
// rule to v:
//   - every journal entry balances per currency, with valid lines;
//   - each account's balance record (a system account's with its unfolded
//     changes) equals the sum of its journal lines and posted holds
//     (settled, cumulative credits and debits) and of its pending holds
//     (pending debits and credits), and per currency the balances sum to
//     zero;
//   - each customer account's history lines are numbered 1..n without a
//     gap, each is the one before plus its change, the last is the balance
//     record, and n is the number of changes its entries and holds made;
//   - no customer account without an overdraft has a negative available
//     balance;
//   - every pending hold is in its customer accounts' pending index, and
//     every row of that index is a pending hold's; a hold with a timeout
//     is queued; every idempotency key names its entry or hold;
//   - accounts, their list index, counters, service BANs and defaults,
//     and account details, their index, counters, numbers and stats agree;
//   - every item of the ledger's due work names a live object.
//
// It streams every bucket with scans and keeps one small sum per account
// (memory grows with the number of accounts, not with entries, holds or
// history), and writes nothing. Pending holds go into v's HoldSet.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	sums := map[string]*expected{}
	at := func(id, currency string) *expected {
		e := sums[id]
		if e == nil {
			e = &expected{}
			sums[id] = e
		}
		switch {
		case currency == "": // a line that names none is in its account's
		case e.currency == "":
			e.currency = currency
		case e.currency != currency:
			e.mixed = true
		}
		return e
	}
	if err := verifyEntries(tx, v, at); err != nil {
		return err
	}
	if err := verifyHolds(tx, v, at); err != nil {
		return err
	}
	if err := verifyPending(tx, v); err != nil {
		return err
	}
	if err := verifyBalances(tx, v, sums); err != nil {
		return err
	}
	if err := verifyIdempotency(tx, v); err != nil {
		return err
	}
	if err := verifyAccounts(tx, v); err != nil {
		return err
	}
	if err := verifyDetails(tx, v); err != nil {
		return err
	}
	if err := verifyOutbox(tx, v); err != nil {
		return err
	}
	return verifyLedgerDue(tx, v)
}

func verifyEntries(tx storage.Tx, v *storage.Verifier, at func(id, currency string) *expected) error {
	return tx.Scan(bucketEntries, storage.ScanOptions{}, func(k, raw []byte) error {
		id := string(k)
		j, err := decodeEntry(raw, id)
		if err != nil {
			v.Report(storage.FindCorrupt, []string{id}, "journal entry does not decode: %v", err)
			return nil
		}
		v.Count("entries", 1)
		sums := map[string]int64{}
		for i, l := range j.Lines {
			if l.Amount <= 0 || l.Amount > MaxAmount {
				v.Report(FindEntryUnbalanced, []string{id, l.AccountID}, "line %d has amount %d", i, l.Amount)
			}
			e := at(l.AccountID, l.Currency)
			e.lines++
			if l.Side == Debit {
				e.Settled -= l.Amount
				e.debits += l.Amount
				sums[l.Currency] -= l.Amount
			} else {
				e.Settled += l.Amount
				e.credits += l.Amount
				sums[l.Currency] += l.Amount
			}
		}
		if len(j.Lines) < 2 {
			v.Report(FindEntryUnbalanced, []string{id}, "entry has %d lines", len(j.Lines))
		}
		for _, cur := range sortedKeys(sums) {
			if sums[cur] != 0 {
				v.Report(FindEntryUnbalanced, []string{id}, "credits minus debits in %s is %d, not 0", cur, sums[cur])
			}
		}
		if j.Key != "" {
			return checkIdem(tx, v, j.Key, idemEntry, id, "entry")
		}
		return nil
	})
}

// checkIdem reports when idempotency key does not name object id of kind.
func checkIdem(tx storage.Tx, v *storage.Verifier, key string, kind byte, id, what string) error {
	raw, err := tx.Get(bucketIdem, []byte(key))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		v.Report(storage.FindIndexMissing, []string{id}, "%s's idempotency key %q is not recorded", what, key)
	case err != nil:
		return err
	case len(raw) < 1 || raw[0] != kind || string(raw[1:]) != id:
		v.Report(storage.FindIndexStale, []string{id}, "%s's idempotency key %q names %q", what, key, raw)
	}
	return nil
}

func verifyHolds(tx storage.Tx, v *storage.Verifier, at func(id, currency string) *expected) error {
	return tx.Scan(bucketHolds, storage.ScanOptions{}, func(k, raw []byte) error {
		id := string(k)
		h, err := decodeHold(raw, id)
		if err != nil {
			v.Report(storage.FindCorrupt, []string{id}, "hold does not decode: %v", err)
			return nil
		}
		v.Count("holds", 1)
		d, c := at(h.DebitAccountID, h.Currency), at(h.CreditAccountID, h.Currency)
		d.lines++
		c.lines++
		switch h.Status {
		case HoldPending:
			d.PendingDebits += h.Amount
			c.PendingCredits += h.Amount
			v.Expect(HoldSet, id, fmt.Sprintf("pending hold of %d %s on %s", h.Amount, h.Currency, h.DebitAccountID))
			if h.ExpiresAt != 0 {
				if ok, err := storage.IsDue(tx, dueHold, h.ExpiresAt, id); err != nil {
					return err
				} else if !ok {
					v.Report(storage.FindDueMissing, []string{id}, "pending hold times out at %d but is not queued", h.ExpiresAt)
				}
			}
		default:
			d.lines++
			c.lines++
			if h.Status == HoldPosted {
				d.Settled -= h.PostedAmount
				d.debits += h.PostedAmount
				c.Settled += h.PostedAmount
				c.credits += h.PostedAmount
			}
		}
		for _, side := range []struct {
			account string
			side    Side
		}{{h.DebitAccountID, Debit}, {h.CreditAccountID, Credit}} {
			if IsSystemAccount(side.account) || h.Status != HoldPending {
				continue
			}
			key := appendPendingKey(nil, side.account, h.Created, id)
			row, err := tx.Get(bucketPending, key)
			if errors.Is(err, storage.ErrNotFound) {
				v.Report(storage.FindIndexMissing, []string{id, side.account}, "pending hold is not in the account's pending index")
				continue
			}
			if err != nil {
				return err
			}
			t, err := decodePendingValue(row)
			if err != nil || t.Type != string(side.side) || t.Amount != h.Amount {
				v.Report(storage.FindIndexStale, []string{id, side.account}, "pending index row says %s %d, the hold %s %d", t.Type, t.Amount, side.side, h.Amount)
			}
		}
		if h.Key != "" {
			return checkIdem(tx, v, h.Key, idemHold, id, "hold")
		}
		return nil
	})
}

// verifyPending checks that every row of the pending index is a pending
// hold's, on one of its sides, at its creation time.
func verifyPending(tx storage.Tx, v *storage.Verifier) error {
	return tx.Scan(bucketPending, storage.ScanOptions{}, func(k, _ []byte) error {
		account, rest, ok := bytes.Cut(k, []byte{'/'})
		if !ok || len(rest) <= 8 {
			v.Report(storage.FindCorrupt, []string{string(k)}, "pending index key is malformed")
			return nil
		}
		ms, _ := storage.Uint64(rest)
		id := string(rest[8:])
		h, err := getHold(tx, id)
		switch {
		case errors.Is(err, ErrHoldNotFound):
			v.Report(storage.FindIndexDangling, []string{id, string(account)}, "pending index row names a hold that does not exist")
		case errors.Is(err, storage.ErrCorrupt):
		case err != nil:
			return err
		case h.Status != HoldPending:
			v.Report(storage.FindIndexStale, []string{id, string(account)}, "pending index row names a hold that is %s", h.Status)
		case h.DebitAccountID != string(account) && h.CreditAccountID != string(account):
			v.Report(storage.FindIndexStale, []string{id, string(account)}, "pending index row is under an account the hold does not move")
		case int64(ms) != h.Created:
			v.Report(storage.FindIndexStale, []string{id, string(account)}, "pending index row is at %d, the hold was created at %d", ms, h.Created)
		}
		return nil
	})
}

// verifyBalances compares every balance record with sums, checks the
// trial balance and each customer account's history.
func verifyBalances(tx storage.Tx, v *storage.Verifier, sums map[string]*expected) error {
	// System accounts' unfolded changes: few accounts, and the fold keeps
	// their changes few.
	deltas := map[string]*balRec{}
	err := scanDeltas(tx, nil, false, func(k []byte, id string, d *balRec) error {
		r := deltas[id]
		if r == nil {
			r = &balRec{currency: d.currency}
			deltas[id] = r
		}
		r.add(d)
		return nil
	})
	if errors.Is(err, storage.ErrCorrupt) {
		v.Report(storage.FindCorrupt, nil, "a system account's balance change does not decode")
	} else if err != nil {
		return err
	}
	totals := map[string]Balance{}
	compare := func(id string, r *balRec) error {
		e := sums[id]
		delete(sums, id)
		if e == nil {
			e = &expected{currency: r.currency}
		}
		t := totals[r.currency]
		t.Settled += r.Settled
		t.PendingDebits += r.PendingDebits
		t.PendingCredits += r.PendingCredits
		totals[r.currency] = t
		switch {
		case e.mixed || e.currency != "" && e.currency != r.currency:
			v.Report(FindBalanceMismatch, []string{id}, "account holds %s but its entries or holds are in %s (or several)", r.currency, e.currency)
		case e.Balance != r.Balance:
			v.Report(FindBalanceMismatch, []string{id}, "balance is settled %d, pending debits %d, pending credits %d; its entries and holds sum to %d, %d, %d",
				r.Settled, r.PendingDebits, r.PendingCredits, e.Settled, e.PendingDebits, e.PendingCredits)
		case e.credits != r.credits || e.debits != r.debits:
			v.Report(FindBalanceMismatch, []string{id}, "cumulative credits %d and debits %d; its entries and holds sum to %d and %d", r.credits, r.debits, e.credits, e.debits)
		}
		if r.system() {
			return nil
		}
		if r.Available() < 0 {
			a, err := accountRecord(tx, id)
			if err == nil && !a.Configuration.Overdraft {
				v.Report(FindOverdrawn, []string{id}, "available balance %d without an overdraft", r.Available())
			} else if err != nil && !errors.Is(err, ErrAccountNotFound) && !errors.Is(err, storage.ErrCorrupt) {
				return err
			}
		}
		if r.seq != e.lines {
			v.Report(FindHistoryMismatch, []string{id}, "balance record counts %d history lines; its entries and holds made %d changes", r.seq, e.lines)
		}
		return verifyHistory(tx, v, id, r)
	}
	err = tx.Scan(bucketBalances, storage.ScanOptions{}, func(k, raw []byte) error {
		id := string(k)
		r, err := decodeBal(raw)
		if err != nil {
			v.Report(storage.FindCorrupt, []string{id}, "balance record does not decode: %v", err)
			delete(sums, id)
			return nil
		}
		if r.system() != IsSystemAccount(id) {
			v.Report(FindBalanceMismatch, []string{id}, "balance record's system flag is %v", r.system())
		}
		if d := deltas[id]; d != nil {
			r.add(d)
			delete(deltas, id)
		}
		if !r.system() {
			v.Count("accounts", 1)
		}
		return compare(id, r)
	})
	if err != nil {
		return err
	}
	// System accounts never folded, then every account named by entries
	// or holds and without a record.
	for _, id := range sortedKeys(deltas) {
		r := &balRec{}
		if err := loadSystem(id, r); err != nil {
			v.Report(FindBalanceMismatch, []string{id}, "balance changes are recorded for an account that is not a system account")
			delete(sums, id)
			continue
		}
		r.add(deltas[id])
		if err := compare(id, r); err != nil {
			return err
		}
	}
	for _, id := range sortedKeys(sums) {
		r := &balRec{}
		if err := loadSystem(id, r); err != nil {
			v.Report(FindBalanceMismatch, []string{id}, "entries or holds move an account that has no balance record")
			continue
		}
		if err := compare(id, r); err != nil {
			return err
		}
	}
	for _, cur := range sortedKeys(totals) {
		t := totals[cur]
		if t.Settled != 0 || t.PendingDebits != t.PendingCredits {
			v.Report(FindTrialBalance, []string{cur}, "settled balances sum to %d, pending debits to %d and pending credits to %d", t.Settled, t.PendingDebits, t.PendingCredits)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// historyPage is how many lines of a stream verifyHistory reads at once.
const historyPage = 256

// lineStream reads one history stream of an account in key order, a page
// at a time.
type lineStream struct {
	tx     storage.Tx
	prefix []byte
	after  []byte
	buf    []streamLine
	done   bool
}

type streamLine struct {
	key  []byte
	line *HistoryLine
	err  error
}

// peek returns the next line, or nil at the end.
func (s *lineStream) peek() (*streamLine, error) {
	if len(s.buf) == 0 && !s.done {
		o := storage.ScanOptions{Prefix: s.prefix, After: s.after, Limit: historyPage}
		err := s.tx.Scan(bucketHistory, o, func(k, v []byte) error {
			l, err := decodeLine(v)
			s.buf = append(s.buf, streamLine{key: bytes.Clone(k), line: l, err: err})
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(s.buf) < historyPage {
			s.done = true
		}
		if len(s.buf) > 0 {
			s.after = s.buf[len(s.buf)-1].key
		}
	}
	if len(s.buf) == 0 {
		return nil, nil
	}
	return &s.buf[0], nil
}

// verifyHistory walks a customer account's two history streams merged in
// Seq order and reports the first line that does not follow from the one
// before, or a last line that is not the balance record r.
func verifyHistory(tx storage.Tx, v *storage.Verifier, id string, r *balRec) error {
	streams := [2]*lineStream{
		{tx: tx, prefix: histPrefix(id, histSettled)},
		{tx: tx, prefix: histPrefix(id, histPending)},
	}
	var prev HistoryLine
	bad := func(format string, args ...any) error {
		v.Report(FindHistoryMismatch, []string{id}, format, args...)
		return nil
	}
	for {
		var next *streamLine
		var from *lineStream
		for _, s := range streams {
			l, err := s.peek()
			if err != nil {
				return err
			}
			if l != nil && (next == nil || l.err != nil || next.line != nil && l.line.Seq < next.line.Seq) {
				next, from = l, s
			}
		}
		if next == nil {
			break
		}
		from.buf = from.buf[1:]
		l := next.line
		if next.err != nil {
			return bad("history line %q does not decode: %v", next.key, next.err)
		}
		stream := histSettled
		if from == streams[1] {
			stream = histPending
		}
		want := prev
		want.Seq++
		want.Balance.Settled += l.SettledDelta
		want.Balance.PendingDebits += l.PendingDebitsDelta
		want.Balance.PendingCredits += l.PendingCreditsDelta
		if l.SettledDelta > 0 {
			want.Credits += l.SettledDelta
		} else {
			want.Debits -= l.SettledDelta
		}
		switch {
		case l.Seq != want.Seq:
			return bad("history line %d follows line %d", l.Seq, prev.Seq)
		case l.Kind.stream() != stream || !bytes.Equal(next.key, histKey(id, stream, l.Created, l.Seq)):
			return bad("history line %d is stored under the wrong key", l.Seq)
		case l.Created < prev.Created:
			return bad("history line %d is older than line %d", l.Seq, prev.Seq)
		case l.Balance != want.Balance:
			return bad("history line %d records %+v, the line before plus its change is %+v", l.Seq, l.Balance, want.Balance)
		case l.Credits != want.Credits || l.Debits != want.Debits:
			return bad("history line %d records credits %d and debits %d, the line before plus its change %d and %d", l.Seq, l.Credits, l.Debits, want.Credits, want.Debits)
		}
		prev = *l
	}
	switch {
	case prev.Seq != r.seq:
		return bad("history ends at line %d, the balance record counts %d", prev.Seq, r.seq)
	case prev.Balance != r.Balance:
		return bad("history's last line records %+v, the balance is %+v", prev.Balance, r.Balance)
	case prev.Credits != r.credits || prev.Debits != r.debits:
		return bad("history's last line records credits %d and debits %d, the balance record %d and %d", prev.Credits, prev.Debits, r.credits, r.debits)
	}
	return nil
}

// verifyIdempotency checks that every idempotency key names an entry or
// hold that carries it.
func verifyIdempotency(tx storage.Tx, v *storage.Verifier) error {
	return tx.Scan(bucketIdem, storage.ScanOptions{}, func(k, raw []byte) error {
		key := string(k)
		if len(raw) < 2 {
			v.Report(storage.FindCorrupt, []string{key}, "idempotency record is empty")
			return nil
		}
		id := string(raw[1:])
		var got string
		switch raw[0] {
		case idemEntry:
			j, err := getEntry(tx, id)
			if errors.Is(err, ErrEntryNotFound) {
				v.Report(storage.FindIndexDangling, []string{id}, "idempotency key %q names an entry that does not exist", key)
				return nil
			} else if err != nil {
				return nil // a corrupt entry is reported by its scan
			}
			got = j.Key
		case idemHold:
			h, err := getHold(tx, id)
			if errors.Is(err, ErrHoldNotFound) {
				v.Report(storage.FindIndexDangling, []string{id}, "idempotency key %q names a hold that does not exist", key)
				return nil
			} else if err != nil {
				return nil
			}
			got = h.Key
		default:
			v.Report(storage.FindCorrupt, []string{key}, "idempotency record of unknown kind %q", raw[0])
			return nil
		}
		if got != key {
			v.Report(storage.FindIndexStale, []string{id}, "idempotency key %q names an object whose key is %q", key, got)
		}
		return nil
	})
}

// verifyAccounts checks accounts against their balance records, list
// index and counters, service BANs and entities' defaults.
func verifyAccounts(tx storage.Tx, v *storage.Verifier) error {
	records := storage.ScanJSON[Account](bucketAccounts, nil, v, "account")
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*Account]{
		Kind: "account",
		Records: func(tx storage.Tx, fn func(string, *Account) error) error {
			return records(tx, func(id string, a *Account) error {
				r, err := loadBase(tx, id)
				switch {
				case errors.Is(err, ErrAccountNotFound):
					v.Report(FindBalanceMismatch, []string{id}, "account has no balance record")
				case err != nil:
				case r.currency != a.Currency || string(r.entity) != a.EntityID || (r.flags&flagDeleted != 0) != (a.Deleted != 0):
					v.Report(FindBalanceMismatch, []string{id}, "balance record says currency %s, entity %s, deleted %v; the account %s, %s, %v",
						r.currency, r.entity, r.flags&flagDeleted != 0, a.Currency, a.EntityID, a.Deleted != 0)
				}
				return fn(id, a)
			})
		},
		Load: func(tx storage.Tx, id string) (*Account, error) {
			a, err := accountRecord(tx, id)
			if errors.Is(err, ErrAccountNotFound) {
				return nil, storage.ErrNotFound
			}
			return a, err
		},
		Keys: func(_ storage.Tx, a *Account) ([]storage.KV, error) {
			id := []byte(a.ID)
			kvs := []storage.KV{{Bucket: bucketBANs, Key: []byte(a.ServiceBAN), Value: id}}
			if a.IsDefault {
				kvs = append(kvs, storage.KV{Bucket: bucketDefaults, Key: []byte(a.EntityID), Value: id})
			}
			if a.Deleted == 0 {
				for _, p := range indexPrefixes(a.EntityID, a.Currency, a.Type) {
					kvs = append(kvs, storage.KV{Bucket: bucketIndex, Key: []byte(p + a.ID)})
				}
			}
			return kvs, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketIndex, ID: storage.LastPart},
			{Bucket: bucketBANs, ID: storage.ValueID},
			{Bucket: bucketDefaults, ID: storage.ValueID},
		},
	})
	if err != nil {
		return err
	}
	return verifyCounts(tx, v, "account", bucketIndex, bucketCounts)
}

// verifyCounts checks the counters kept beside a list index whose keys
// are a prefix ending in '/' and an ID: each prefix's counter equals the
// number of keys under it, and every counter counts some.
func verifyCounts(tx storage.Tx, v *storage.Verifier, kind string, index, counts storage.Bucket) error {
	var prefix []byte
	n := uint64(0)
	flush := func() error {
		if prefix == nil {
			return nil
		}
		raw, err := tx.Get(counts, prefix)
		var c uint64
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		default:
			if c, err = storage.Uint64(raw); err != nil {
				v.Report(storage.FindCorrupt, []string{string(prefix)}, "%s counter does not decode", kind)
				return nil
			}
		}
		if c != n {
			v.Report(storage.FindCountMismatch, []string{string(prefix)}, "%s counter says %d, the index holds %d", kind, c, n)
		}
		return nil
	}
	err := tx.Scan(index, storage.ScanOptions{}, func(k, _ []byte) error {
		i := bytes.LastIndexByte(k, '/')
		if i < 0 {
			return nil // reported by the index check
		}
		if !bytes.Equal(k[:i+1], prefix) {
			if err := flush(); err != nil {
				return err
			}
			prefix, n = bytes.Clone(k[:i+1]), 0
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	return tx.Scan(counts, storage.ScanOptions{}, func(k, raw []byte) error {
		counted := false
		err := tx.Scan(index, storage.ScanOptions{Prefix: k, Limit: 1}, func(key, _ []byte) error {
			counted = !bytes.Contains(key[len(k):], []byte{'/'})
			return nil
		})
		if err != nil || counted {
			return err
		}
		c, _ := storage.Uint64(raw)
		v.Report(storage.FindCountMismatch, []string{string(k)}, "%s counter says %d, the index holds none", kind, c)
		return nil
	})
}

// verifyDetails checks account details against their list index and
// counters, their numbers and their stats.
func verifyDetails(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*detailsRecord]{
		Kind:    "account details",
		Records: storage.ScanJSON[detailsRecord](bucketDetails, nil, v, "account details"),
		Load: func(tx storage.Tx, id string) (*detailsRecord, error) {
			return storage.LoadJSON[detailsRecord](tx, bucketDetails, []byte(id), storage.ErrNotFound)
		},
		Keys: func(tx storage.Tx, r *detailsRecord) ([]storage.KV, error) {
			var kvs []storage.KV
			if r.Deleted == 0 {
				for _, p := range detailsIndexPrefixes(&r.AccountDetails) {
					kvs = append(kvs, storage.KV{Bucket: bucketDetailsIndex, Key: []byte(p + r.ID)})
				}
			}
			for _, n := range []string{r.AccountNumber, r.PendingAccountNumber, r.IBAN} {
				if n != "" {
					kvs = append(kvs, storage.KV{Bucket: bucketDetailsNums, Key: []byte(normalizeNumber(n)), Value: []byte(r.ID)})
				}
			}
			return kvs, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketDetailsIndex, ID: storage.LastPart},
			// Numbers are never released (never reissued): a number the
			// details held once and hold no more still names them.
			{Bucket: bucketDetailsNums, ID: storage.ValueID, Loose: true},
			{Bucket: bucketDetailsStats, ID: func(k, _ []byte) string { return string(k) }, Loose: true},
		},
	})
	if err != nil {
		return err
	}
	return verifyCounts(tx, v, "account details", bucketDetailsIndex, bucketDetailsCounts)
}

// verifyOutbox checks that every unread mark names an event.
func verifyOutbox(tx storage.Tx, v *storage.Verifier) error {
	return tx.Scan(bucketUnread, storage.ScanOptions{}, func(k, _ []byte) error {
		if ok, err := storage.Exists(tx, bucketOutbox, k); err != nil || ok {
			return err
		}
		v.Report(storage.FindIndexDangling, []string{string(k)}, "unread mark names an event not in the outbox")
		return nil
	})
}

// verifyLedgerDue checks the ledger's due work: a hold's timeout names a
// pending hold expiring then, account details' expiry names details not
// yet inactive expiring then, and the fold is the one item it queues.
func verifyLedgerDue(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyDue(tx, v, dueHold, func(id string, at int64) (string, error) {
		h, err := getHold(tx, id)
		switch {
		case errors.Is(err, ErrHoldNotFound):
			return "no such hold", nil
		case errors.Is(err, storage.ErrCorrupt):
			return "", nil
		case err != nil:
			return "", err
		case h.Status != HoldPending:
			return "the hold is " + string(h.Status), nil
		case h.ExpiresAt != at:
			return fmt.Sprintf("the hold times out at %d", h.ExpiresAt), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	err = storage.VerifyDue(tx, v, dueDetails, func(id string, at int64) (string, error) {
		r, err := storage.LoadJSON[detailsRecord](tx, bucketDetails, []byte(id), storage.ErrNotFound)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return "no such account details", nil
		case err != nil:
			return "", nil // reported by the details' scan
		case r.Deleted != 0 || r.Status == DetailsInactive:
			return "the account details are " + r.Status, nil
		case r.ExpiresAt == nil || *r.ExpiresAt != at:
			return "the account details expire at another time", nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, dueFold, func(id string, _ int64) (string, error) {
		if id != foldID {
			return "the fold's only item is " + foldID, nil
		}
		return "", nil
	})
}

// FindHoldMismatch: a domain object and the ledger hold it placed
// disagree (the hold is missing, in another state, of another amount or
// on another account).
const FindHoldMismatch = "hold_mismatch"

// HoldClaim is what a domain object (its Kind and ID in Owner, "card
// transaction 01J...") says of a hold it placed, for VerifyHold.
type HoldClaim struct {
	Kind, Owner string
	Hold        string
	// Status is the state the hold must be in; "" is any but pending (the
	// owner is done with it).
	Status HoldStatus
	// Debit and Credit, when set, are the accounts the hold must debit
	// and credit; Amount, when positive, what it must hold.
	Debit, Credit string
	Amount        int64
}

// VerifyHold claims c.Hold in v's HoldSet for its owner and reports, as
// FindHoldMismatch, a hold that is missing or disagrees with c.
func VerifyHold(tx storage.Tx, v *storage.Verifier, c HoldClaim) error {
	v.Claim(HoldSet, c.Hold)
	h, err := getHold(tx, c.Hold)
	ids := []string{c.Owner, c.Hold}
	switch {
	case errors.Is(err, ErrHoldNotFound):
		v.Report(FindHoldMismatch, ids, "%s's hold does not exist", c.Kind)
	case errors.Is(err, storage.ErrCorrupt):
	case err != nil:
		return err
	case c.Status == "" && h.Status == HoldPending:
		v.Report(FindHoldMismatch, ids, "%s is done but its hold is still pending", c.Kind)
	case c.Status != "" && h.Status != c.Status:
		v.Report(FindHoldMismatch, ids, "%s's hold is %s, want %s", c.Kind, h.Status, c.Status)
	case c.Debit != "" && h.DebitAccountID != c.Debit:
		v.Report(FindHoldMismatch, ids, "%s's hold debits %s, want %s", c.Kind, h.DebitAccountID, c.Debit)
	case c.Credit != "" && h.CreditAccountID != c.Credit:
		v.Report(FindHoldMismatch, ids, "%s's hold credits %s, want %s", c.Kind, h.CreditAccountID, c.Credit)
	case c.Amount > 0 && h.Amount != c.Amount:
		v.Report(FindHoldMismatch, ids, "%s's hold is of %d, want %d", c.Kind, h.Amount, c.Amount)
	}
	return nil
}
