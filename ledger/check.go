package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/corebank/corebank/storage"
)

// CheckCursor is where an incremental Check resumes: the journal entries
// it has already proved balanced, and the history it has already compared
// with each balance. The zero value checks everything.
type CheckCursor struct {
	entry string
	seqs  map[string]uint64 // history line count per account at its last check
}

// CheckReport is what Check read, and every inconsistency it found.
type CheckReport struct {
	// Totals is the trial balance per currency (TrialBalance).
	Totals map[string]Balance
	// Accounts and Entries count the balance records and the journal
	// entries read.
	Accounts, Entries int
	// Problems is every broken rule, one sentence each; empty when the
	// ledger is consistent.
	Problems []string
}

// Err is nil for a consistent ledger, and otherwise an error listing the
// first problems.
func (r *CheckReport) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	const most = 5
	msg := strings.Join(r.Problems[:min(most, len(r.Problems))], "; ")
	if len(r.Problems) > most {
		msg += fmt.Sprintf("; and %d more", len(r.Problems)-most)
	}
	return errors.New("ledger check: " + msg)
}

// Check audits the ledger in one read transaction, as an operator's
// integrity check and as the invariant a simulation asserts after every
// step. It proves that:
//   - per currency, the settled balances of all accounts, system accounts
//     included, sum to zero, and so do pending debits minus pending credits;
//   - no customer account without an overdraft has a negative available
//     balance;
//   - each customer account's pending debits and credits equal the sum of
//     the pending holds indexed under it;
//   - each customer account's last history lines record its balance
//     (statements are read from those lines);
//   - every journal entry after cur balances per currency.
//
// It reads every balance record and pending hold (an audit, not a hot
// path) but only the journal entries after cur and the history of the
// accounts that changed since, and advances cur past them, so a caller
// checking repeatedly pays mostly for what is new. A
// storage error is returned as such; broken rules are in the report.
func (s *Service) Check(ctx context.Context, cur *CheckCursor) (*CheckReport, error) {
	if cur == nil {
		cur = &CheckCursor{}
	}
	var next string
	rep, err := storage.View(ctx, s.db, func(tx storage.Tx) (*CheckReport, error) {
		rep := &CheckReport{Totals: map[string]Balance{}}
		var err error
		next, err = s.checkTx(tx, cur, rep)
		return rep, err
	})
	if err != nil {
		return nil, err
	}
	cur.entry = next
	return rep, nil
}

func (s *Service) checkTx(tx storage.Tx, cur *CheckCursor, rep *CheckReport) (string, error) {
	after := cur.entry
	if cur.seqs == nil {
		cur.seqs = map[string]uint64{}
	}
	bad := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	bals := map[string]*balRec{}
	err := tx.Scan(bucketBalances, storage.ScanOptions{}, func(k, v []byte) error {
		r, err := decodeBal(v)
		if err != nil {
			return fmt.Errorf("balance %s: %w", k, err)
		}
		id := string(k)
		bals[id] = r
		rep.Accounts++
		addTotal(rep.Totals, r)
		if r.PendingDebits < 0 || r.PendingCredits < 0 {
			bad("%s has negative pending amounts %+v", id, r.Balance)
		}
		return nil
	})
	if err != nil {
		return after, err
	}
	// System accounts' changes not yet folded into their records.
	err = scanDeltas(tx, nil, false, func(k []byte, id string, d *balRec) error {
		r := bals[id]
		if r == nil {
			r = &balRec{}
			if err := loadSystem(id, r); err != nil {
				bad("balance change %q is not of a system account", k)
				return nil
			}
			bals[id] = r
			rep.Accounts++
		}
		r.add(d)
		addTotal(rep.Totals, d)
		return nil
	})
	if err != nil {
		return after, err
	}
	for cur, t := range rep.Totals {
		if t.Settled != 0 {
			bad("%s settled balances sum to %d, not 0", cur, t.Settled)
		}
		if t.PendingDebits != t.PendingCredits {
			bad("%s pending debits sum to %d but pending credits to %d", cur, t.PendingDebits, t.PendingCredits)
		}
	}

	// Pending holds per customer account, from the pending index.
	pending := map[string]Balance{}
	err = tx.Scan(bucketPending, storage.ScanOptions{}, func(k, v []byte) error {
		acct, _, ok := strings.Cut(string(k), "/")
		if !ok {
			return fmt.Errorf("pending row %q: %w", k, storage.ErrCorrupt)
		}
		row, err := decodePendingValue(v)
		if err != nil {
			return fmt.Errorf("pending row %q: %w", k, err)
		}
		p := pending[acct]
		if row.Type == string(Debit) {
			p.PendingDebits += row.Amount
		} else {
			p.PendingCredits += row.Amount
		}
		pending[acct] = p
		return nil
	})
	if err != nil {
		return after, err
	}
	for id, r := range bals {
		if r.system() {
			continue
		}
		p := pending[id]
		if p.PendingDebits != r.PendingDebits || p.PendingCredits != r.PendingCredits {
			bad("%s records pending %d/%d but its pending holds sum to %d/%d", id, r.PendingDebits, r.PendingCredits, p.PendingDebits, p.PendingCredits)
		}
		if r.Settled-r.PendingDebits < 0 {
			a, err := s.GetAccountTx(tx, id)
			if err != nil {
				return after, fmt.Errorf("account %s: %w", id, err)
			}
			if !a.Configuration.Overdraft {
				bad("%s has available balance %d without an overdraft", id, r.Settled-r.PendingDebits)
			}
		}
		if cur.seqs[id] != r.seq {
			// Lines are only ever added, each bumping seq: an account whose
			// seq has not moved since its last check has nothing new.
			if err := checkHistory(tx, id, r, bad); err != nil {
				return after, err
			}
			cur.seqs[id] = r.seq
		}
		delete(pending, id)
	}
	for id := range pending {
		bad("pending holds are indexed under %s, which has no balance record", id)
	}

	// Journal entries after the cursor balance per currency.
	opts := storage.ScanOptions{}
	if after != "" {
		opts.After = []byte(after)
	}
	last := after
	err = tx.Scan(bucketEntries, opts, func(k, v []byte) error {
		id := string(k)
		e, err := decodeEntry(v, id)
		if err != nil {
			return fmt.Errorf("entry %s: %w", id, err)
		}
		rep.Entries++
		last = id
		sums := map[string]int64{}
		for _, l := range e.Lines {
			cur := l.Currency
			if r := bals[l.AccountID]; r != nil {
				if cur != "" && cur != r.currency {
					bad("entry %s line on %s in %s, an account in %s", id, l.AccountID, cur, r.currency)
				}
				cur = r.currency
			} else {
				bad("entry %s moves %s, which has no balance record", id, l.AccountID)
			}
			if l.Amount <= 0 || l.Amount > MaxAmount {
				bad("entry %s has a line of %d", id, l.Amount)
			}
			switch l.Side {
			case Debit:
				sums[cur] -= l.Amount
			case Credit:
				sums[cur] += l.Amount
			default:
				bad("entry %s has a line on side %q", id, l.Side)
			}
		}
		for cur, sum := range sums {
			if sum != 0 {
				bad("entry %s does not balance in %s: credits minus debits %d", id, cur, sum)
			}
		}
		return nil
	})
	return last, err
}

// checkHistory compares a customer account's balance record with the last
// line of each of its history streams: the settled stream's last line
// carries the whole balance as of its write, and a later pending-stream
// line (a hold placed, voided or expired) the balance after it.
func checkHistory(tx storage.Tx, id string, r *balRec, bad func(string, ...any)) error {
	if r.seq == 0 {
		if r.Balance != (Balance{}) {
			bad("%s has balance %+v but no history", id, r.Balance)
		}
		return nil
	}
	var newest *HistoryLine
	for _, stream := range []byte{histSettled, histPending} {
		l, err := lastLineBefore(tx, id, stream, math.MaxUint64)
		if err != nil {
			return fmt.Errorf("history of %s: %w", id, err)
		}
		if l != nil && (newest == nil || l.Seq > newest.Seq) {
			newest = l
		}
	}
	switch {
	case newest == nil:
		bad("%s has %d history lines recorded but none stored", id, r.seq)
	case newest.Seq != r.seq:
		bad("%s's newest history line is %d, its balance record says %d", id, newest.Seq, r.seq)
	case newest.Balance != r.Balance:
		bad("%s's newest history line records %+v, its balance is %+v", id, newest.Balance, r.Balance)
	}
	return nil
}
