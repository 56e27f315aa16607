package cards

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Card transaction states.
const (
	TxPending  = "pending"
	TxSettled  = "settled"
	TxVoided   = "voided"
	TxDeclined = "declined"
	TxExpired  = "expired"
)

// Decline reasons: each names what fired. A control's reason is
// "<control>.<limit>": individual_controls.daily_amount_limit,
// individual_mcc_controls.5812.open, mcc_group_controls.gambling.amount.
const (
	DeclineInsufficientFunds = "insufficient_funds"
	DeclineCardFrozen        = "card_frozen"
	DeclineCardDeleted       = "card_deleted"
	DeclineCardExpired       = "card_expired"
)

// EventAuthorization is the type of a transaction's first event.
const EventAuthorization = "authorization"

// MaxMerchantName is the longest merchant_name.
const MaxMerchantName = 100

// Merchant is where a card transaction was made.
type Merchant struct {
	Name    string `json:"name"`
	MCC     int    `json:"mcc"`
	Country string `json:"country"`
}

// TxEvent is one network message of a card transaction.
type TxEvent struct {
	Type   string `json:"type"`
	Amount int64  `json:"amount"`
	Time   int64  `json:"time"`
	// DeclineReason names what refused an increment_declined event.
	DeclineReason *string `json:"decline_reason,omitempty"`
}

// Transaction is a card transaction (an authorization and what followed).
type Transaction struct {
	ID               string    `json:"id"`
	CardID           string    `json:"card_id"`
	AccountID        string    `json:"account_id"`
	Status           string    `json:"status"`
	DeclineReason    *string   `json:"decline_reason"`
	Amount           int64     `json:"amount"`
	Currency         string    `json:"currency"`
	AmountAuthorized int64     `json:"amount_authorized"`
	AmountSettled    int64     `json:"amount_settled"`
	Merchant         Merchant  `json:"merchant"`
	Events           []TxEvent `json:"events"`
	Created          int64     `json:"created"`
}

// Authorization is the body of POST /sandbox/cards/{id}/authorizations.
type Authorization struct {
	Amount       int64  `json:"amount"`
	Currency     string `json:"currency,omitempty"`
	MCC          *int   `json:"mcc"`
	MerchantName string `json:"merchant_name"`
	EntityID     string `json:"entity_id,omitempty"`
}

func (in *Authorization) validate() error {
	p := corebank.Problems{}
	if in.Amount < 1 || in.Amount > ledger.MaxAmount {
		p.Add("amount", "must be between 1 and "+strconv.FormatInt(ledger.MaxAmount, 10))
	}
	if in.MCC == nil {
		p.Add("mcc", "is required")
	} else if *in.MCC < 0 || *in.MCC > 9999 {
		p.Add("mcc", "must be a four-digit merchant category code")
	}
	corebank.CheckText(p, "merchant_name", in.MerchantName, corebank.Line(1, MaxMerchantName))
	if len(p) > 0 {
		return p.Err()
	}
	return nil
}

const (
	// txBucket holds card transactions by ID.
	txBucket storage.Bucket = "cards.transactions"
)

// txRecord is a stored card transaction: its view, the entity it belongs
// to and the ledger hold its authorization placed.
type txRecord struct {
	Transaction
	EntityID string `json:"entity_id"`
	HoldID   string `json:"hold_id,omitempty"`
	// Counted are the counter keys (control and window) the
	// authorization was counted in: releasing or clearing it moves those,
	// whatever window is open then.
	Counted []string `json:"counted,omitempty"`
	// Refunded is how much of the settled amount was refunded.
	Refunded int64 `json:"refunded,omitempty"`
	// ExpiresAt is when a pending authorization expires by itself (ms).
	ExpiresAt int64 `json:"expires_at,omitempty"`
}

// txListKey indexes card's transactions in the index bucket, oldest first
// (IDs sort by time).
func txListKey(card, id string) []byte { return storage.Key("t", card, id) }

func putTx(tx storage.Tx, r *txRecord) error {
	return storage.PutJSON(tx, txBucket, []byte(r.ID), r)
}

// Owner is the entity of the card the transaction is on (scope.Get).
func (t *txRecord) Owner() string { return t.EntityID }

func getTx(tx storage.Tx, id string) (*txRecord, error) {
	return storage.LoadJSON[txRecord](tx, txBucket, []byte(id), ErrTransactionNotFound)
}

// usedUp reports whether disposable card r has had its one purchase: its
// UsedUp mark or, for a card stored before the mark existed, an approved
// authorization of more than 1 unit among its transactions.
func usedUp(tx storage.Tx, r *record) (bool, error) {
	if r.Type != TypeDisposable {
		return false, nil
	}
	if r.UsedUp != 0 {
		return true, nil
	}
	used := false
	prefix := txListKey(r.ID, "")
	err := tx.Scan(index, storage.ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
		t, err := getTx(tx, string(k[len(prefix):]))
		if err != nil {
			return err
		}
		// Amount is what was asked at authorization, which used the card
		// up; AmountAuthorized falls to 0 once the hold is released.
		if t.Status != TxDeclined && t.Amount > 1 {
			used = true
			return storage.ErrStop
		}
		return nil
	})
	return used, err
}

// expired reports whether the card's expiry month has ended at now (UTC).
func (r *record) expired(now time.Time) bool {
	m, _ := strconv.Atoi(r.ExpirationMonth)
	y, _ := strconv.Atoi(r.ExpirationYear)
	end := time.Date(2000+y, time.Month(m)+1, 1, 0, 0, 0, 0, time.UTC)
	return !now.Before(end)
}

// decline names the card state that refuses an authorization at now, or
// "" when none does (controls and the balance are checked after it).
func (r *record) decline(now time.Time) string {
	switch {
	case r.Deleted:
		return DeclineCardDeleted
	case r.Status != StatusActive:
		return DeclineCardFrozen
	case r.expired(now):
		return DeclineCardExpired
	}
	return ""
}

// AuthorizeCard decides a purchase on card id (POST
// /sandbox/cards/{id}/authorizations) and answers the card transaction it
// records either way: pending when approved, with a ledger hold of the
// amount on the card's account (its available balance drops); declined
// with DeclineReason naming what fired otherwise (a deleted, frozen or
// expired card, a control, or insufficient available funds), with no hold.
// A disposable card becomes blocked (cards.frozen) for good after its
// first approved authorization of more than 1 unit (UnfreezeCard refuses it);
// card checks of 1 unit or less do not use it up.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrCardNotFound; a validation error naming amount, mcc, merchant_name
// or currency (when not the card's).
func (s *Service) AuthorizeCard(ctx context.Context, caller corebank.Caller, entityID, id string, in Authorization) (*Transaction, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Transaction, error) {
		c, err := scope.Get(tx, s.o.Tree, caller, entityID, id, s.decoded.get, ErrCardNotFound)
		if err != nil {
			return nil, err
		}
		if in.Currency != "" && in.Currency != c.Currency {
			return nil, corebank.InvalidField("currency", "must be the card's currency "+c.Currency)
		}
		ms := now.UnixMilli()
		t := &txRecord{Transaction: Transaction{ID: s.o.IDs.New(now), CardID: c.ID, AccountID: c.AccountID,
			Status: TxPending, Amount: in.Amount, Currency: c.Currency,
			Merchant: Merchant{Name: in.MerchantName, MCC: *in.MCC}, Created: ms,
			Events: []TxEvent{{Type: EventAuthorization, Amount: in.Amount, Time: ms}}}, EntityID: c.EntityID}
		reason := c.decline(now)
		var counted []tally
		if reason == "" {
			if reason, counted, err = s.check(tx, c, *in.MCC, now, in.Amount, 1, in.Amount); err != nil {
				return nil, err
			}
		}
		if reason == "" {
			h, err := s.led.HoldTx(tx, now, ledger.HoldRequest{DebitAccountID: c.AccountID,
				CreditAccountID: s.led.SystemAccount(c.Currency, ledger.PurposeClearingCard), Amount: in.Amount,
				Narration: "Card: " + in.MerchantName, Reference: t.ID})
			switch {
			case errors.Is(err, ledger.ErrInsufficientFunds):
				reason = DeclineInsufficientFunds
			case err != nil:
				return nil, err
			default:
				t.HoldID, t.AmountAuthorized, t.Counted = h.ID, in.Amount, keys(counted)
				t.ExpiresAt = now.Add(s.o.AuthExpiry).UnixMilli()
				if err := storage.Schedule(tx, dueAuth, t.ExpiresAt, t.ID); err != nil {
					return nil, err
				}
				if err := apply(tx, counted, in.Amount, 0, 1, 0); err != nil {
					return nil, err
				}
			}
		}
		if reason != "" {
			t.Status, t.DeclineReason = TxDeclined, &reason
		}
		if err := putTx(tx, t); err != nil {
			return nil, err
		}
		if err := tx.Put(index, txListKey(c.ID, t.ID), nil); err != nil {
			return nil, err
		}
		if reason == "" && c.Type == TypeDisposable && in.Amount > 1 {
			c.Status, c.Updated, c.UsedUp = StatusBlocked, ms, ms
			if err := putCard(tx, c); err != nil {
				return nil, err
			}
			if _, err := s.led.AppendEventTx(tx, now, EventFrozen, c.EntityID, c.view()); err != nil {
				return nil, err
			}
		}
		v := t.Transaction
		return &v, nil
	})
}

// TransactionFilter names the card whose transactions ListTransactions
// lists (CardID, required), within entity EntityID ("" the caller's).
type TransactionFilter struct {
	EntityID string
	CardID   string
}

// ListTransactions returns the transactions of card f.CardID, oldest
// first.
//
// Errors: corebank.ErrEntityNotFound; ErrCardNotFound.
func (s *Service) ListTransactions(ctx context.Context, caller corebank.Caller, f TransactionFilter) ([]Transaction, error) {
	id := f.CardID
	return storage.View(ctx, s.db, func(tx storage.Tx) ([]Transaction, error) {
		if _, err := scope.Get(tx, s.o.Tree, caller, f.EntityID, id, getCard, ErrCardNotFound); err != nil {
			return nil, err
		}
		out := []Transaction{}
		err := tx.Scan(index, storage.ScanOptions{Prefix: txListKey(id, "")}, func(k, _ []byte) error {
			t, err := getTx(tx, string(k[len(txListKey(id, "")):]))
			if err != nil {
				return err
			}
			out = append(out, t.Transaction)
			return nil
		})
		return out, err
	})
}
