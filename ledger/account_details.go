package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/storage"
)

// Buckets of account details. Every key in them is written only by this file.
const (
	bucketDetails       = storage.Bucket("ledger.account_details")         // details ID -> detailsRecord JSON
	bucketDetailsIndex  = storage.Bucket("ledger.account_details_index")   // <filter>/<values...>/<details ID> -> empty
	bucketDetailsCounts = storage.Bucket("ledger.account_details_counts")  // <filter>/<values...>/ -> uint64 count
	bucketDetailsStats  = storage.Bucket("ledger.account_details_stats")   // details ID -> AccountDetailsStats JSON
	bucketDetailsNums   = storage.Bucket("ledger.account_details_numbers") // normalized account number or IBAN -> details ID
)

// Event types the ledger appends for account details.
const (
	EventAccountDetailsCreated = "account_details.created"
	EventAccountDetailsUpdated = "account_details.updated"
	EventAccountDetailsDeleted = "account_details.deleted"
)

// Account details statuses. SPEC.md names pending and active; inactive is
// corebank's status for details that expired or were deleted, which no
// longer accept inbound funds (StatusReason says which).
const (
	DetailsPending  = "pending"
	DetailsActive   = "active"
	DetailsInactive = "inactive"
)

// Reasons in AccountDetails.StatusReason.
const (
	ReasonProvisioning   = "provisioning"    // pending: the provider has not finished
	ReasonExpired        = "expired"         // inactive: terminate_after days passed
	ReasonDeleted        = "deleted"         // inactive: deleted by DeleteAccountDetails
	ReasonAccountDeleted = "account_deleted" // inactive: its account was deleted
)

// MaxTerminateAfter is the largest terminate_after, in days (100 years).
const MaxTerminateAfter = 36500

// AccountSummary is the short form of an account inside other objects.
type AccountSummary struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	Currency    string `json:"currency"`
}

// AccountDetailsCapabilities says what details can do now.
type AccountDetailsCapabilities struct {
	// ReceiveInflows is true while the details are active.
	ReceiveInflows bool `json:"receive_inflows"`
}

// AccountDetails are the bank coordinates or wallet address through which
// an account receives funds (SPEC "Account details"). It is the API
// representation. The fields SPEC.md mentions without naming are account,
// kind, currency, account_holder_name, display_name, capabilities and
// status_reason; sort_code, institution_number, transit_number and
// branch_code carry the GBP, CAD and ZAR codes; expires_at is when
// terminate_after ends (Unix ms, null without terminate_after).
type AccountDetails struct {
	ID        string         `json:"id"`
	EntityID  string         `json:"entity_id"`
	AccountID string         `json:"account_id"`
	Account   AccountSummary `json:"account"`
	// Kind is "fiat" or "stablecoin".
	Kind     string `json:"kind"`
	Currency string `json:"currency"`
	// AccountNumber is the bank account number, the IBAN for EUR, or the
	// wallet address; it is absent for fiat details while pending.
	AccountNumber     string             `json:"account_number,omitempty"`
	IBAN              string             `json:"iban,omitempty"`
	RoutingNumber     string             `json:"routing_number,omitempty"`
	SortCode          string             `json:"sort_code,omitempty"`
	InstitutionNumber string             `json:"institution_number,omitempty"`
	TransitNumber     string             `json:"transit_number,omitempty"`
	BranchCode        string             `json:"branch_code,omitempty"`
	Issuer            coordinates.Issuer `json:"issuer"`
	// Chain and SupportedAssets are set for stablecoin details only.
	Chain             string                     `json:"chain,omitempty"`
	SupportedAssets   []string                   `json:"supported_assets,omitempty"`
	AccountHolderName string                     `json:"account_holder_name"`
	DisplayName       string                     `json:"display_name"`
	Capabilities      AccountDetailsCapabilities `json:"capabilities"`
	// Status is pending, active or inactive (DetailsPending, ...).
	Status       string `json:"status"`
	StatusReason string `json:"status_reason,omitempty"`
	// TerminateAfter is the lifetime in days; nil means permanent.
	TerminateAfter *int   `json:"terminate_after"`
	ExpiresAt      *int64 `json:"expires_at"`
	ProviderID     string `json:"provider_id,omitempty"`
	// Deleted is 0 until deleted, then when (Unix ms).
	Deleted int64             `json:"deleted"`
	Meta    map[string]string `json:"meta"`
	Created int64             `json:"created"`
	Updated int64             `json:"updated"`
}

// detailsRecord is what is stored: the API object plus the account number
// withheld while fiat details are pending.
type detailsRecord struct {
	AccountDetails
	PendingAccountNumber string `json:"pending_account_number,omitempty"`
}

// NewAccountDetails is a request for account details (POST /account-details).
type NewAccountDetails struct {
	AccountID string `json:"account_id"`
	// EntityID, when set, narrows the caller to that entity's tree.
	EntityID string `json:"entity_id,omitempty"`
	// Chain is required for stablecoin accounts and forbidden for fiat.
	Chain string `json:"chain,omitempty"`
	// TerminateAfter, in days (1 to MaxTerminateAfter), makes the details
	// expire; nil means permanent.
	TerminateAfter *int `json:"terminate_after,omitempty"`
	// ProviderID selects a non-default provider; fiat only.
	ProviderID string            `json:"provider_id,omitempty"`
	Meta       map[string]string `json:"meta,omitempty"`
	// AccountHolderName defaults to the account's display name; httpapi
	// passes the owning entity's name.
	AccountHolderName string `json:"-"`
	// DisplayName defaults to the account's display name.
	DisplayName string `json:"-"`
}

// AccountDetailsFilter selects account details to list; empty fields do not
// filter.
type AccountDetailsFilter struct {
	AccountID string
	EntityID  string
}

// AccountDetailsStats is the inflow activity through one set of details.
type AccountDetailsStats struct {
	TotalInflowsCount  int64 `json:"total_inflows_count"`
	TotalInflowsAmount int64 `json:"total_inflows_amount"`
	// LastInflowAt is Unix ms, null before the first inflow.
	LastInflowAt *int64 `json:"last_inflow_at"`
}

func validateNewAccountDetails(p corebank.Problems, n *NewAccountDetails) {
	if n.AccountID == "" {
		p.Add("account_id", "is required")
	}
	if n.Chain != "" && !coordinates.ValidChain(n.Chain) {
		p.Add("chain", fmt.Sprintf("unknown chain %q; use one of eth, base, matic, sol", n.Chain))
	}
	if t := n.TerminateAfter; t != nil && (*t < 1 || *t > MaxTerminateAfter) {
		p.Add("terminate_after", fmt.Sprintf("must be a number of days from 1 to %d; omit it for permanent details", MaxTerminateAfter))
	}
	if n.ProviderID != "" && !validID(n.ProviderID) {
		p.Add("provider_id", "is not a valid provider ID")
	}
	if n.DisplayName != "" {
		checkDisplayName(p, n.DisplayName)
	}
	corebank.CheckText(p, "account_holder_name", n.AccountHolderName, corebank.Line(0, 255))
	corebank.CheckMeta(p, "meta", n.Meta, ledgerMeta)
}

// CreateAccountDetails issues account details for an account through the
// coordinates provider and stores them, appending account_details.created
// in the same transaction. The provider is called before the transaction
// (it is external I/O). Fiat details from the sandbox are active at once;
// stablecoin details are pending until ActivateAccountDetails. With
// TerminateAfter the details expire that many days after creation (see
// RunDue).
//
// The account must be one caller may act on; n.EntityID, when set,
// narrows the caller as in GetAccount.
//
// Errors: corebank.ErrForbidden for a read-only caller; a validation error
// naming each bad field (account_id, chain, terminate_after, provider_id,
// meta, display_name); corebank.ErrEntityNotFound for an unknown or
// foreign n.EntityID; ErrAccountNotFound (also for an account outside the
// caller's tree); ErrAccountDeleted; any error of the provider (validation
// errors name currency, chain or provider_id; KindUnavailable when it is
// down).
func (s *Service) CreateAccountDetails(ctx context.Context, caller corebank.Caller, n NewAccountDetails) (*AccountDetails, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	p := corebank.Problems{}
	validateNewAccountDetails(p, &n)
	if _, bad := p["account_id"]; bad {
		return nil, p.Err()
	}
	acct, err := storage.View(ctx, s.db, func(tx storage.Tx) (*Account, error) {
		return scope.Get(tx, s.tree, caller, n.EntityID, n.AccountID, s.getAccountTx, accountNotFound(n.AccountID))
	})
	if err != nil {
		return nil, err
	}
	if acct.Deleted != 0 {
		return nil, ErrAccountDeleted.With("account " + acct.ID + " is deleted")
	}
	info, ok := CurrencyInfo(acct.Currency)
	if !ok {
		return nil, corebank.InvalidField("account_id", "the account's currency "+acct.Currency+" has no account details")
	}
	switch info.Kind {
	case KindStablecoin:
		if n.Chain == "" {
			p.Add("chain", "is required for stablecoin accounts; use one of eth, base, matic, sol")
		}
		if n.ProviderID != "" {
			p.Add("provider_id", "is only allowed for fiat accounts")
		}
	default:
		if n.Chain != "" {
			p.Add("chain", "is only allowed for stablecoin accounts")
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	holder := n.AccountHolderName
	if holder == "" {
		holder = acct.DisplayName
	}
	issued, err := s.coords.Issue(ctx, coordinates.Request{
		AccountID:  acct.ID,
		Currency:   acct.Currency,
		Kind:       coordinates.Kind(info.Kind),
		Chain:      n.Chain,
		HolderName: holder,
		ProviderID: n.ProviderID,
	})
	if err != nil {
		return nil, err
	}
	if issued.Status != coordinates.StatusPending && issued.Status != coordinates.StatusActive {
		return nil, fmt.Errorf("ledger: coordinates provider returned status %q", issued.Status)
	}
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*AccountDetails, error) {
		now := s.clock.Now()
		a, err := scope.Get(tx, s.tree, caller, n.EntityID, n.AccountID, s.getAccountTx, accountNotFound(n.AccountID))
		if err != nil {
			return nil, err
		}
		if a.Deleted != 0 {
			return nil, ErrAccountDeleted.With("account " + a.ID + " is deleted")
		}
		r := newDetailsRecord(s.ids.New(now), corebank.Millis(now), a, info.Kind, holder, &n, issued)
		if err := insertDetailsTx(tx, r); err != nil {
			return nil, err
		}
		out := r.public()
		_, err = s.AppendEventTx(tx, now, EventAccountDetailsCreated, out.EntityID, out)
		return out, err
	})
}

// newDetailsRecord builds the record of new details: the provider's
// coordinates, withholding a pending fiat account number, with the
// expiry terminate_after days after ms.
func newDetailsRecord(id string, ms int64, a *Account, kind, holder string, n *NewAccountDetails, issued *coordinates.Issued) *detailsRecord {
	r := &detailsRecord{AccountDetails: AccountDetails{
		ID:                id,
		EntityID:          a.EntityID,
		AccountID:         a.ID,
		Account:           AccountSummary{ID: a.ID, DisplayName: a.DisplayName, Currency: a.Currency},
		Kind:              kind,
		Currency:          a.Currency,
		AccountNumber:     issued.AccountNumber,
		IBAN:              issued.IBAN,
		RoutingNumber:     issued.RoutingNumber,
		SortCode:          issued.SortCode,
		InstitutionNumber: issued.InstitutionNumber,
		TransitNumber:     issued.TransitNumber,
		BranchCode:        issued.BranchCode,
		Issuer:            issued.Issuer,
		SupportedAssets:   append([]string(nil), issued.SupportedAssets...),
		AccountHolderName: holder,
		DisplayName:       n.DisplayName,
		Status:            string(issued.Status),
		ProviderID:        n.ProviderID,
		Meta:              maps.Clone(n.Meta),
		Created:           ms,
		Updated:           ms,
	}}
	if r.DisplayName == "" {
		r.DisplayName = a.DisplayName
	}
	if kind == KindStablecoin {
		r.Chain = n.Chain
		if len(r.SupportedAssets) == 0 {
			r.SupportedAssets = append([]string(nil), stablecoinAssets...)
		}
	} else {
		r.SupportedAssets = nil
	}
	if r.Status == DetailsPending {
		r.StatusReason = ReasonProvisioning
		if kind == KindFiat {
			r.PendingAccountNumber, r.AccountNumber = r.AccountNumber, ""
		}
	}
	r.Capabilities.ReceiveInflows = r.Status == DetailsActive
	if n.TerminateAfter != nil {
		days := *n.TerminateAfter
		exp := ms + int64(days)*int64(24*time.Hour/time.Millisecond)
		r.TerminateAfter, r.ExpiresAt = &days, &exp
	}
	return r
}

// insertDetailsTx stores new details with their list, number and expiry keys.
func insertDetailsTx(tx storage.Tx, r *detailsRecord) error {
	if r.ExpiresAt != nil {
		if err := storage.Schedule(tx, dueDetails, *r.ExpiresAt, r.ID); err != nil {
			return err
		}
	}
	if err := indexDetails(tx, &r.AccountDetails, 1); err != nil {
		return err
	}
	if err := indexNumbers(tx, r); err != nil {
		return err
	}
	return putDetails(tx, r)
}

// public returns a copy of the API object with empty maps as {}.
func (r *detailsRecord) public() *AccountDetails {
	d := r.AccountDetails
	d.Meta = maps.Clone(d.Meta)
	if d.Meta == nil {
		d.Meta = map[string]string{}
	}
	d.SupportedAssets = append([]string(nil), d.SupportedAssets...)
	if len(d.SupportedAssets) == 0 {
		d.SupportedAssets = nil
	}
	return &d
}

func detailsIndexPrefixes(d *AccountDetails) []string {
	return []string{
		"a/",
		"acct/" + d.AccountID + "/",
		"e/" + d.EntityID + "/",
		"ea/" + d.EntityID + "/" + d.AccountID + "/",
	}
}

func detailsFilterPrefix(f AccountDetailsFilter) string {
	switch {
	case f.AccountID != "" && f.EntityID != "":
		return "ea/" + f.EntityID + "/" + f.AccountID + "/"
	case f.AccountID != "":
		return "acct/" + f.AccountID + "/"
	case f.EntityID != "":
		return "e/" + f.EntityID + "/"
	}
	return "a/"
}

// indexDetails adds (d=1) or removes (d=-1) the list keys and counters of
// undeleted details.
func indexDetails(tx storage.Tx, det *AccountDetails, d int64) error {
	for _, p := range detailsIndexPrefixes(det) {
		k := []byte(p + det.ID)
		var err error
		if d > 0 {
			err = tx.Put(bucketDetailsIndex, k, nil)
		} else {
			err = tx.Delete(bucketDetailsIndex, k)
		}
		if err != nil {
			return err
		}
		if err := addDetailsCount(tx, p, d); err != nil {
			return err
		}
	}
	return nil
}

func addDetailsCount(tx storage.Tx, key string, d int64) error {
	n, err := readCount(tx, bucketDetailsCounts, key)
	if err != nil {
		return err
	}
	n += d
	if n <= 0 {
		return tx.Delete(bucketDetailsCounts, []byte(key))
	}
	return tx.Put(bucketDetailsCounts, []byte(key), storage.AppendUint64(nil, uint64(n)))
}

func putDetails(tx storage.Tx, r *detailsRecord) error {
	return storage.PutJSON(tx, bucketDetails, []byte(r.ID), r)
}

// getDetailsTx reads a stored record, refreshing the account summary from
// the account. It returns ErrAccountDetailsNotFound when absent.
func (s *Service) getDetailsTx(tx storage.Tx, id string) (*detailsRecord, error) {
	if !validID(id) {
		return nil, detailsNotFound(id)
	}
	r, err := storage.LoadJSON[detailsRecord](tx, bucketDetails, []byte(id), storage.ErrNotFound)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, detailsNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	switch a, err := storage.LoadJSON[Account](tx, bucketAccounts, []byte(r.AccountID), storage.ErrNotFound); {
	case err == nil:
		r.Account = AccountSummary{ID: a.ID, DisplayName: a.DisplayName, Currency: a.Currency}
	case !errors.Is(err, storage.ErrNotFound):
		return nil, err
	}
	return r, nil
}

// GetAccountDetailsTx is GetAccountDetails inside tx without a caller, for
// domains that compose with the ledger and check scope themselves.
// Errors: ErrAccountDetailsNotFound.
func (s *Service) GetAccountDetailsTx(tx storage.Tx, id string) (*AccountDetails, error) {
	r, err := s.getDetailsTx(tx, id)
	if err != nil {
		return nil, err
	}
	return r.public(), nil
}

// Owner returns the entity that owns the details (scope.Owned).
func (d *AccountDetails) Owner() string { return d.EntityID }

// GetAccountDetails returns account details id when caller may see them;
// entityID, when set, narrows the caller as in GetAccount. Deleted details
// are still returned, with Deleted set.
//
// Errors: corebank.ErrEntityNotFound for an unknown or foreign entityID;
// ErrAccountDetailsNotFound for an unknown ID or details outside the
// caller's tree.
func (s *Service) GetAccountDetails(ctx context.Context, caller corebank.Caller, entityID, id string) (*AccountDetails, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*AccountDetails, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, s.getDetailsTx, detailsNotFound(id))
		if err != nil {
			return nil, err
		}
		return r.public(), nil
	})
}

// ListAccountDetails returns one page of undeleted account details matching
// f, oldest first; expired (inactive) details are included. With
// f.AccountID the account must be one caller (narrowed to f.EntityID when
// set) may see; without it the list is of f.EntityID's details, "" meaning
// the caller's own entity (every entity for System). Total is the number
// of matching details. Each page is one index seek plus the page.
//
// Errors: a validation error on entity_id, limit or cursor
// (corebank.ErrCursor); corebank.ErrEntityNotFound for an unknown or
// foreign f.EntityID; ErrAccountNotFound for an unknown or malformed
// f.AccountID or one outside the caller's tree.
func (s *Service) ListAccountDetails(ctx context.Context, caller corebank.Caller, f AccountDetailsFilter, opts corebank.ListOptions) (*corebank.Page[AccountDetails], error) {
	limit, err := storage.CheckList(opts, corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) (*corebank.Page[AccountDetails], error) {
		g := f
		if f.AccountID != "" {
			a, err := scope.Get(tx, s.tree, caller, f.EntityID, f.AccountID, s.getAccountTx, accountNotFound(f.AccountID))
			if err != nil {
				return nil, err
			}
			if f.EntityID != "" {
				g.EntityID = a.EntityID
			}
		} else {
			entity, err := s.requestedEntity(tx, caller, f.EntityID)
			if err != nil {
				return nil, err
			}
			if entity != "" && !validID(entity) {
				return nil, corebank.InvalidField("entity_id", "is not valid")
			}
			g.EntityID = entity
		}
		return countedPage(tx, bucketDetailsIndex, bucketDetailsCounts, detailsFilterPrefix(g), opts, limit, s.GetAccountDetailsTx)
	})
}

// ActivateAccountDetails moves pending details to active (provisioning
// completed), revealing a fiat account number withheld while pending, and
// appends account_details.updated; entityID, when set, narrows the caller
// as in GetAccount. Activating active details returns them unchanged and
// appends nothing.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an unknown or foreign entityID;
// ErrAccountDetailsNotFound (also for details outside the caller's tree);
// ErrAccountDetailsInactive for deleted or expired details (including ones
// whose expiry has passed but which RunDue has not yet processed).
func (s *Service) ActivateAccountDetails(ctx context.Context, caller corebank.Caller, entityID, id string) (*AccountDetails, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*AccountDetails, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, s.getDetailsTx, detailsNotFound(id))
		if err != nil {
			return nil, err
		}
		return s.activateDetails(tx, s.clock.Now(), r)
	})
}

// ActivateAccountDetailsTx is ActivateAccountDetails inside tx at time now,
// without a caller: the composing caller has checked its scope.
func (s *Service) ActivateAccountDetailsTx(tx storage.Tx, now time.Time, id string) (*AccountDetails, error) {
	r, err := s.getDetailsTx(tx, id)
	if err != nil {
		return nil, err
	}
	return s.activateDetails(tx, now, r)
}

// activateDetails is ActivateAccountDetailsTx for details already loaded.
func (s *Service) activateDetails(tx storage.Tx, now time.Time, r *detailsRecord) (*AccountDetails, error) {
	ms := corebank.Millis(now)
	if err := r.usable(ms); err != nil {
		return nil, err
	}
	if r.Status == DetailsActive {
		return r.public(), nil
	}
	r.Status, r.StatusReason = DetailsActive, ""
	if r.PendingAccountNumber != "" {
		r.AccountNumber, r.PendingAccountNumber = r.PendingAccountNumber, ""
	}
	if r.AccountNumber == "" && r.IBAN != "" {
		r.AccountNumber = r.IBAN
	}
	r.Capabilities.ReceiveInflows = true
	r.Updated = ms
	if err := putDetails(tx, r); err != nil {
		return nil, err
	}
	out := r.public()
	if _, err := s.AppendEventTx(tx, now, EventAccountDetailsUpdated, out.EntityID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// usable returns ErrAccountDetailsInactive when the details are deleted,
// inactive or past their expiry at ms.
func (r *detailsRecord) usable(ms int64) error {
	switch {
	case r.Deleted != 0:
		return ErrAccountDetailsInactive.With("account details " + r.ID + " are deleted")
	case r.Status == DetailsInactive:
		return ErrAccountDetailsInactive.With("account details " + r.ID + " are inactive (" + r.StatusReason + ")")
	case r.ExpiresAt != nil && *r.ExpiresAt <= ms:
		return ErrAccountDetailsInactive.With("account details " + r.ID + " have expired")
	}
	return nil
}

// DeleteAccountDetails deletes account details id: Deleted is set, the
// status becomes inactive with reason "deleted", they leave every list and
// stop accepting funds, and account_details.deleted is appended; entityID,
// when set, narrows the caller as in GetAccount. The record is kept for
// GetAccountDetails. Deleting deleted details returns them unchanged.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an unknown or foreign entityID;
// ErrAccountDetailsNotFound (also for details outside the caller's tree).
func (s *Service) DeleteAccountDetails(ctx context.Context, caller corebank.Caller, entityID, id string) (*AccountDetails, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*AccountDetails, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, s.getDetailsTx, detailsNotFound(id))
		if err != nil {
			return nil, err
		}
		return s.deleteDetailsTx(tx, s.clock.Now(), r, ReasonDeleted)
	})
}

// DeleteAccountDetailsTx is DeleteAccountDetails inside tx at time now,
// without a caller: the composing caller has checked its scope.
func (s *Service) DeleteAccountDetailsTx(tx storage.Tx, now time.Time, id string) (*AccountDetails, error) {
	r, err := s.getDetailsTx(tx, id)
	if err != nil {
		return nil, err
	}
	return s.deleteDetailsTx(tx, now, r, ReasonDeleted)
}

func (s *Service) deleteDetailsTx(tx storage.Tx, now time.Time, r *detailsRecord, reason string) (*AccountDetails, error) {
	if r.Deleted != 0 {
		return r.public(), nil
	}
	if err := indexDetails(tx, &r.AccountDetails, -1); err != nil {
		return nil, err
	}
	if r.ExpiresAt != nil {
		if err := storage.Unschedule(tx, dueDetails, *r.ExpiresAt, r.ID); err != nil {
			return nil, err
		}
	}
	ms := corebank.Millis(now)
	r.Deleted, r.Updated = ms, ms
	r.Status, r.StatusReason = DetailsInactive, reason
	r.Capabilities.ReceiveInflows = false
	if err := putDetails(tx, r); err != nil {
		return nil, err
	}
	out := r.public()
	if _, err := s.AppendEventTx(tx, now, EventAccountDetailsDeleted, out.EntityID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteAccountDetailsForAccountTx deletes, in tx at time now, every
// undeleted account details of accountID, with status reason
// "account_deleted" and one account_details.deleted event each, and returns
// how many it deleted. DeleteAccount's caller runs it in the same
// transaction as DeleteAccountTx. An unknown account has no details: 0, nil.
func (s *Service) DeleteAccountDetailsForAccountTx(tx storage.Tx, now time.Time, accountID string) (int, error) {
	ids, err := detailsIDsOfAccount(tx, accountID)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		r, err := s.getDetailsTx(tx, id)
		if err != nil {
			return 0, err
		}
		if _, err := s.deleteDetailsTx(tx, now, r, ReasonAccountDeleted); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// expireDetailsTx deactivates details whose terminate_after ended: status
// inactive with reason "expired", capabilities.receive_inflows false, and
// account_details.updated appended. Expired details stay listed and are not
// marked deleted; details already deleted or inactive are left alone.
func (s *Service) expireDetailsTx(tx storage.Tx, now time.Time, it storage.DueItem) error {
	r, err := s.getDetailsTx(tx, it.ID)
	if errors.Is(err, ErrAccountDetailsNotFound) {
		return nil
	}
	if err != nil || r.Deleted != 0 || r.Status == DetailsInactive {
		return err
	}
	r.Status, r.StatusReason = DetailsInactive, ReasonExpired
	r.Capabilities.ReceiveInflows = false
	r.Updated = corebank.Millis(now)
	if err := putDetails(tx, r); err != nil {
		return err
	}
	out := r.public()
	_, err = s.AppendEventTx(tx, now, EventAccountDetailsUpdated, out.EntityID, out)
	return err
}

// AcceptsInflowsTx returns nil when funds may arrive through the details
// detailsID at now: they exist, are active, not deleted, not past their
// expiry, and their account is not deleted.
//
// Errors: ErrAccountDetailsNotFound; ErrAccountDetailsPending;
// ErrAccountDetailsInactive; ErrAccountDeleted.
func (s *Service) AcceptsInflowsTx(tx storage.Tx, now time.Time, detailsID string) error {
	r, err := s.getDetailsTx(tx, detailsID)
	if err != nil {
		return err
	}
	if err := r.usable(corebank.Millis(now)); err != nil {
		return err
	}
	if r.Status != DetailsActive {
		return ErrAccountDetailsPending.With("account details " + r.ID + " are pending activation")
	}
	a, err := s.getAccountTx(tx, r.AccountID)
	if err != nil {
		return err
	}
	if a.Deleted != 0 {
		return ErrAccountDeleted.With("account " + a.ID + " is deleted")
	}
	return nil
}

// RecordInflowTx adds an inflow of amount (smallest units, > 0) received at
// now through detailsID to the details' activity statistics. Callers run it
// in the transaction that credits the account.
//
// Errors: a validation error on amount; ErrAccountDetailsNotFound.
func (s *Service) RecordInflowTx(tx storage.Tx, now time.Time, detailsID string, amount int64) error {
	if amount <= 0 {
		return corebank.InvalidField("amount", "must be greater than zero")
	}
	if _, err := s.getDetailsTx(tx, detailsID); err != nil {
		return err
	}
	st, err := detailsStatsTx(tx, detailsID)
	if err != nil {
		return err
	}
	ms := corebank.Millis(now)
	st.TotalInflowsCount++
	st.TotalInflowsAmount += amount
	st.LastInflowAt = &ms
	return storage.PutJSON(tx, bucketDetailsStats, []byte(detailsID), st)
}

// detailsStatsTx reads the stats of details id; none yet reads as zero.
func detailsStatsTx(tx storage.Tx, id string) (*AccountDetailsStats, error) {
	st, err := storage.LoadJSON[AccountDetailsStats](tx, bucketDetailsStats, []byte(id), storage.ErrNotFound)
	if errors.Is(err, storage.ErrNotFound) {
		return &AccountDetailsStats{}, nil
	}
	return st, err
}

// AccountDetailsStatsTx is GetAccountDetailsStats inside tx without a
// caller. Errors: ErrAccountDetailsNotFound.
func (s *Service) AccountDetailsStatsTx(tx storage.Tx, detailsID string) (*AccountDetailsStats, error) {
	if _, err := s.getDetailsTx(tx, detailsID); err != nil {
		return nil, err
	}
	return detailsStatsTx(tx, detailsID)
}

// GetAccountDetailsStats returns the inflow activity through details id
// (zero counts and a null last_inflow_at before any inflow) when caller
// may see the details; entityID, when set, narrows the caller as in
// GetAccount.
//
// Errors: corebank.ErrEntityNotFound for an unknown or foreign entityID;
// ErrAccountDetailsNotFound (also for details outside the caller's tree).
func (s *Service) GetAccountDetailsStats(ctx context.Context, caller corebank.Caller, entityID, id string) (*AccountDetailsStats, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*AccountDetailsStats, error) {
		if _, err := scope.Get(tx, s.tree, caller, entityID, id, s.getDetailsTx, detailsNotFound(id)); err != nil {
			return nil, err
		}
		return detailsStatsTx(tx, id)
	})
}

// normalizeNumber is the form numbers are indexed and looked up in: IBANs
// without spaces in upper case, EVM addresses in lower case, anything else
// (account numbers, case-sensitive Solana addresses) as given.
func normalizeNumber(n string) string {
	n = strings.TrimSpace(n)
	if coordinates.ValidateIBAN(n) == nil {
		return coordinates.NormalizeIBAN(n)
	}
	if len(n) == 42 && strings.HasPrefix(n, "0x") {
		return strings.ToLower(n)
	}
	return n
}

// indexNumbers reserves the account number (withheld or not) and IBAN of r.
// Numbers are never released, so they are never reissued.
func indexNumbers(tx storage.Tx, r *detailsRecord) error {
	for _, n := range []string{r.AccountNumber, r.PendingAccountNumber, r.IBAN} {
		if n == "" {
			continue
		}
		k := []byte(normalizeNumber(n))
		id, err := tx.Get(bucketDetailsNums, k)
		switch {
		case err == nil && string(id) != r.ID:
			return ErrAccountNumberTaken
		case err == nil:
			continue
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		if err := tx.Put(bucketDetailsNums, k, []byte(r.ID)); err != nil {
			return err
		}
	}
	return nil
}

// AccountDetailsByNumberTx returns the details that hold number: an account
// number, IBAN (spaces and case ignored) or wallet address (EVM addresses in
// any case). Deleted and expired details are returned too; check them with
// AcceptsInflowsTx before crediting. It returns ErrAccountDetailsNotFound
// when no details hold number.
func (s *Service) AccountDetailsByNumberTx(tx storage.Tx, number string) (*AccountDetails, error) {
	k := normalizeNumber(number)
	if k == "" {
		return nil, ErrAccountDetailsNotFound.With("no account details hold an empty number")
	}
	id, err := tx.Get(bucketDetailsNums, []byte(k))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrAccountDetailsNotFound.With("no account details hold number " + number)
	}
	if err != nil {
		return nil, err
	}
	return s.GetAccountDetailsTx(tx, string(id))
}

// AccountDetailsByNumber is AccountDetailsByNumberTx in its own read
// transaction, for details caller may see.
//
// Errors: ErrAccountDetailsNotFound when no details hold number or they
// lie outside the caller's tree.
func (s *Service) AccountDetailsByNumber(ctx context.Context, caller corebank.Caller, number string) (*AccountDetails, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*AccountDetails, error) {
		return scope.Get(tx, s.tree, caller, "", number, s.AccountDetailsByNumberTx, ErrAccountDetailsNotFound.With("no account details hold number "+number))
	})
}

// AccountDetailsOfAccountTx returns the undeleted details of accountID,
// oldest first (none for an unknown account). Inflow simulation uses it to
// route funds through an account's active details when it has any.
func (s *Service) AccountDetailsOfAccountTx(tx storage.Tx, accountID string) ([]AccountDetails, error) {
	ids, err := detailsIDsOfAccount(tx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]AccountDetails, 0, len(ids))
	for _, id := range ids {
		r, err := s.getDetailsTx(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *r.public())
	}
	return out, nil
}

// detailsOfAccountPrefix is the index prefix of accountID's details.
func detailsOfAccountPrefix(accountID string) []byte {
	return []byte("acct/" + accountID + "/")
}

// detailsIDsOfAccount returns the IDs of accountID's undeleted details.
func detailsIDsOfAccount(tx storage.Tx, accountID string) ([]string, error) {
	if !validID(accountID) {
		return nil, nil
	}
	prefix := detailsOfAccountPrefix(accountID)
	var ids []string
	err := tx.Scan(bucketDetailsIndex, storage.ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
		ids = append(ids, string(k[len(prefix):]))
		return nil
	})
	return ids, err
}
