package funding

import (
	"errors"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// A settled inflow (Settle true) is stored once: as the journal entry that
// credited it, not also as a funding.inflows record saying the same
// account, amount, currency, narration, reference and time. The entry
// takes the inflow's ID, and its meta holds only what the entry does not
// say: the source (metaSource), the account details it arrived through
// (metaDetails, when any), and the narration when the inflow had none
// (metaNarration = "", the entry's being defaultNarration). The inflow's
// entity is its account's; it was created, updated and completed at the
// entry's time; it never had a settles_at. That cut one key and about 140
// bytes per inflow and per book transfer (BenchmarkFootprint in httpapi).
//
// Inflows settled later (Settle false) keep their record: it carries the
// hold and settles_at while pending, and settlement rewrites it completed.
// Records that earlier releases stored completed, with their entry under
// another ID, read as they are: GetInflow looks at the record first.

// Meta keys of an inflow's entry.
const (
	metaSource    = "source"
	metaDetails   = "account_details_id"
	metaNarration = "narration"
)

// defaultNarration is the narration of an inflow's entry or hold when the
// inflow has none.
const defaultNarration = "inflow"

// entryMeta is the meta of in's entry.
func entryMeta(in *Inflow) map[string]string {
	m := map[string]string{metaSource: in.Source}
	if in.AccountDetailsID != nil {
		m[metaDetails] = *in.AccountDetailsID
	}
	if in.Narration == "" {
		m[metaNarration] = ""
	}
	return m
}

// fromEntry rebuilds the settled inflow id from its entry, or answers
// ErrInflowNotFound when id names no entry or one that is not an inflow's:
// two lines, from the clearing account of its source to a customer
// account.
func (s *Service) fromEntry(tx storage.Tx, id string) (*Inflow, error) {
	j, err := s.led.GetEntryTx(tx, id)
	if errors.Is(err, ledger.ErrEntryNotFound) {
		return nil, ErrInflowNotFound
	}
	if err != nil {
		return nil, err
	}
	source, ok := j.Meta[metaSource]
	if !ok || len(j.Lines) != 2 {
		return nil, ErrInflowNotFound
	}
	from, to := j.Lines[0], j.Lines[1]
	if from.Side != ledger.Debit || to.Side != ledger.Credit || ledger.IsSystemAccount(to.AccountID) ||
		from.AccountID != s.led.SystemAccount(to.Currency, clearingPurpose(source)) {
		return nil, ErrInflowNotFound
	}
	acct, err := s.led.GetAccountTx(tx, to.AccountID)
	if err != nil {
		return nil, err
	}
	in := &Inflow{
		ID:          j.ID,
		Type:        "inflow",
		AccountID:   to.AccountID,
		EntityID:    acct.EntityID,
		Amount:      to.Amount,
		Currency:    to.Currency,
		Narration:   j.Narration,
		Reference:   j.Reference,
		Source:      source,
		Status:      StatusCompleted,
		CompletedAt: &j.Created,
		Created:     j.Created,
		Updated:     j.Created,
	}
	if d, ok := j.Meta[metaDetails]; ok {
		in.AccountDetailsID = &d
	}
	if n, ok := j.Meta[metaNarration]; ok {
		in.Narration = n
	}
	return in, nil
}
