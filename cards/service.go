package cards

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/luhn"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// Options are the Service's optional dependencies.
type Options struct {
	// Deps are the clock, IDs, tree and logger every service shares; the
	// clock defaults to the ledger's.
	service.Deps
	// BIN is the 6 to 8 digits every card number starts with; default
	// "400000".
	BIN string
	// CreateLimit is how many cards one entity may create per rolling
	// hour; default 20.
	CreateLimit int
	// NumberKey keys the HMAC that indexes card numbers for uniqueness;
	// default a random key (numbers are then unique among those issued
	// since the process started). bank.New derives one from its secret.
	NumberKey []byte
	// AuthExpiry is how long an authorization's hold lasts before it
	// expires by itself (on the clock, through DueJobs); default 7 days.
	AuthExpiry time.Duration
}

// Service issues cards over one store.
type Service struct {
	db     storage.Backend
	led    *ledger.Service
	sealer *corebank.Sealer
	o      Options
	// digits draws the random digits of a card number (tests replace it).
	digits func(n int) string
	// decoded is what authorizations read cards through.
	decoded decodedCards
}

// NewService returns the card service over db, on the accounts of led,
// sealing card numbers and CVVs under sealer. It panics on a BIN that is
// not 6 to 8 digits.
func NewService(db storage.Backend, led *ledger.Service, sealer *corebank.Sealer, opt *Options) *Service {
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Deps = o.Deps.WithDefaults(led.Clock())
	if o.BIN == "" {
		o.BIN = "400000"
	}
	if len(o.BIN) < 6 || len(o.BIN) > 8 || strings.Trim(o.BIN, "0123456789") != "" {
		panic("cards: Options.BIN must be 6 to 8 digits")
	}
	if o.AuthExpiry <= 0 {
		o.AuthExpiry = 7 * 24 * time.Hour
	}
	if o.CreateLimit <= 0 {
		o.CreateLimit = 20
	}
	if len(o.NumberKey) == 0 {
		o.NumberKey = make([]byte, 32)
		_, _ = rand.Read(o.NumberKey)
	}
	return &Service{db: db, led: led, sealer: sealer, o: o, digits: randomDigits}
}

// Migrations returns the package's one-time changes to stores written by
// earlier releases: none yet (the package is new).
func (s *Service) Migrations() []storage.Migration { return nil }

// CardFilter narrows ListCards: the entity whose cards are listed
// (EntityID, the caller's when "") and, when set, one of its accounts.
type CardFilter struct {
	EntityID  string
	AccountID string
}

// Page is one page of an entity's cards.
type Page struct {
	*corebank.Page[Card]
	EntityID string
}

func randomDigits(n int) string {
	b := make([]byte, n)
	for i := range b {
		v, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		b[i] = byte('0' + v.Int64())
	}
	return string(b)
}

// newNumber is BIN, random digits and a Luhn check digit: 16 digits.
func (s *Service) newNumber() string {
	body := s.o.BIN + s.digits(15-len(s.o.BIN))
	return body + string(luhn.CheckDigit(body))
}

func (s *Service) numberKey(number string) []byte {
	m := hmac.New(sha256.New, s.o.NumberKey)
	m.Write([]byte(number))
	return storage.Key("n", hex.EncodeToString(m.Sum(nil)))
}

func creationPrefix(entity string) []byte { return storage.Key("c", entity, "") }
func creationKey(entity string, ms int64, id string) []byte {
	return storage.Key("c", entity, strconv.FormatInt(1e15+ms, 10), id)
}

// countCreations deletes the creations of entity older than an hour and
// returns those left and the time of the oldest.
func countCreations(tx storage.Tx, entity string, now time.Time) (int, int64, error) {
	cutoff := now.Add(-time.Hour).UnixMilli()
	var stale [][]byte
	n, oldest := 0, int64(0)
	err := tx.Scan(index, storage.ScanOptions{Prefix: creationPrefix(entity)}, func(k, _ []byte) error {
		rest := k[len(creationPrefix(entity)):]
		ms, _ := strconv.ParseInt(string(rest[:16]), 10, 64)
		ms -= 1e15
		if ms <= cutoff {
			stale = append(stale, append([]byte(nil), k...))
			return nil
		}
		if n == 0 {
			oldest = ms
		}
		n++
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	for _, k := range stale {
		if err := tx.Delete(index, k); err != nil {
			return 0, 0, err
		}
	}
	return n, oldest, nil
}

// usableAccount is the authorized load of account id (scope.Get, for
// caller narrowed to entityID) and what a card asks of it beside: not
// deleted. A missing or foreign account's error names it.
func (s *Service) usableAccount(tx storage.Tx, caller corebank.Caller, entityID, id string) (*ledger.Account, error) {
	a, err := scope.Get(tx, s.o.Tree, caller, entityID, id, s.led.GetAccountTx, ledger.ErrAccountNotFound)
	if errors.Is(err, ledger.ErrAccountNotFound) {
		return nil, ledger.ErrAccountNotFound.With("account " + id + " not found")
	}
	if err != nil {
		return nil, err
	}
	if a.Deleted != 0 {
		return nil, ledger.ErrAccountDeleted
	}
	return a, nil
}

// CreateDisposableCard issues a disposable card (POST /disposable-cards),
// as CreateVirtualCard issues a virtual one.
func (s *Service) CreateDisposableCard(ctx context.Context, caller corebank.Caller, in NewCard) (*Card, error) {
	return s.create(ctx, caller, TypeDisposable, in)
}

// CreateVirtualCard issues a virtual card (POST /virtual-cards) on
// in.AccountID, active, and answers it with its full number and CVV (the
// only answer that has them). In one transaction it counts the entity's
// creations of the last hour (past Options.CreateLimit: ErrCreateLimit
// with a RateLimit), draws a unique number, seals number and CVV, and
// appends cards.created (masked). A virtual card without an expiry
// expires in three years.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound; a
// corebank.KindBadRequest error naming each bad field (currency when it
// is not the account's); ledger.ErrAccountNotFound; ledger.ErrAccountDeleted;
// ErrCreateLimit.
func (s *Service) CreateVirtualCard(ctx context.Context, caller corebank.Caller, in NewCard) (*Card, error) {
	return s.create(ctx, caller, TypeVirtual, in)
}

// create issues a card of typ: CreateVirtualCard's contract, whatever
// the type.
func (s *Service) create(ctx context.Context, caller corebank.Caller, typ string, in NewCard) (*Card, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	mm, yy, p := in.validate(typ, now)
	if len(p) > 0 {
		return nil, p.BadRequest()
	}
	if mm == "" {
		exp := now.UTC().AddDate(3, 0, 0)
		mm, yy = strconv.Itoa(100 + int(exp.Month()))[1:], strconv.Itoa(100 + exp.Year()%100)[1:]
	}
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Card, error) {
		acct, err := s.usableAccount(tx, caller, in.EntityID, in.AccountID)
		if err != nil {
			return nil, err
		}
		if in.Currency != acct.Currency {
			return nil, corebank.Problems{"currency": "must match the account's currency " + acct.Currency}.BadRequest()
		}
		n, oldest, err := countCreations(tx, acct.EntityID, now)
		if err != nil {
			return nil, err
		}
		if n >= s.o.CreateLimit {
			wait := time.UnixMilli(oldest).Add(time.Hour).Sub(now)
			return nil, ErrCreateLimit.WithData(&RateLimit{RetryAfter: int64((wait + time.Second - 1) / time.Second),
				LimitType: LimitTypeCreate, CurrentCount: n, Limit: s.o.CreateLimit})
		}
		var number string
		for {
			number = s.newNumber()
			if ok, err := storage.Exists(tx, index, s.numberKey(number)); err != nil {
				return nil, err
			} else if !ok {
				break
			}
		}
		cvv := randomDigits(3)
		ms := now.UnixMilli()
		r := &record{Card: Card{ID: s.o.IDs.New(now), Name: in.CardName, Status: StatusActive, Type: typ,
			ExpirationMonth: mm, ExpirationYear: yy, Currency: acct.Currency,
			AccountID: acct.ID, EntityID: acct.EntityID, Cardholder: *in.Cardholder,
			IndividualMCCControls: []MCCControlView{}, MCCGroupControls: []GroupControlView{},
			SetAlertServiceFlag: in.SetAlertServiceFlag, Metadata: in.Metadata, Created: ms}, LastFour: number[12:], Updated: ms}
		if in.IndividualControls != nil {
			r.IndividualControls.Controls = *in.IndividualControls
		}
		for _, c := range in.IndividualMCCControls {
			c.Open = openOr(c.Open)
			r.IndividualMCCControls = append(r.IndividualMCCControls, MCCControlView{MCCControl: c})
		}
		for _, c := range in.MCCGroupControls {
			c.Open = openOr(c.Open)
			r.MCCGroupControls = append(r.MCCGroupControls, GroupControlView{GroupControl: c})
		}
		if r.Metadata == nil {
			r.Metadata = map[string]string{}
		}
		r.Sealed = s.seal(r.ID, secret{Number: number, CVV: cvv})
		for _, kv := range []struct{ k, v []byte }{{s.numberKey(number), []byte(r.ID)},
			{listKey(r.EntityID, r.ID), nil}, {creationKey(r.EntityID, ms, r.ID), nil}} {
			if err := tx.Put(index, kv.k, kv.v); err != nil {
				return nil, err
			}
		}
		if err := putCard(tx, r); err != nil {
			return nil, err
		}
		if _, err := s.led.AppendEventTx(tx, now, EventCreated, r.EntityID, r.view()); err != nil {
			return nil, err
		}
		c, err := r.viewAt(tx, now)
		if err != nil {
			return nil, err
		}
		c.Number, c.CVV = number, cvv
		return c, nil
	})
}

func openOr(b *bool) *bool {
	if b != nil {
		return b
	}
	t := true
	return &t
}

// GetCard returns card id, masked, for caller narrowed to entityID; a deleted
// card is answered with deleted true.
//
// Errors: corebank.ErrEntityNotFound; ErrCardNotFound.
func (s *Service) GetCard(ctx context.Context, caller corebank.Caller, entityID, id string) (*Card, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Card, error) {
		r, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getCard, ErrCardNotFound)
		if err != nil {
			return nil, err
		}
		return r.viewAt(tx, s.o.Clock.Now())
	})
}

// move loads card id for a write and applies fn to it, then stores it
// and appends event (when not "" and fn changed it).
func (s *Service) move(ctx context.Context, caller corebank.Caller, entityID, id string,
	fn func(tx storage.Tx, r *record) (event string, err error)) (*Card, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Card, error) {
		r, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getCard, ErrCardNotFound)
		if err != nil {
			return nil, err
		}
		if r.Deleted {
			return nil, ErrInvalidForState.With("the card is deleted")
		}
		ev, err := fn(tx, r)
		if err != nil {
			return nil, err
		}
		if ev == "" {
			return r.viewAt(tx, now)
		}
		r.Updated = now.UnixMilli()
		if err := putCard(tx, r); err != nil {
			return nil, err
		}
		if _, err := s.led.AppendEventTx(tx, now, ev, r.EntityID, r.view()); err != nil {
			return nil, err
		}
		return r.viewAt(tx, now)
	})
}

// FreezeCard stops card id: status "" or "blocked" makes an active card
// blocked (UnfreezeCard reverses it); "fraud" makes an active or blocked card
// fraud, for good. Freezing to the status the card has changes nothing.
// Appends cards.frozen.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrCardNotFound; a validation error naming status; ErrInvalidForState
// for a deleted card or a fraud card asked to be blocked.
func (s *Service) FreezeCard(ctx context.Context, caller corebank.Caller, entityID, id, status string) (*Card, error) {
	if status == "" {
		status = StatusBlocked
	}
	if status != StatusBlocked && status != StatusFraud {
		return nil, corebank.InvalidField("status", "must be blocked or fraud")
	}
	return s.move(ctx, caller, entityID, id, func(_ storage.Tx, r *record) (string, error) {
		switch {
		case r.Status == status:
			return "", nil
		case r.Status == StatusFraud:
			return "", ErrInvalidForState.With("a fraud card stays fraud")
		}
		r.Status = status
		return EventFrozen, nil
	})
}

// UnfreezeCard makes a blocked card active again; an active card is answered
// unchanged. A disposable card that has had its purchase stays blocked:
// unfreezing it would make a single-use number reusable. Appends
// cards.unfrozen.
//
// Errors: as FreezeCard; ErrInvalidForState for a fraud or deleted card, or
// a used disposable card.
func (s *Service) UnfreezeCard(ctx context.Context, caller corebank.Caller, entityID, id string) (*Card, error) {
	return s.move(ctx, caller, entityID, id, func(tx storage.Tx, r *record) (string, error) {
		switch r.Status {
		case StatusActive:
			return "", nil
		case StatusFraud:
			return "", ErrInvalidForState.With("a fraud card cannot be unfrozen")
		}
		if used, err := usedUp(tx, r); err != nil {
			return "", err
		} else if used {
			return "", ErrInvalidForState.With("a disposable card that has been used cannot be unfrozen")
		}
		r.Status = StatusActive
		return EventUnfrozen, nil
	})
}

// ReassignCard moves card id to accountID, another account of the card's
// entity in the card's currency. No event (SPEC.md names none).
//
// Errors: as FreezeCard; ledger.ErrAccountNotFound; ledger.ErrAccountDeleted;
// a validation error on account_id for another entity's account or
// another currency.
func (s *Service) ReassignCard(ctx context.Context, caller corebank.Caller, entityID, id, accountID string) (*Card, error) {
	if accountID == "" {
		return nil, corebank.InvalidField("account_id", "is required")
	}
	return s.move(ctx, caller, entityID, id, func(tx storage.Tx, r *record) (string, error) {
		a, err := s.usableAccount(tx, caller, entityID, accountID)
		if err != nil {
			return "", err
		}
		switch {
		case a.EntityID != r.EntityID:
			return "", corebank.InvalidField("account_id", "must belong to the card's entity")
		case a.Currency != r.Currency:
			return "", corebank.InvalidField("account_id", "must be in the card's currency "+r.Currency)
		case a.ID == r.AccountID:
			return "", nil
		}
		r.AccountID = a.ID
		r.Updated = s.o.Clock.Now().UnixMilli()
		return "", putCard(tx, r)
	})
}

// DeleteCard soft-deletes card id: it leaves the list and refuses every move,
// and GetCard still answers it (deleted true). Deleting a deleted card
// answers it unchanged. Appends cards.deleted.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound; ErrCardNotFound.
func (s *Service) DeleteCard(ctx context.Context, caller corebank.Caller, entityID, id string) (*Card, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Card, error) {
		r, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getCard, ErrCardNotFound)
		if err != nil {
			return nil, err
		}
		if r.Deleted {
			return r.viewAt(tx, now)
		}
		r.Deleted, r.Updated = true, now.UnixMilli()
		if err := tx.Delete(index, listKey(r.EntityID, r.ID)); err != nil {
			return nil, err
		}
		if err := putCard(tx, r); err != nil {
			return nil, err
		}
		if _, err := s.led.AppendEventTx(tx, now, EventDeleted, r.EntityID, r.view()); err != nil {
			return nil, err
		}
		return r.viewAt(tx, now)
	})
}

// maxScan caps the index entries one list page examines.
const maxScan = 2000

// ListCards returns one page of the cards of f.EntityID (the caller's
// when ""), oldest first, without deleted cards; f.AccountID, when set,
// keeps that account's cards (and lists its entity).
//
// Errors: corebank.ErrEntityNotFound; ledger.ErrAccountNotFound; a
// validation error naming limit or cursor.
func (s *Service) ListCards(ctx context.Context, caller corebank.Caller, f CardFilter, opts corebank.ListOptions) (*Page, error) {
	accountID := f.AccountID
	limit, err := storage.CheckList(opts, corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Page, error) {
		entity, err := scope.Entity(tx, s.o.Tree, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		if accountID != "" {
			// The account must lie in the entity's tree; the list is then
			// of the account's entity.
			notFound := ledger.ErrAccountNotFound.With("account " + accountID + " not found")
			acct, err := scope.Get(tx, s.o.Tree, corebank.As(entity), "", accountID, s.led.GetAccountTx, notFound)
			if errors.Is(err, ledger.ErrAccountNotFound) {
				return nil, notFound
			}
			if err != nil {
				return nil, err
			}
			entity = acct.EntityID
		}
		q := storage.PageQuery{Bucket: index, Prefix: storage.Key("l", entity, ""), Opts: opts, Limit: limit, MaxScan: maxScan}
		page, err := storage.ReadPage(tx, q, func(id string, _ []byte) (Card, bool, error) {
			r, err := getCard(tx, id)
			if err != nil {
				return Card{}, false, err
			}
			if accountID != "" && r.AccountID != accountID {
				return Card{}, false, nil
			}
			c, err := r.viewAt(tx, now)
			if err != nil {
				return Card{}, false, err
			}
			return *c, true, nil
		})
		if err != nil {
			return nil, err
		}
		return &Page{Page: page, EntityID: entity}, nil
	})
}
