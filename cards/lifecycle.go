package cards

import (
	"context"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Card transaction event types after the authorization.
const (
	EventClearing    = "clearing"
	EventReversal    = "reversal"
	EventExpiration  = "expiration"
	EventIncrement   = "increment"
	EventRefund      = "refund"
	EventIncDeclined = "increment_declined"
)

// dueAuth is the due queue kind of an authorization's own expiry.
const dueAuth = "cards.authorization"

// held is what the transaction's current hold still reserves.
func (t *txRecord) held() int64 {
	if t.Status != TxPending {
		return 0
	}
	return t.AmountAuthorized
}

// clearingAccount is the card clearing account of currency.
func (s *Service) clearingAccount(currency string) string {
	return s.led.SystemAccount(currency, ledger.PurposeClearingCard)
}

// rehold replaces t's hold by one of amount (none when 0): the funds were
// already reserved, so a smaller hold always fits.
func (s *Service) rehold(tx storage.Tx, now time.Time, t *txRecord, amount int64) error {
	if t.HoldID != "" {
		if _, err := s.led.VoidHoldTx(tx, now, t.HoldID); err != nil {
			return err
		}
		t.HoldID = ""
	}
	if amount == 0 {
		return nil
	}
	h, err := s.led.HoldTx(tx, now, ledger.HoldRequest{DebitAccountID: t.AccountID, CreditAccountID: s.clearingAccount(t.Currency),
		Amount: amount, Narration: "Card: " + t.Merchant.Name, Reference: t.ID})
	if err != nil {
		return err
	}
	t.HoldID = h.ID
	return nil
}

// settle moves amount from the account to card clearing at once.
func (s *Service) settle(tx storage.Tx, now time.Time, t *txRecord, from, to string, amount int64) error {
	h, err := s.led.HoldTx(tx, now, ledger.HoldRequest{DebitAccountID: from, CreditAccountID: to,
		Amount: amount, Narration: "Card: " + t.Merchant.Name, Reference: t.ID})
	if err != nil {
		return err
	}
	_, err = s.led.PostHoldTx(tx, now, h.ID, 0)
	return err
}

// lifecycle checks amount, loads card transaction id for a write,
// refuses it unless its status is need, applies fn, stores it and
// answers it.
func (s *Service) lifecycle(ctx context.Context, caller corebank.Caller, entityID, id string, amount int64, need string,
	fn func(tx storage.Tx, now time.Time, t *txRecord) error) (*Transaction, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if amount < 0 || amount > ledger.MaxAmount {
		return nil, corebank.InvalidField("amount", "must be between 1 and 9007199254740991")
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Transaction, error) {
		t, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getTx, ErrTransactionNotFound)
		if err != nil {
			return nil, err
		}
		if t.Status != need {
			return nil, ErrTransactionState.With("card transaction " + t.ID + " is " + t.Status)
		}
		if err := fn(tx, now, t); err != nil {
			return nil, err
		}
		if err := putTx(tx, t); err != nil {
			return nil, err
		}
		v := t.Transaction
		return &v, nil
	})
}

func (t *txRecord) event(typ string, amount int64, now time.Time) {
	t.Events = append(t.Events, TxEvent{Type: typ, Amount: amount, Time: now.UnixMilli()})
}

// unschedule drops the transaction's own expiry.
func (s *Service) unschedule(tx storage.Tx, t *txRecord) error {
	return storage.Unschedule(tx, dueAuth, t.ExpiresAt, t.ID)
}

// ClearTransaction settles a pending card transaction for amount (0: what is
// authorized). The hold is released, the amount moves to card clearing,
// and the counters it was counted in move from held to used. Works
// whatever the card's state now.
//
// A clearing larger than the authorization takes the excess from the
// account at once. The excess is an increment the network did not ask
// for: it must fit the controls the authorization was counted under (in
// the windows it was counted in) and the available balance, or the
// clearing is refused and nothing changes. So used plus held never passes
// a limit, which a card program's controls promise.
//
// Errors: ErrTransactionNotFound; ErrTransactionState unless pending; a
// validation error on amount; ErrClearingDeclined naming what fired.
func (s *Service) ClearTransaction(ctx context.Context, caller corebank.Caller, entityID, id string, amount int64) (*Transaction, error) {
	return s.lifecycle(ctx, caller, entityID, id, amount, TxPending, func(tx storage.Tx, now time.Time, t *txRecord) error {
		held := t.held()
		if amount == 0 {
			amount = held
		}
		if amount > held {
			c, err := getCard(tx, t.CardID)
			if err != nil {
				return err
			}
			reason, err := s.allow(tx, c, t, amount-held, amount)
			if err != nil {
				return err
			}
			if reason != "" {
				return ErrClearingDeclined.With("clearing above the authorization declined: " + reason)
			}
		}
		if _, err := s.led.PostHoldTx(tx, now, t.HoldID, min(amount, held)); err != nil {
			return err
		}
		if amount > held {
			if err := s.settle(tx, now, t, t.AccountID, s.clearingAccount(t.Currency), amount-held); err != nil {
				return err
			}
		}
		if err := count(tx, t.Counted, -held, amount, -1, 1); err != nil {
			return err
		}
		t.Status, t.AmountSettled, t.HoldID = TxSettled, amount, ""
		t.event(EventClearing, amount, now)
		return s.unschedule(tx, t)
	})
}

// allow decides adding amount to pending transaction t of card c, total
// being the transaction's whole amount after it: the reason a control
// (under the windows t was counted in) or the account's available balance
// refuses it, or "".
func (s *Service) allow(tx storage.Tx, c *record, t *txRecord, amount, total int64) (string, error) {
	reason, _, err := s.check(tx, c, t.Merchant.MCC, time.UnixMilli(t.Created), amount, 0, total)
	if err != nil || reason != "" {
		return reason, err
	}
	bal, err := s.led.BalanceTx(tx, t.AccountID)
	if err != nil {
		return "", err
	}
	if bal.Available() < amount {
		return DeclineInsufficientFunds, nil
	}
	return "", nil
}

// ReverseTransaction releases amount (0: all) of a pending authorization: a full
// reversal voids it, a partial one lowers the hold. Counters move with it
// (a full reversal no longer counts the transaction).
//
// Errors: as ClearTransaction; a validation error when amount exceeds what is held.
func (s *Service) ReverseTransaction(ctx context.Context, caller corebank.Caller, entityID, id string, amount int64) (*Transaction, error) {
	return s.lifecycle(ctx, caller, entityID, id, amount, TxPending, func(tx storage.Tx, now time.Time, t *txRecord) error {
		held := t.held()
		if amount == 0 {
			amount = held
		}
		if amount > held {
			return corebank.InvalidField("amount", "must not exceed the authorized amount")
		}
		return s.release(tx, now, t, amount, EventReversal, TxVoided)
	})
}

// release lowers t's hold by amount, ending it in status end when none is
// left, and moves its counters.
func (s *Service) release(tx storage.Tx, now time.Time, t *txRecord, amount int64, event, end string) error {
	left := t.held() - amount
	if err := s.rehold(tx, now, t, left); err != nil {
		return err
	}
	var n int64
	if left == 0 {
		n = -1
		t.Status = end
		if err := s.unschedule(tx, t); err != nil {
			return err
		}
	}
	if err := count(tx, t.Counted, -amount, 0, n, 0); err != nil {
		return err
	}
	t.AmountAuthorized = left
	t.event(event, amount, now)
	return nil
}

// ExpireTransaction ends a pending authorization as expired, releasing its hold (as
// Options.AuthExpiry does by itself).
//
// Errors: ErrTransactionNotFound; ErrTransactionState unless pending.
func (s *Service) ExpireTransaction(ctx context.Context, caller corebank.Caller, entityID, id string) (*Transaction, error) {
	return s.lifecycle(ctx, caller, entityID, id, 0, TxPending, func(tx storage.Tx, now time.Time, t *txRecord) error {
		return s.release(tx, now, t, t.held(), EventExpiration, TxExpired)
	})
}

// expireDue is the due job of an authorization's own expiry.
func (s *Service) expireDue(tx storage.Tx, now time.Time, it storage.DueItem) error {
	t, err := getTx(tx, it.ID)
	if err != nil || t.Status != TxPending {
		return nil // gone or already ended
	}
	if err := s.release(tx, now, t, t.held(), EventExpiration, TxExpired); err != nil {
		return err
	}
	return putTx(tx, t)
}

// DueJobs returns the package's due work: authorizations that expire by
// themselves after Options.AuthExpiry.
func (s *Service) DueJobs() []storage.DueJob {
	return []storage.DueJob{{Kind: dueAuth, Tx: s.expireDue}}
}

// IncrementTransaction raises a pending authorization by amount (required), if the
// card is still usable, the controls it was counted under allow it and
// the account has it available. An increment is part of the same card
// transaction, so it adds to the amounts counted, never to the counts.
// A declined increment is recorded on the transaction as an
// increment_declined event naming what fired, and answered as
// ErrIncrementDeclined; the authorization stands as it was.
//
// Errors: as ClearTransaction; a validation error when amount is 0;
// ErrIncrementDeclined naming what fired.
func (s *Service) IncrementTransaction(ctx context.Context, caller corebank.Caller, entityID, id string, amount int64) (*Transaction, error) {
	if amount == 0 {
		return nil, corebank.InvalidField("amount", "is required")
	}
	var declined string
	t, err := s.lifecycle(ctx, caller, entityID, id, amount, TxPending, func(tx storage.Tx, now time.Time, t *txRecord) error {
		declined = ""
		c, err := getCard(tx, t.CardID)
		if err != nil {
			return err
		}
		reason := c.decline(now)
		if reason == "" {
			if reason, err = s.allow(tx, c, t, amount, t.held()+amount); err != nil {
				return err
			}
		}
		if reason != "" {
			declined = reason
			t.Events = append(t.Events, TxEvent{Type: EventIncDeclined, Amount: amount, Time: now.UnixMilli(), DeclineReason: &reason})
			return nil
		}
		if err := s.rehold(tx, now, t, t.held()+amount); err != nil {
			return err
		}
		if err := count(tx, t.Counted, amount, 0, 0, 0); err != nil {
			return err
		}
		t.AmountAuthorized += amount
		t.event(EventIncrement, amount, now)
		return nil
	})
	if err == nil && declined != "" {
		return nil, ErrIncrementDeclined.With("increment declined: " + declined)
	}
	return t, err
}

// RefundTransaction returns amount (0: all not yet refunded) of a settled card
// transaction to the account from card clearing, and takes it off the
// used amounts of the windows the transaction was counted in.
//
// Errors: ErrTransactionNotFound; ErrTransactionState unless settled; a
// validation error when amount exceeds what is left to refund.
func (s *Service) RefundTransaction(ctx context.Context, caller corebank.Caller, entityID, id string, amount int64) (*Transaction, error) {
	return s.lifecycle(ctx, caller, entityID, id, amount, TxSettled, func(tx storage.Tx, now time.Time, t *txRecord) error {
		left := t.AmountSettled - t.Refunded
		if amount == 0 {
			amount = left
		}
		if amount > left || amount == 0 {
			return corebank.InvalidField("amount", "must not exceed what is left to refund")
		}
		if err := s.settle(tx, now, t, s.clearingAccount(t.Currency), t.AccountID, amount); err != nil {
			return err
		}
		if err := count(tx, t.Counted, 0, -amount, 0, 0); err != nil {
			return err
		}
		t.Refunded += amount
		t.event(EventRefund, amount, now)
		return nil
	})
}
