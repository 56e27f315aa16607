package ledger

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Balance is an account's full balance. All amounts are signed
// credit-minus-debit in the currency's smallest unit, so per currency the
// sum of Settled over every account (system accounts included) is zero, and
// so is the sum of Current.
type Balance struct {
	// Settled is the sum of posted credits minus posted debits.
	Settled int64 `json:"settled"`
	// PendingDebits is the sum of pending holds debiting the account.
	PendingDebits int64 `json:"pending_debits"`
	// PendingCredits is the sum of pending holds crediting the account.
	PendingCredits int64 `json:"pending_credits"`
}

// Available is Settled minus PendingDebits: what the account may spend.
func (b Balance) Available() int64 { return b.Settled - b.PendingDebits }

// Current is Settled plus PendingCredits minus PendingDebits.
func (b Balance) Current() int64 { return b.Settled + b.PendingCredits - b.PendingDebits }

// Summary returns the API form {available, current}.
func (b Balance) Summary() AccountBalance {
	return AccountBalance{Available: b.Available(), Current: b.Current()}
}

// AccountBalance is the balance object of an Account as the API shows it.
type AccountBalance struct {
	Available int64 `json:"available"`
	Current   int64 `json:"current"`
}

// Balance record flags.
const (
	flagSystem     = 1 << 0
	flagDeleted    = 1 << 1
	flagNoInflows  = 1 << 2
	flagNoOutflows = 1 << 3
)

// balRec is the hot per-account record every movement reads and writes.
type balRec struct {
	flags    byte
	currency string
	entity   []byte // owner's entity ID; may alias a stored value, never modified
	Balance
	credits int64 // cumulative settled credits
	debits  int64 // cumulative settled debits
	seq     uint64
	lastMs  int64
}

func (r *balRec) system() bool { return r.flags&flagSystem != 0 }

// System account purposes. Any purpose matching [a-z0-9._-]{1,64} is
// accepted; these are the ones corebank uses.
const (
	PurposeClearingBank       = "clearing.bank"
	PurposeClearingMomo       = "clearing.momo"
	PurposeClearingStablecoin = "clearing.stablecoin"
	PurposeClearingBook       = "clearing.book"
	PurposeClearingCard       = "clearing.card"
	PurposeFees               = "fees"
	PurposeFX                 = "fx"
	PurposeSuspense           = "suspense"
)

const systemPrefix = "sys:"

// SystemAccount returns the ID of the system account for currency and
// purpose ("sys:USD:clearing.bank"). System accounts are created lazily by
// the first movement that names them, may go negative, have no Account
// record (GetAccount returns ErrAccountNotFound; GetBalance works) and are
// the other side of every movement into or out of the ledger, so every
// movement is double-entry. An ID naming an unsupported currency or a
// malformed purpose is reported as ErrAccountNotFound when used.
func (s *Service) SystemAccount(currency, purpose string) string {
	return systemPrefix + currency + ":" + purpose
}

// IsSystemAccount reports whether id names a system account.
func IsSystemAccount(id string) bool { return strings.HasPrefix(id, systemPrefix) }

func parseSystemAccount(id string) (currency string, ok bool) {
	rest, found := strings.CutPrefix(id, systemPrefix)
	if !found {
		return "", false
	}
	cur, purpose, found := strings.Cut(rest, ":")
	if !found || len(purpose) == 0 || len(purpose) > 64 {
		return "", false
	}
	if _, ok := currencies[cur]; !ok {
		return "", false
	}
	for i := 0; i < len(purpose); i++ {
		c := purpose[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "", false
		}
	}
	return cur, true
}

// loadBal reads an account's balance record, creating a system account's
// record in memory on first use. It returns ErrAccountNotFound for unknown
// accounts.
//
// A system account's record is loaded empty, without a read: a movement
// records its change to one apart (putBal, sysdelta.go), and BalanceTx
// reads the sum.
func loadBal(tx storage.Tx, id string) (*balRec, error) {
	if IsSystemAccount(id) {
		r := &balRec{}
		return r, loadSystem(id, r)
	}
	return loadBase(tx, id)
}

// loadSystem sets r to an empty record of the system account id.
func loadSystem(id string, r *balRec) error {
	cur, ok := parseSystemAccount(id)
	if !ok {
		return accountNotFound(id)
	}
	*r = balRec{flags: flagSystem, currency: cur}
	return nil
}

// loadBalInto is loadBal into a caller's record, so that hot paths keep it
// on the stack; it builds the key in one of s's scratch buffers.
func (s *Service) loadBalInto(tx storage.Tx, id string, r *balRec) error {
	if IsSystemAccount(id) {
		return loadSystem(id, r)
	}
	bp := s.buf()
	k := append(*bp, id...)
	raw, err := storage.Peek(tx, bucketBalances, k)
	s.release(bp, k)
	return decodeBalAt(raw, err, id, r)
}

func decodeBalAt(raw []byte, err error, id string, r *balRec) error {
	if errors.Is(err, storage.ErrNotFound) {
		if cur, ok := parseSystemAccount(id); ok {
			*r = balRec{flags: flagSystem, currency: cur}
			return nil
		}
		return accountNotFound(id)
	}
	if err != nil {
		return err
	}
	return r.decode(raw)
}

// putBal stores r, loaded by loadBal: a customer account's record, or a
// system account's change.
func (s *Service) putBal(tx storage.Tx, id string, r *balRec) error {
	if r.system() {
		return s.putSysDelta(tx, id, r)
	}
	return s.putRecord(tx, id, r)
}

// putRecord stores r as the account's balance record.
func (s *Service) putRecord(tx storage.Tx, id string, r *balRec) error {
	bp := s.buf()
	b := append(*bp, id...)
	k := len(b)
	b = r.appendTo(b)
	err := tx.Put(bucketBalances, b[:k], b[k:])
	s.release(bp, b)
	return err
}

// GetBalance returns the full balance of an account, system accounts
// included (a system account never used has a zero balance). It returns
// ErrAccountNotFound for an unknown account.
func (s *Service) GetBalance(ctx context.Context, accountID string) (Balance, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (Balance, error) {
		return s.BalanceTx(tx, accountID)
	})
}

// BalanceTx is GetBalance inside tx.
func (s *Service) BalanceTx(tx storage.Tx, accountID string) (Balance, error) {
	load := loadBal
	if IsSystemAccount(accountID) {
		load = sysBalance
	}
	r, err := load(tx, accountID)
	if err != nil {
		return Balance{}, err
	}
	return r.Balance, nil
}

// BalanceAt returns the account's balance as it stood at instant at: the
// balance after the last change recorded at or before at (changes are
// stamped with millisecond precision), or zero before the first. It costs
// two seeks whatever the account's history length. It returns
// ErrAccountNotFound for an unknown account and for a system account,
// which keeps no history.
func (s *Service) BalanceAt(ctx context.Context, accountID string, at time.Time) (Balance, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (Balance, error) {
		if r, err := loadBal(tx, accountID); err != nil {
			return Balance{}, err
		} else if r.system() {
			return Balance{}, ErrAccountNotFound.With("system account " + accountID + " keeps no history")
		}
		ms := corebank.Millis(at)
		if ms < 0 {
			return Balance{}, nil
		}
		var best *HistoryLine
		for _, kind := range []byte{histSettled, histPending} {
			l, err := lastLineBefore(tx, accountID, kind, uint64(ms)+1)
			if err != nil {
				return Balance{}, err
			}
			if l != nil && (best == nil || l.Seq > best.Seq) {
				best = l
			}
		}
		if best == nil {
			return Balance{}, nil
		}
		return best.Balance, nil
	})
}

// TrialBalance sums every balance record per currency, system accounts
// included. In a consistent ledger Settled and Current are zero for every
// currency. It scans all accounts: an audit tool, not a hot path.
func (s *Service) TrialBalance(ctx context.Context) (map[string]Balance, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (map[string]Balance, error) {
		out := map[string]Balance{}
		err := tx.Scan(bucketBalances, storage.ScanOptions{}, func(_, v []byte) error {
			r, err := decodeBal(v)
			if err == nil {
				addTotal(out, r)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		return out, scanDeltas(tx, nil, false, func(_ []byte, _ string, d *balRec) error {
			addTotal(out, d)
			return nil
		})
	})
}

// addTotal adds r's balance to its currency's total in totals.
func addTotal(totals map[string]Balance, r *balRec) {
	t := totals[r.currency]
	t.Settled += r.Settled
	t.PendingDebits += r.PendingDebits
	t.PendingCredits += r.PendingCredits
	totals[r.currency] = t
}
