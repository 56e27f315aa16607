package cards

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/storage"
)

// Card states (SPEC.md "Card").
const (
	StatusActive  = "active"
	StatusBlocked = "blocked"
	StatusFraud   = "fraud"
)

// Card types.
const (
	TypeDisposable = "disposable"
	TypeVirtual    = "virtual"
)

// Events appended by card moves (SPEC.md "Webhooks").
const (
	EventCreated  = "cards.created"
	EventFrozen   = "cards.frozen"
	EventUnfrozen = "cards.unfrozen"
	EventDeleted  = "cards.deleted"
)

// LimitTypeCreate is the limit_type of the creation limit's 429.
const LimitTypeCreate = "card_create"

// MaxName is the longest card_name and cardholder name.
const MaxName = 100

// Flex is a string that reads from JSON as a string or an integer (the
// expiry fields, CONTRACT.md) and writes as a string.
type Flex string

// UnmarshalJSON accepts "07", 7 or null.
func (f *Flex) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = Flex(s)
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return errors.New("must be a string or an integer")
	}
	*f = Flex(strconv.FormatInt(n, 10))
	return nil
}

// Cardholder is the person a card is issued to.
type Cardholder struct {
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phone_number"`
}

// Limits are the limits of a control (SPEC.md "Card"); nil is none.
type Limits struct {
	Amount                 *int64 `json:"amount,omitempty"`
	CycleTransactionCount  *int64 `json:"cycle_transaction_count,omitempty"`
	DailyAmountLimit       *int64 `json:"daily_amount_limit,omitempty"`
	DailyTransactionCount  *int64 `json:"daily_transaction_count,omitempty"`
	TransactionAmountLimit *int64 `json:"transaction_amount_limit,omitempty"`
}

// Controls are a card's individual_controls: limits, their billing cycle
// and the time zone their windows are counted in (see the package doc).
type Controls struct {
	BillingCycle           string `json:"billing_cycle,omitempty"`
	BillingCycleDay        Flex   `json:"billing_cycle_day,omitempty"`
	TimeZone               string `json:"time_zone,omitempty"`
	CycleTransactionCount  *int64 `json:"cycle_transaction_count,omitempty"`
	DailyAmountLimit       *int64 `json:"daily_amount_limit,omitempty"`
	DailyTransactionCount  *int64 `json:"daily_transaction_count,omitempty"`
	TransactionAmountLimit *int64 `json:"transaction_amount_limit,omitempty"`
}

// MCCControl is one entry of individual_mcc_controls.
type MCCControl struct {
	MCC  int   `json:"mcc"`
	Open *bool `json:"open"`
	Limits
}

// GroupControl is one entry of mcc_group_controls.
type GroupControl struct {
	GroupName string `json:"group_name"`
	Open      *bool  `json:"open"`
	Limits
}

// ControlsView is individual_controls as answered: the controls and,
// where a card is read, their usage.
type ControlsView struct {
	Controls
	*Usage
}

// MCCControlView is an individual_mcc_controls entry as answered.
type MCCControlView struct {
	MCCControl
	*Usage
}

// GroupControlView is an mcc_group_controls entry as answered.
type GroupControlView struct {
	GroupControl
	*Usage
}

// Address is a billing or shipping address.
type Address struct {
	AddressLine1 string `json:"address_line_1"`
	AddressLine2 string `json:"address_line_2"`
	City         string `json:"city"`
	State        string `json:"state"`
	PostalCode   string `json:"postal_code"`
}

// Card is an issued card as answered. Number is the full number and CVV
// the CVV only in the creation call's answer; elsewhere Number is masked
// to its last four digits and CVV is empty. (A card carries no last_four
// field: httpapi's idempotency layer takes a cvv or last_four field as the
// mark of card data and drops number from such objects, which must only
// happen to the creation answer.)
type Card struct {
	ID                    string             `json:"id"`
	Name                  string             `json:"name"`
	Status                string             `json:"status"`
	Type                  string             `json:"type"`
	Number                string             `json:"number,omitempty"`
	CVV                   string             `json:"cvv,omitempty"`
	ExpirationMonth       string             `json:"expiration_month"`
	ExpirationYear        string             `json:"expiration_year"`
	Currency              string             `json:"currency"`
	AccountID             string             `json:"account_id"`
	EntityID              string             `json:"entity_id"`
	Cardholder            Cardholder         `json:"cardholder"`
	IndividualControls    ControlsView       `json:"individual_controls"`
	IndividualMCCControls []MCCControlView   `json:"individual_mcc_controls"`
	MCCGroupControls      []GroupControlView `json:"mcc_group_controls"`
	SetAlertServiceFlag   bool               `json:"set_alert_service_flag"`
	Billing               *Address           `json:"billing"`
	Shipping              *Address           `json:"shipping"`
	Metadata              map[string]string  `json:"metadata"`
	Deleted               bool               `json:"deleted"`
	Created               int64              `json:"created"`
}

// NewCard is the body of POST /disposable-cards and POST /virtual-cards
// (the controls and set_alert_service_flag are the virtual card's only).
type NewCard struct {
	AccountID             string            `json:"account_id"`
	CardName              string            `json:"card_name"`
	Cardholder            *Cardholder       `json:"cardholder"`
	Currency              string            `json:"currency"`
	ExpirationMonth       Flex              `json:"expiration_month"`
	ExpirationYear        Flex              `json:"expiration_year"`
	IndividualControls    *Controls         `json:"individual_controls,omitempty"`
	IndividualMCCControls []MCCControl      `json:"individual_mcc_controls,omitempty"`
	MCCGroupControls      []GroupControl    `json:"mcc_group_controls,omitempty"`
	SetAlertServiceFlag   bool              `json:"set_alert_service_flag,omitempty"`
	Metadata              map[string]string `json:"metadata,omitempty"`
	EntityID              string            `json:"entity_id,omitempty"`
}

// RateLimit is the Data of ErrCreateLimit: SPEC.md's 429 fields.
type RateLimit struct {
	RetryAfter   int64  `json:"retry_after"`
	LimitType    string `json:"limit_type"`
	CurrentCount int    `json:"current_count"`
	Limit        int    `json:"limit"`
}

const (
	cardBucket storage.Bucket = "cards.cards"
	// index holds l/<entity>/<card id> (the list, without deleted cards),
	// n/<hmac of number> -> card id (uniqueness) and
	// c/<entity>/<ms>/<card id> (creations, for the hourly limit).
	index storage.Bucket = "cards.index"
)

// record is a stored card: its view without number and CVV, and those
// sealed.
type record struct {
	Card
	LastFour string `json:"last_digits"`
	Sealed   []byte `json:"sealed"`
	Updated  int64  `json:"updated"`
	// UsedUp is when a disposable card's one purchase was approved (ms);
	// such a card is blocked for good.
	UsedUp int64 `json:"used_up,omitempty"`
}

// secret is what a card seals.
type secret struct {
	Number string `json:"number"`
	CVV    string `json:"cvv"`
}

// seal seals card id's number and CVV, bound to the ID.
func (s *Service) seal(id string, sec secret) []byte {
	plain, _ := json.Marshal(sec) // two strings: cannot fail
	return s.sealer.Seal(plain, []byte("card "+id))
}

// unseal opens what seal sealed for card id.
func (s *Service) unseal(id string, sealed []byte) (secret, error) {
	var sec secret
	plain, err := s.sealer.Open(sealed, []byte("card "+id))
	if err != nil {
		return sec, err
	}
	err = json.Unmarshal(plain, &sec)
	return sec, err
}

// Owner is the entity the card's account belongs to (scope.Get).
func (r *record) Owner() string { return r.EntityID }

func getCard(tx storage.Tx, id string) (*record, error) {
	raw, err := tx.Get(cardBucket, []byte(id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrCardNotFound
	}
	if err != nil {
		return nil, err
	}
	return decodeCard(raw)
}

func decodeCard(raw []byte) (*record, error) {
	r := new(record)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, storage.ErrCorrupt
	}
	return r, nil
}

func putCard(tx storage.Tx, r *record) error {
	r.Number, r.CVV = "", ""
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Put(cardBucket, []byte(r.ID), raw)
}

func (r *record) view() *Card {
	c := r.Card
	c.Number, c.CVV = corebank.MaskTail(strings.Repeat("0", 12)+r.LastFour, 4), ""
	return &c
}

func listKey(entity, id string) []byte { return storage.Key("l", entity, id) }

func checkLimits(p corebank.Problems, prefix string, l Limits) {
	for name, v := range map[string]*int64{"amount": l.Amount, "cycle_transaction_count": l.CycleTransactionCount,
		"daily_amount_limit": l.DailyAmountLimit, "daily_transaction_count": l.DailyTransactionCount,
		"transaction_amount_limit": l.TransactionAmountLimit} {
		if v != nil && (*v < 0 || *v > ledger.MaxAmount) {
			p.Add(prefix+name, "must be between 0 and "+strconv.FormatInt(ledger.MaxAmount, 10))
		}
	}
}

// expiry checks and normalizes the expiry to "MM" and "YY": month 1-12,
// year two digits (or four, 20YY), not before now's month.
func expiry(p corebank.Problems, month, year Flex, now time.Time) (string, string) {
	m, err := strconv.Atoi(string(month))
	if month == "" {
		p.Add("expiration_month", "is required")
	} else if err != nil || m < 1 || m > 12 || len(month) > 2 {
		p.Add("expiration_month", "must be a month, 01 to 12")
	}
	y, yerr := strconv.Atoi(string(year))
	switch {
	case year == "":
		p.Add("expiration_year", "is required")
	case yerr != nil || y < 0 || (len(year) != 2 && len(year) != 4) || (len(year) == 4 && (y < 2000 || y > 2099)):
		p.Add("expiration_year", "must be two digits (YY)")
	}
	if len(p) > 0 {
		return "", ""
	}
	y %= 100
	now = now.UTC()
	if y+2000 < now.Year() || (y+2000 == now.Year() && m < int(now.Month())) {
		p.Add("expiration_year", "must not be in the past")
	} else if y+2000 > now.Year()+10 {
		p.Add("expiration_year", "must be within ten years")
	}
	return strconv.Itoa(100 + m)[1:], strconv.Itoa(100 + y)[1:]
}

func (in *NewCard) validate(typ string, now time.Time) (string, string, corebank.Problems) {
	p := corebank.Problems{}
	if in.AccountID == "" {
		p.Add("account_id", "is required")
	}
	corebank.CheckText(p, "card_name", in.CardName, corebank.Line(1, MaxName))
	if in.Currency == "" {
		p.Add("currency", "is required")
	}
	if in.Cardholder == nil {
		p.Add("cardholder", "is required")
	} else {
		h := in.Cardholder
		corebank.CheckText(p, "cardholder.first_name", h.FirstName, corebank.Line(1, MaxName))
		corebank.CheckText(p, "cardholder.last_name", h.LastName, corebank.Line(1, MaxName))
		if at := strings.LastIndexByte(h.Email, '@'); at < 1 || at == len(h.Email)-1 || len(h.Email) > 254 || strings.ContainsAny(h.Email, " \t\r\n") {
			p.Add("cardholder.email", "must be an email address")
		}
		if err := coordinates.ValidateE164(h.PhoneNumber); err != nil {
			p.Add("cardholder.phone_number", err.Error())
		}
	}
	var mm, yy string
	if typ == TypeDisposable || in.ExpirationMonth != "" || in.ExpirationYear != "" {
		mm, yy = expiry(p, in.ExpirationMonth, in.ExpirationYear, now)
	}
	if typ == TypeDisposable {
		if in.IndividualControls != nil || in.IndividualMCCControls != nil || in.MCCGroupControls != nil {
			p.Add("individual_controls", "a disposable card has no controls")
		}
	}
	if c := in.IndividualControls; c != nil {
		c.checkCycle(p)
		checkLimits(p, "individual_controls.", Limits{CycleTransactionCount: c.CycleTransactionCount, DailyAmountLimit: c.DailyAmountLimit,
			DailyTransactionCount: c.DailyTransactionCount, TransactionAmountLimit: c.TransactionAmountLimit})
	}
	for i, c := range in.IndividualMCCControls {
		pre := "individual_mcc_controls." + strconv.Itoa(i) + "."
		if c.MCC < 1 || c.MCC > 9999 {
			p.Add(pre+"mcc", "must be a 4-digit merchant category code")
		}
		checkLimits(p, pre, c.Limits)
	}
	for i, c := range in.MCCGroupControls {
		pre := "mcc_group_controls." + strconv.Itoa(i) + "."
		if _, ok := MCCGroups[c.GroupName]; !ok {
			p.Add(pre+"group_name", "must name an MCC group of version "+MCCGroupsVersion+": "+groupNames())
		}
		checkLimits(p, pre, c.Limits)
	}
	corebank.CheckMeta(p, "metadata", in.Metadata, corebank.MetaLimits{Keys: 20, KeyLen: 40, ValueLen: 500})
	return mm, yy, p
}
