package acquiring

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Payment intent statuses (SPEC.md "Payment intent"). Completed, cancelled
// and failed are final.
const (
	IntentRequiresAction = "requires_action"
	IntentProcessing     = "processing"
	IntentCompleted      = "completed"
	IntentCancelled      = "cancelled"
	IntentFailed         = "failed"
)

// Events appended when an intent reaches a final state; each carries the
// intent with its nested intent_action.
const (
	EventIntentCompleted = "payment_intent.completed"
	EventIntentFailed    = "payment_intent.failed"
	EventIntentCancelled = "payment_intent.cancelled"
)

// Limits (SPEC.md "Limits").
const (
	MaxReference    = 100
	MaxDescription  = 250
	MaxCancelReason = 100
)

// Intent is a payment intent: an amount the account's owner means to
// collect from a card or wallet. IntentAction is the latest confirmation
// attempt (nil until one is submitted).
type Intent struct {
	ID           string  `json:"id"`
	Currency     string  `json:"currency"`
	Amount       int64   `json:"amount"`
	Reference    string  `json:"reference"`
	Description  string  `json:"description"`
	Status       string  `json:"status"`
	StatusReason *string `json:"status_reason,omitempty"`
	EntityID     string  `json:"entity_id"`
	AccountID    string  `json:"account_id"`
	Created      int64   `json:"created"`
	Updated      int64   `json:"updated"`
	IntentAction *Action `json:"intent_action"`
}

// NewIntent is the body of POST /payment-intents; IntentAction, when set,
// confirms it in the same request.
type NewIntent struct {
	Currency     string        `json:"currency"`
	Amount       int64         `json:"amount"`
	AccountID    string        `json:"account_id"`
	Reference    string        `json:"reference"`
	Description  string        `json:"description,omitempty"`
	EntityID     string        `json:"entity_id,omitempty"`
	IntentAction *ActionParams `json:"intent_action,omitempty"`
}

// Filter selects intents (ListIntents) and actions (ListActions); "" or 0
// is no filter. DateFrom and DateTo are inclusive bounds in Unix ms.
// PaymentType and PaymentIntentID apply to actions only.
type Filter struct {
	EntityID        string
	AccountID       string
	Status          string
	Reference       string
	Currency        string
	PaymentType     string
	PaymentIntentID string
	// PaymentIntentActionID selects refunds and disputes of one action.
	PaymentIntentActionID string
	DateFrom              int64
	DateTo                int64
}

// Page is one page of a list and the entity listed.
type Page[T any] struct {
	*corebank.Page[T]
	EntityID string
}

const (
	intentBucket storage.Bucket = "acquiring.intents"
	actionBucket storage.Bucket = "acquiring.actions"
	// index holds i/<entity>/<intent id> and a/<entity>/<action id> (the
	// lists), r/<account>/<hex reference> -> intent id (reference
	// uniqueness) and t/<token> -> action id (the challenge page).
	index storage.Bucket = "acquiring.index"
)

func intentListKey(entity, id string) []byte { return storage.Key("i", entity, id) }
func actionListKey(entity, id string) []byte { return storage.Key("a", entity, id) }
func refKey(account, ref string) []byte {
	return storage.Key("r", account, hex.EncodeToString([]byte(ref)))
}
func tokenKey(token string) []byte { return storage.Key("t", token) }

// intentRecord is a stored intent: the action is stored on its own and
// named by ActionID.
type intentRecord struct {
	Intent
	ActionID string `json:"action_id,omitempty"`
}

// Owner is the entity the intent's account belongs to (scope.Get).
func (r *intentRecord) Owner() string { return r.EntityID }

func getIntent(tx storage.Tx, id string) (*intentRecord, error) {
	return storage.LoadJSON[intentRecord](tx, intentBucket, []byte(id), ErrIntentNotFound)
}

func putIntent(tx storage.Tx, r *intentRecord) error {
	r.IntentAction = nil // stored on its own
	return storage.PutJSON(tx, intentBucket, []byte(r.ID), r)
}

// view is the intent as answered, its latest action nested.
func (s *Service) view(tx storage.Tx, r *intentRecord) (*Intent, error) {
	in := r.Intent
	in.IntentAction = nil
	if r.ActionID != "" {
		a, err := getAction(tx, r.ActionID)
		if err != nil {
			return nil, err
		}
		in.IntentAction = a.view()
	}
	return &in, nil
}

func (in *NewIntent) validate() corebank.Problems {
	p := corebank.Problems{}
	if in.AccountID == "" {
		p.Add("account_id", "is required")
	}
	switch {
	case in.Amount < 1:
		p.Add("amount", "must be at least 1")
	case in.Amount > ledger.MaxAmount:
		p.Add("amount", "is too large")
	}
	switch _, ok := ledger.CurrencyInfo(in.Currency); {
	case in.Currency == "":
		p.Add("currency", "is required")
	case !ok:
		p.Add("currency", "is not a supported currency")
	}
	corebank.CheckText(p, "reference", in.Reference, corebank.Line(1, MaxReference))
	corebank.CheckText(p, "description", in.Description, corebank.FreeText(0, MaxDescription))
	return p
}

// CreateIntent creates a payment intent on account in.AccountID for its
// owner, which must be in.EntityID (the caller's entity when "") or lie
// below it. Without in.IntentAction it answers the intent
// requires_action; with one it confirms it in the same transaction (see
// ConfirmIntent) and answers the intent with its action.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound; a validation error naming each bad field
// (amount, currency, reference, description, intent_action.*);
// ledger.ErrAccountNotFound for an account missing or outside the tree;
// ledger.ErrAccountDeleted; ErrDuplicateReference with the original intent
// as Data.
func (s *Service) CreateIntent(ctx context.Context, caller corebank.Caller, in NewIntent) (*Intent, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	p := in.validate()
	var card *Card
	if in.IntentAction != nil {
		in.IntentAction.check(p, "intent_action.")
		if err := p.Err(); err != nil {
			return nil, err
		}
		c, err := s.decrypt(ctx, caller, in.IntentAction, "intent_action.")
		if err != nil {
			return nil, err
		}
		card = c
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Intent, error) {
		acct, err := scope.Get(tx, s.tree, caller, in.EntityID, in.AccountID, s.led.GetAccountTx, ledger.ErrAccountNotFound)
		if errors.Is(err, ledger.ErrAccountNotFound) {
			return nil, ledger.ErrAccountNotFound.With("account " + in.AccountID + " not found")
		}
		if err != nil {
			return nil, err
		}
		if id, err := tx.Get(index, refKey(acct.ID, in.Reference)); err == nil {
			orig, err := getIntent(tx, string(id))
			if err != nil {
				return nil, err
			}
			v, err := s.view(tx, orig)
			if err != nil {
				return nil, err
			}
			return nil, ErrDuplicateReference.WithData(v)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		if acct.Deleted != 0 {
			return nil, ledger.ErrAccountDeleted
		}
		if in.Currency != acct.Currency {
			return nil, corebank.InvalidField("currency", "must match the account's currency "+acct.Currency)
		}
		ms := now.UnixMilli()
		r := &intentRecord{Intent: Intent{ID: s.ids.New(now), Currency: acct.Currency, Amount: in.Amount,
			Reference: in.Reference, Description: in.Description, Status: IntentRequiresAction,
			EntityID: acct.EntityID, AccountID: acct.ID, Created: ms, Updated: ms}}
		if err := tx.Put(index, refKey(r.AccountID, r.Reference), []byte(r.ID)); err != nil {
			return nil, err
		}
		if err := tx.Put(index, intentListKey(r.EntityID, r.ID), nil); err != nil {
			return nil, err
		}
		if in.IntentAction != nil {
			if _, err := s.confirmTx(tx, now, r, in.IntentAction, card); err != nil {
				return nil, err
			}
		} else if err := putIntent(tx, r); err != nil {
			return nil, err
		}
		return s.view(tx, r)
	})
}

// GetIntent returns intent id with its latest action, for caller narrowed
// to entityID when set.
//
// Errors: corebank.ErrEntityNotFound; ErrIntentNotFound for an intent
// missing or outside the caller's tree.
func (s *Service) GetIntent(ctx context.Context, caller corebank.Caller, entityID, id string) (*Intent, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Intent, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getIntent, ErrIntentNotFound)
		if err != nil {
			return nil, err
		}
		return s.view(tx, r)
	})
}

// CancelIntent cancels intent id, which must be requires_action; reason
// (1-100 characters, optional) becomes its status_reason.
// payment_intent.cancelled is appended in the same transaction.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrIntentNotFound; a validation error naming reason;
// ErrInvalidForState for an intent in any other status.
func (s *Service) CancelIntent(ctx context.Context, caller corebank.Caller, entityID, id, reason string) (*Intent, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Intent, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getIntent, ErrIntentNotFound)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			p := corebank.Problems{}
			corebank.CheckText(p, "reason", reason, corebank.Line(1, MaxCancelReason))
			if err := p.Err(); err != nil {
				return nil, err
			}
		}
		if r.Status != IntentRequiresAction {
			return nil, ErrInvalidForState.With("a " + r.Status + " payment intent cannot be cancelled; only requires_action can")
		}
		r.Status = IntentCancelled
		if reason != "" {
			r.StatusReason = &reason
		}
		return s.final(tx, now, r, nil)
	})
}

// final stores r (and a, when set) after r reached a final status, and
// appends the intent's event; it answers the intent.
func (s *Service) final(tx storage.Tx, now time.Time, r *intentRecord, a *actionRecord) (*Intent, error) {
	r.Updated = now.UnixMilli()
	if a != nil {
		if err := s.putAction(tx, a); err != nil {
			return nil, err
		}
	}
	if err := putIntent(tx, r); err != nil {
		return nil, err
	}
	v, err := s.view(tx, r)
	if err != nil {
		return nil, err
	}
	ev := map[string]string{IntentCompleted: EventIntentCompleted, IntentFailed: EventIntentFailed,
		IntentCancelled: EventIntentCancelled}[r.Status]
	if ev != "" {
		if _, err := s.led.AppendEventTx(tx, now, ev, r.EntityID, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// maxScan caps the index entries one list page examines.
const maxScan = 2000

var intentStatuses = map[string]bool{IntentRequiresAction: true, IntentProcessing: true,
	IntentCompleted: true, IntentCancelled: true, IntentFailed: true}

// ListIntents returns one page of an entity's intents, oldest first,
// filtered by f (see Filter). The entity is f.EntityID (the caller's when
// ""); f.AccountID, when set, must be one of its accounts or below it.
//
// Errors: corebank.ErrEntityNotFound; ledger.ErrAccountNotFound; a
// validation error naming status, date_from, date_to, limit or cursor.
func (s *Service) ListIntents(ctx context.Context, caller corebank.Caller, f Filter, opts corebank.ListOptions) (*Page[Intent], error) {
	p := f.check()
	if f.Status != "" && !intentStatuses[f.Status] {
		p.Add("status", "must be one of requires_action, processing, completed, cancelled, failed")
	}
	return listOf(ctx, s, caller, f, opts, p, "i", func(tx storage.Tx, id string) (Intent, bool, error) {
		r, err := getIntent(tx, id)
		if err != nil {
			return Intent{}, false, err
		}
		keep := f.keep(r.Status, r.Reference, r.Currency, r.AccountID, "", "", r.Created)
		if !keep {
			return Intent{}, false, nil
		}
		v, err := s.view(tx, r)
		if err != nil {
			return Intent{}, false, err
		}
		return *v, true, nil
	})
}

func (f *Filter) check() corebank.Problems {
	p := corebank.Problems{}
	if f.DateFrom < 0 {
		p.Add("date_from", "must not be negative")
	}
	if f.DateTo < 0 {
		p.Add("date_to", "must not be negative")
	}
	if f.DateFrom > 0 && f.DateTo > 0 && f.DateTo < f.DateFrom {
		p.Add("date_to", "must not be before date_from")
	}
	return p
}

func (f *Filter) keep(status, ref, currency, account, paymentType, intentID string, created int64) bool {
	return (f.Status == "" || status == f.Status) && (f.Reference == "" || ref == f.Reference) &&
		(f.Currency == "" || currency == f.Currency) && (f.AccountID == "" || account == f.AccountID) &&
		(f.PaymentType == "" || paymentType == f.PaymentType) &&
		(f.PaymentIntentID == "" || intentID == f.PaymentIntentID) &&
		(f.DateFrom <= 0 || created >= f.DateFrom) && (f.DateTo <= 0 || created <= f.DateTo)
}

// listOf reads one page of the index list kind ("i" or "a") of f's entity.
func listOf[T any](ctx context.Context, s *Service, caller corebank.Caller, f Filter, opts corebank.ListOptions,
	p corebank.Problems, kind string, load func(tx storage.Tx, id string) (T, bool, error)) (*Page[T], error) {
	if err := p.Err(); err != nil {
		return nil, err
	}
	limit, err := storage.CheckList(opts, corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Page[T], error) {
		entity, err := scope.Entity(tx, s.tree, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		if f.AccountID != "" {
			// The account must lie in the entity's tree; the list is then
			// of the account's entity.
			notFound := ledger.ErrAccountNotFound.With("account " + f.AccountID + " not found")
			acct, err := scope.Get(tx, s.tree, corebank.As(entity), "", f.AccountID, s.led.GetAccountTx, notFound)
			if errors.Is(err, ledger.ErrAccountNotFound) {
				return nil, notFound
			}
			if err != nil {
				return nil, err
			}
			entity = acct.EntityID
		}
		q := storage.PageQuery{Bucket: index, Prefix: storage.Key(kind, entity, ""), Opts: opts, Limit: limit, MaxScan: maxScan}
		if f.DateFrom > 0 {
			q.Lower = corebank.IDTimePrefix(f.DateFrom)
		}
		if f.DateTo > 0 {
			q.Upper = corebank.IDTimePrefix(f.DateTo + 1)
		}
		page, err := storage.ReadPage(tx, q, func(id string, _ []byte) (T, bool, error) { return load(tx, id) })
		if err != nil {
			return nil, err
		}
		return &Page[T]{Page: page, EntityID: entity}, nil
	})
}
