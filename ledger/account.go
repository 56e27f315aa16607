package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/luhn"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// Account types.
const (
	TypeChecking    = "checking"
	TypeDebit       = "debit"
	TypeOperational = "operational"
	TypeSafeguard   = "safeguard"
)

var accountTypes = map[string]bool{TypeChecking: true, TypeDebit: true, TypeOperational: true, TypeSafeguard: true}

// Event types the ledger appends for accounts.
const (
	EventAccountCreated = "accounts.created"
	EventAccountUpdated = "accounts.updated"
	EventAccountDeleted = "accounts.deleted"
)

// MaxDisplayName is the longest display_name, in characters.
const MaxDisplayName = 100

// Account is a customer account in one currency. It is the API
// representation: JSON names are SPEC.md's, and the fields SPEC.md mentions
// without naming are balance_id, configuration, stablecoin_balance,
// maintenance_fee_exempt and internal_metadata.
type Account struct {
	ID          string `json:"id"`
	EntityID    string `json:"entity_id"`
	Type        string `json:"type"`
	Currency    string `json:"currency"`
	DisplayName string `json:"display_name"`
	// ServiceBAN is the internal routing number: 10 digits, the last a Luhn
	// check digit, unique, never reused.
	ServiceBAN string         `json:"service_ban"`
	Balance    AccountBalance `json:"balance"`
	// BalanceID identifies the account's balance record.
	BalanceID     string               `json:"balance_id"`
	Configuration AccountConfiguration `json:"configuration"`
	// StablecoinBalance is {} for fiat accounts.
	StablecoinBalance    StablecoinBalance `json:"stablecoin_balance"`
	MaintenanceFeeExempt bool              `json:"maintenance_fee_exempt"`
	// InternalMetadata is set only by the embedder in Go (NewAccount), never
	// by API clients.
	InternalMetadata map[string]string `json:"internal_metadata"`
	Meta             map[string]string `json:"meta"`
	// IsDefault is true on the first account an entity opened.
	IsDefault bool `json:"is_default"`
	// Deleted is 0 while active, else when it was deleted (Unix ms).
	Deleted int64 `json:"deleted"`
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// AccountConfiguration is an account's movement policy. The ledger enforces
// AllowInflows and AllowOutflows on new movements; Overdraft is always
// false (customer accounts never go below zero available).
type AccountConfiguration struct {
	AllowInflows  bool `json:"allow_inflows"`
	AllowOutflows bool `json:"allow_outflows"`
	Overdraft     bool `json:"overdraft"`
}

// StablecoinBalance is the stablecoin detail of an account: empty for fiat;
// for stablecoins the decimals, the on-chain assets accepted (always USDC
// and USDT) and the balance in the account's 6-decimal unit. The ledger
// does not split the balance per asset: assets are fungible inside it.
type StablecoinBalance struct {
	Decimals        int      `json:"decimals,omitempty"`
	SupportedAssets []string `json:"supported_assets,omitempty"`
	Available       *int64   `json:"available,omitempty"`
	Current         *int64   `json:"current,omitempty"`
}

// NewAccount is a request to open an account.
type NewAccount struct {
	EntityID    string            `json:"entity_id"`
	Type        string            `json:"type"`
	Currency    string            `json:"currency"`
	DisplayName string            `json:"display_name"`
	Meta        map[string]string `json:"meta,omitempty"`
	// Fields below are for the embedder; httpapi never fills them from a
	// request body.
	Configuration        *AccountConfiguration `json:"-"` // nil: inflows and outflows allowed
	MaintenanceFeeExempt bool                  `json:"-"`
	InternalMetadata     map[string]string     `json:"-"`
}

// AccountChange summarises one changed field of an account.
type AccountChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// AccountPatch is a change to an account (UpdateAccount): nil fields stay
// as they are.
type AccountPatch struct {
	DisplayName *string
}

// AccountFilter selects accounts to list; empty fields do not filter.
type AccountFilter struct {
	EntityID string
	Currency string
	Type     string
}

func validID(s string) bool {
	return s != "" && len(s) <= 64 && !strings.ContainsAny(s, "/\x00")
}

func validateNewAccount(n *NewAccount) error {
	p := corebank.Problems{}
	if n.EntityID == "" {
		p.Add("entity_id", "is required")
	} else if !validID(n.EntityID) {
		p.Add("entity_id", "is not a valid ID")
	}
	if n.Type == "" {
		p.Add("type", "is required")
	} else if !accountTypes[n.Type] {
		p.Add("type", "must be checking, debit, operational or safeguard")
	}
	if n.Currency == "" {
		p.Add("currency", "is required")
	} else if _, ok := currencies[n.Currency]; !ok {
		p.Add("currency", "is not supported")
	}
	checkDisplayName(p, n.DisplayName)
	corebank.CheckMeta(p, "meta", n.Meta, ledgerMeta)
	return p.Err()
}

func checkDisplayName(p corebank.Problems, name string) {
	if strings.TrimSpace(name) == "" {
		p.Add("display_name", "is required")
		return
	}
	corebank.CheckText(p, "display_name", name, displayNameRule)
}

var displayNameRule = corebank.Line(1, MaxDisplayName)

// ledgerMeta bounds the meta of accounts and account details.
var ledgerMeta = corebank.MetaLimits{Keys: 50, KeyLen: 40, ValueLen: 500}

// Index filters: each account has one key per subset of
// {entity, currency, type}, so any filter combination is a prefix scan.
func indexPrefixes(entity, currency, typ string) []string {
	return []string{
		"a/",
		"e/" + entity + "/",
		"c/" + currency + "/",
		"t/" + typ + "/",
		"ec/" + entity + "/" + currency + "/",
		"et/" + entity + "/" + typ + "/",
		"ct/" + currency + "/" + typ + "/",
		"ect/" + entity + "/" + currency + "/" + typ + "/",
	}
}

func filterPrefix(f AccountFilter) string {
	var tag string
	var parts []string
	if f.EntityID != "" {
		tag += "e"
		parts = append(parts, f.EntityID)
	}
	if f.Currency != "" {
		tag += "c"
		parts = append(parts, f.Currency)
	}
	if f.Type != "" {
		tag += "t"
		parts = append(parts, f.Type)
	}
	if tag == "" {
		return "a/"
	}
	return tag + "/" + strings.Join(parts, "/") + "/"
}

func addCount(tx storage.Tx, key string, d int64) error {
	var n uint64
	raw, err := storage.Peek(tx, bucketCounts, []byte(key))
	switch {
	case err == nil:
		n, err = storage.Uint64(raw)
		if err != nil {
			return err
		}
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	n = uint64(int64(n) + d)
	if n == 0 {
		return tx.Delete(bucketCounts, []byte(key))
	}
	var v [8]byte
	return tx.Put(bucketCounts, []byte(key), storage.AppendUint64(v[:0], n))
}

// readCount returns the counter under key in bucket b, 0 when absent.
func readCount(tx storage.Tx, b storage.Bucket, key string) (int64, error) {
	raw, err := tx.Get(b, []byte(key))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := storage.Uint64(raw)
	return int64(n), err
}

// countedPage reads one page of the index under prefix (an ID after the
// prefix each), loading every item by ID, with Total from the counter kept
// under prefix in counts.
func countedPage[T any](tx storage.Tx, index, counts storage.Bucket, prefix string, opts corebank.ListOptions, limit int, load func(storage.Tx, string) (*T, error)) (*corebank.Page[T], error) {
	page, err := storage.ReadPage(tx, storage.PageQuery{Bucket: index, Prefix: []byte(prefix), Opts: opts, Limit: limit},
		func(id string, _ []byte) (T, bool, error) {
			v, err := load(tx, id)
			if err != nil {
				var zero T
				return zero, false, err
			}
			return *v, true, nil
		})
	if err != nil {
		return nil, err
	}
	if page.Total, err = readCount(tx, counts, prefix); err != nil {
		return nil, err
	}
	return page, nil
}

// serviceBAN derives a 10-digit number (first digit 1-9, last a Luhn check
// digit) from an ID.
func serviceBAN(seed string) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	v := h.Sum64()
	digits := make([]byte, 0, 10)
	digits = append(digits, byte('1'+v%9))
	v /= 9
	for range 8 {
		digits = append(digits, byte('0'+v%10))
		v /= 10
	}
	return string(append(digits, luhn.CheckDigit(digits)))
}

// ValidServiceBAN reports whether s has the form of a service BAN (10
// digits with a valid check digit); it does not look the number up.
func ValidServiceBAN(s string) bool {
	if len(s) != 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return luhn.Valid(s)
}

// CreateAccount opens an account for caller with zero balances and
// appends an accounts.created event in the same transaction. n.EntityID is
// the owner; "" means the caller's own entity. The entity's first account
// becomes its default.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound when n.EntityID is unknown or outside the
// caller's tree; a validation error naming each bad field (entity_id,
// type, currency, display_name, meta); any error of
// EntityGate.CanOpenAccount.
func (s *Service) CreateAccount(ctx context.Context, caller corebank.Caller, n NewAccount) (*Account, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Account, error) {
		// System names the owner itself; a missing one is a validation
		// error of CreateAccountTx, reported with the other fields.
		owned := n
		id, err := s.requestedEntity(tx, caller, n.EntityID)
		if err != nil {
			return nil, err
		}
		owned.EntityID = id
		return s.CreateAccountTx(tx, s.clock.Now(), owned)
	})
}

// CreateAccountTx is CreateAccount inside tx at time now for n.EntityID,
// without a caller: the composing caller has checked its scope.
func (s *Service) CreateAccountTx(tx storage.Tx, now time.Time, n NewAccount) (*Account, error) {
	if err := validateNewAccount(&n); err != nil {
		return nil, err
	}
	if s.gate != nil {
		if err := s.gate.CanOpenAccount(tx, n.EntityID); err != nil {
			return nil, err
		}
	}
	ms := corebank.Millis(now)
	cfg := AccountConfiguration{AllowInflows: true, AllowOutflows: true}
	if n.Configuration != nil {
		cfg = *n.Configuration
		cfg.Overdraft = false
	}
	a := &Account{
		ID:                   s.ids.New(now),
		EntityID:             n.EntityID,
		Type:                 n.Type,
		Currency:             n.Currency,
		DisplayName:          n.DisplayName,
		BalanceID:            "bal_" + s.ids.New(now),
		Configuration:        cfg,
		MaintenanceFeeExempt: n.MaintenanceFeeExempt,
		InternalMetadata:     maps.Clone(n.InternalMetadata),
		Meta:                 maps.Clone(n.Meta),
		Created:              ms,
		Updated:              ms,
	}
	for i := 0; ; i++ {
		seed := a.ID
		if i > 0 {
			seed = s.ids.New(now)
		}
		ban := serviceBAN(seed)
		taken, err := storage.Exists(tx, bucketBANs, []byte(ban))
		if err != nil {
			return nil, err
		}
		if !taken {
			a.ServiceBAN = ban
			break
		}
		if i == 100 {
			return nil, errors.New("ledger: cannot find a free service BAN")
		}
	}
	hasDefault, err := storage.Exists(tx, bucketDefaults, []byte(a.EntityID))
	if err != nil {
		return nil, err
	}
	if !hasDefault {
		a.IsDefault = true
		if err := tx.Put(bucketDefaults, []byte(a.EntityID), []byte(a.ID)); err != nil {
			return nil, err
		}
	}
	if err := tx.Put(bucketBANs, []byte(a.ServiceBAN), []byte(a.ID)); err != nil {
		return nil, err
	}
	r := &balRec{currency: a.Currency, entity: []byte(a.EntityID)}
	if !cfg.AllowInflows {
		r.flags |= flagNoInflows
	}
	if !cfg.AllowOutflows {
		r.flags |= flagNoOutflows
	}
	if err := s.putBal(tx, a.ID, r); err != nil {
		return nil, err
	}
	if err := s.indexAccount(tx, a, 1); err != nil {
		return nil, err
	}
	s.fill(a, r)
	raw, err := putAccount(tx, a)
	if err != nil {
		return nil, err
	}
	if _, err := s.appendEvent(tx, now, EventAccountCreated, a.EntityID, raw); err != nil {
		return nil, err
	}
	return a, nil
}

// indexAccount adds (d=1) or removes (d=-1) an account's list index keys
// and counters.
func (s *Service) indexAccount(tx storage.Tx, a *Account, d int64) error {
	bp := s.buf()
	defer func() { s.release(bp, *bp) }()
	for _, p := range indexPrefixes(a.EntityID, a.Currency, a.Type) {
		k := append(append((*bp)[:0], p...), a.ID...)
		*bp = k
		var err error
		if d > 0 {
			err = tx.Put(bucketIndex, k, nil)
		} else {
			err = tx.Delete(bucketIndex, k)
		}
		if err != nil {
			return err
		}
		if err := addCount(tx, p, d); err != nil {
			return err
		}
	}
	return nil
}

// putAccount stores a as JSON and returns the encoding, which is also the
// object of the event the caller appends.
func putAccount(tx storage.Tx, a *Account) (json.RawMessage, error) {
	raw, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("ledger: encode account: %w", err)
	}
	return raw, tx.Put(bucketAccounts, []byte(a.ID), raw)
}

// fill sets the fields derived from the balance record, and turns nil maps
// into empty objects.
func (s *Service) fill(a *Account, r *balRec) {
	a.Balance = r.Summary()
	a.StablecoinBalance = StablecoinBalance{}
	if c, _ := CurrencyInfo(a.Currency); c.Kind == KindStablecoin {
		av, cu := r.Available(), r.Current()
		a.StablecoinBalance = StablecoinBalance{Decimals: c.Exponent, SupportedAssets: append([]string(nil), stablecoinAssets...), Available: &av, Current: &cu}
	}
	if a.Meta == nil {
		a.Meta = map[string]string{}
	}
	if a.InternalMetadata == nil {
		a.InternalMetadata = map[string]string{}
	}
}

// getAccountTx reads an account with its current balance. Deleted accounts
// are returned (Deleted != 0). It returns ErrAccountNotFound when absent.
func (s *Service) getAccountTx(tx storage.Tx, id string) (*Account, error) {
	if !validID(id) {
		return nil, ErrAccountNotFound
	}
	if storage.Prefetching(tx) {
		// The record and the balance in one read, where reads are round
		// trips.
		if err := (Reads{Accounts: []string{id}}).Prefetch(tx); err != nil {
			return nil, err
		}
	}
	a, err := accountRecord(tx, id)
	if err != nil {
		return nil, err
	}
	r, err := loadBal(tx, id)
	if err != nil {
		return nil, err
	}
	s.fill(a, r)
	return a, nil
}

// GetAccountTx is getAccount inside tx without a caller, for domains that
// compose with the ledger and check scope themselves: it returns the
// account (deleted ones too) or ErrAccountNotFound.
func (s *Service) GetAccountTx(tx storage.Tx, id string) (*Account, error) {
	return s.getAccountTx(tx, id)
}

// Owner returns the entity that owns the account (scope.Owned).
func (a *Account) Owner() string { return a.EntityID }

// GetAccount returns account id with its current balance, when caller may
// see it; entityID, when set, narrows the caller to that entity's tree. A
// deleted account is still returned, with Deleted set to when it was
// deleted; callers that must not act on it check Deleted.
//
// Errors: corebank.ErrEntityNotFound when entityID is unknown or outside
// the caller's tree; ErrAccountNotFound for an unknown ID, an account
// outside the (narrowed) caller's tree, and system accounts (use
// GetBalance for those).
func (s *Service) GetAccount(ctx context.Context, caller corebank.Caller, entityID, id string) (*Account, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Account, error) {
		return scope.Get(tx, s.tree, caller, entityID, id, s.getAccountTx, accountNotFound(id))
	})
}

// AccountByServiceBAN returns the account whose service_ban is ban
// (deleted accounts included; BANs are never reused), when caller may see
// it.
//
// Errors: ErrAccountNotFound when no account has it or it lies outside the
// caller's tree.
func (s *Service) AccountByServiceBAN(ctx context.Context, caller corebank.Caller, ban string) (*Account, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Account, error) {
		return scope.Get(tx, s.tree, caller, "", ban, s.AccountByServiceBANTx, ErrAccountNotFound.With("no account has service_ban "+ban))
	})
}

// AccountByServiceBANTx is AccountByServiceBAN inside tx without a caller,
// for domains that compose with the ledger (a book transfer resolves its
// receiving account). Errors: ErrAccountNotFound.
func (s *Service) AccountByServiceBANTx(tx storage.Tx, ban string) (*Account, error) {
	id, err := accountIDByBAN(tx, ban)
	if err != nil {
		return nil, err
	}
	return s.getAccountTx(tx, id)
}

// AccountRecordByServiceBANTx is AccountByServiceBANTx without the
// balance (Balance is zero): for a check of what the account is (its
// currency, status, configuration), which then need not read, nor on a
// store that locks what it reads (storage/postgres) wait for, the
// transactions moving the account's money.
func (s *Service) AccountRecordByServiceBANTx(tx storage.Tx, ban string) (*Account, error) {
	id, err := accountIDByBAN(tx, ban)
	if err != nil {
		return nil, err
	}
	return accountRecord(tx, id)
}

// AccountRecordTx is account id's record without its balance (Balance is
// zero), read in tx: see AccountRecordByServiceBANTx.
func (s *Service) AccountRecordTx(tx storage.Tx, id string) (*Account, error) {
	return accountRecord(tx, id)
}

// AccountIDByServiceBAN returns the ID of the account whose service BAN is
// ban, read in tx. A service BAN names one account for good: it is
// assigned when the account is opened and never changes or moves, also
// after the account is deleted.
func AccountIDByServiceBAN(tx storage.Tx, ban string) (string, error) {
	return accountIDByBAN(tx, ban)
}

// accountRecord reads account id's record, without its balance.
func accountRecord(tx storage.Tx, id string) (*Account, error) {
	a, err := storage.LoadJSON[Account](tx, bucketAccounts, []byte(id), storage.ErrNotFound)
	if errors.Is(err, storage.ErrNotFound) {
		// The message names the account, so it is built only when needed.
		return nil, accountNotFound(id)
	}
	return a, err
}

// accountIDByBAN returns the ID of the account with service BAN ban.
func accountIDByBAN(tx storage.Tx, ban string) (string, error) {
	if !ValidServiceBAN(ban) {
		return "", ErrAccountNotFound.With("no account has service_ban " + ban)
	}
	id, err := tx.Get(bucketBANs, []byte(ban))
	if errors.Is(err, storage.ErrNotFound) {
		return "", ErrAccountNotFound.With("no account has service_ban " + ban)
	}
	if err != nil {
		return "", err
	}
	return string(id), nil
}

// ListAccounts returns one page of active (not deleted) accounts matching
// f, in creation order. f.EntityID is the owner, "" meaning the caller's
// own entity (every entity for System). Total is the number of matching
// accounts, kept as a counter per filter combination (O(1)). Any page
// costs one seek plus the page: the indexes are keys.
//
// Errors: a validation error on "limit", "cursor" (corebank.ErrCursor),
// "entity_id", "currency" or "type"; corebank.ErrEntityNotFound when
// f.EntityID is unknown or outside the caller's tree.
func (s *Service) ListAccounts(ctx context.Context, caller corebank.Caller, f AccountFilter, opts corebank.ListOptions) (*corebank.Page[Account], error) {
	limit, err := storage.CheckList(opts, corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) (*corebank.Page[Account], error) {
		prefix, err := s.accountsPrefix(tx, caller, f)
		if err != nil {
			return nil, err
		}
		return countedPage(tx, bucketIndex, bucketCounts, prefix, opts, limit, s.getAccountTx)
	})
}

// accountsPrefix resolves f's entity for caller (see listEntity), checks
// f, and returns the index prefix of the accounts it selects.
func (s *Service) accountsPrefix(tx storage.Tx, caller corebank.Caller, f AccountFilter) (string, error) {
	entity, err := s.requestedEntity(tx, caller, f.EntityID)
	if err != nil {
		return "", err
	}
	f.EntityID = entity
	p := corebank.Problems{}
	for field, v := range map[string]string{"entity_id": f.EntityID, "currency": f.Currency, "type": f.Type} {
		if v != "" && !validID(v) {
			p.Add(field, "is not valid")
		}
	}
	if err := p.Err(); err != nil {
		return "", err
	}
	return filterPrefix(f), nil
}

// CountAccounts returns how many active accounts match f, in O(1), with
// f.EntityID resolved for caller as ListAccounts does.
//
// Errors: a validation error on "entity_id", "currency" or "type";
// corebank.ErrEntityNotFound when f.EntityID is unknown or outside the
// caller's tree.
func (s *Service) CountAccounts(ctx context.Context, caller corebank.Caller, f AccountFilter) (int64, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (int64, error) {
		prefix, err := s.accountsPrefix(tx, caller, f)
		if err != nil {
			return 0, err
		}
		return readCount(tx, bucketCounts, prefix)
	})
}

// UpdateAccount applies patch to account id and appends accounts.updated;
// entityID, when set, narrows the caller as in GetAccount. display_name is
// the only field a client may change. It returns the account and the
// change to display_name: nil for an empty patch, whose From equals To
// when the name is the current one; neither writes anything.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an unknown or foreign entityID;
// ErrAccountNotFound (also for an account outside the caller's tree); a
// validation error on display_name; ErrAccountDeleted for a deleted
// account.
func (s *Service) UpdateAccount(ctx context.Context, caller corebank.Caller, entityID, id string, patch AccountPatch) (*Account, *AccountChange, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, nil, err
	}
	type updated struct {
		a      *Account
		change *AccountChange
	}
	r, err := storage.Update(ctx, s.db, func(tx storage.Tx) (updated, error) {
		a, err := scope.Get(tx, s.tree, caller, entityID, id, s.getAccountTx, accountNotFound(id))
		if err != nil || patch.DisplayName == nil {
			return updated{a, nil}, err
		}
		if err := checkDisplayNameErr(*patch.DisplayName); err != nil {
			return updated{}, err
		}
		a, change, err := s.renameAccount(tx, s.clock.Now(), a, *patch.DisplayName)
		return updated{a, change}, err
	})
	return r.a, r.change, err
}

// UpdateAccountTx is UpdateAccount inside tx at time now, without a
// caller: the composing caller has checked its scope.
func (s *Service) UpdateAccountTx(tx storage.Tx, now time.Time, id string, patch AccountPatch) (*Account, *AccountChange, error) {
	if patch.DisplayName != nil {
		if err := checkDisplayNameErr(*patch.DisplayName); err != nil {
			return nil, nil, err
		}
	}
	a, err := s.getAccountTx(tx, id)
	if err != nil || patch.DisplayName == nil {
		return a, nil, err
	}
	return s.renameAccount(tx, now, a, *patch.DisplayName)
}

// checkDisplayNameErr is checkDisplayName as an error of its own.
func checkDisplayNameErr(displayName string) error {
	p := corebank.Problems{}
	checkDisplayName(p, displayName)
	return p.Err()
}

// renameAccount is UpdateAccountTx of display_name for an account already
// loaded and a name already checked.
func (s *Service) renameAccount(tx storage.Tx, now time.Time, a *Account, displayName string) (*Account, *AccountChange, error) {
	id := a.ID
	if a.Deleted != 0 {
		return nil, nil, ErrAccountDeleted.With("account " + id + " is deleted")
	}
	change := &AccountChange{Field: "display_name", From: a.DisplayName, To: displayName}
	if a.DisplayName == displayName {
		return a, change, nil
	}
	a.DisplayName = displayName
	a.Updated = corebank.Millis(now)
	raw, err := putAccount(tx, a)
	if err != nil {
		return nil, nil, err
	}
	if _, err := s.appendEvent(tx, now, EventAccountUpdated, a.EntityID, raw); err != nil {
		return nil, nil, err
	}
	return a, change, nil
}

// DeleteAccount marks account id deleted (Deleted = now in ms), removes it
// from lists, deletes its account details (DeleteAccountDetailsForAccountTx)
// and appends accounts.deleted, all in one transaction; entityID, when
// set, narrows the caller as in GetAccount. The record is kept: GetAccount
// and AccountByServiceBAN still return it, and money can no longer move
// on it. Deleting a deleted account returns it unchanged.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an unknown or foreign entityID;
// ErrAccountNotFound (also for an account outside the caller's tree);
// ErrAccountNotEmpty when its settled balance is not zero or holds are
// pending on it.
func (s *Service) DeleteAccount(ctx context.Context, caller corebank.Caller, entityID, id string) (*Account, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Account, error) {
		a, err := scope.Get(tx, s.tree, caller, entityID, id, s.getAccountTx, accountNotFound(id))
		if err != nil {
			return nil, err
		}
		now := s.clock.Now()
		a, err = s.deleteAccount(tx, now, a)
		if err != nil {
			return nil, err
		}
		if _, err := s.DeleteAccountDetailsForAccountTx(tx, now, id); err != nil {
			return nil, err
		}
		return a, nil
	})
}

// DeleteAccountTx is DeleteAccount inside tx at time now, without a caller
// (the composing caller has checked its scope), except that it leaves the
// account's details alone: a composing caller runs
// DeleteAccountDetailsForAccountTx in the same transaction.
func (s *Service) DeleteAccountTx(tx storage.Tx, now time.Time, id string) (*Account, error) {
	a, err := s.getAccountTx(tx, id)
	if err != nil {
		return nil, err
	}
	return s.deleteAccount(tx, now, a)
}

// deleteAccount is DeleteAccountTx for an account already loaded.
func (s *Service) deleteAccount(tx storage.Tx, now time.Time, a *Account) (*Account, error) {
	id := a.ID
	if a.Deleted != 0 {
		return a, nil
	}
	r, err := loadBal(tx, id)
	if err != nil {
		return nil, err
	}
	if r.Settled != 0 || r.PendingDebits != 0 || r.PendingCredits != 0 {
		return nil, ErrAccountNotEmpty.WithData(a.Balance)
	}
	r.flags |= flagDeleted
	if err := s.putBal(tx, id, r); err != nil {
		return nil, err
	}
	if err := s.indexAccount(tx, a, -1); err != nil {
		return nil, err
	}
	ms := corebank.Millis(now)
	a.Deleted = ms
	a.Updated = ms
	raw, err := putAccount(tx, a)
	if err != nil {
		return nil, err
	}
	if _, err := s.appendEvent(tx, now, EventAccountDeleted, a.EntityID, raw); err != nil {
		return nil, err
	}
	return a, nil
}
