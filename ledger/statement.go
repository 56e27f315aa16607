package ledger

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// StatementQuery selects a statement: one calendar month (UTC) of an
// account, one page of its transactions.
type StatementQuery struct {
	Year  int
	Month int
	// IncludePending adds the account's holds that are still pending and
	// were placed in the month, with a null running_balance.
	IncludePending bool
	// EntityID, when set, narrows the caller to that entity's tree.
	EntityID string
	// ListOptions pages the transactions; After and Before take the
	// statement's next_cursor and previous_cursor.
	corebank.ListOptions
}

// Statement is the statement body of CONTRACT.md.
type Statement struct {
	AccountID   string `json:"account_id"`
	AccountName string `json:"account_name"`
	Currency    string `json:"currency"`
	ServiceBAN  string `json:"service_ban"`
	// HolderAddress is left nil by the ledger (it knows no addresses); the
	// caller fills it from the owning entity, EntityID.
	HolderAddress any `json:"holder_address"`
	// EntityID is the account's owner; it is not part of the body.
	EntityID string `json:"-"`
	// GeneratedAt is the clock's time, RFC 3339 (ISO 8601) in UTC.
	GeneratedAt  string                 `json:"generated_at"`
	Period       StatementPeriod        `json:"period"`
	Summary      StatementSummary       `json:"summary"`
	Transactions []StatementTransaction `json:"transactions"`
	Pagination   StatementPagination    `json:"pagination"`
}

// StatementPeriod is the month covered, as ISO 8601 dates (first and last
// day, inclusive, UTC).
type StatementPeriod struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// StatementSummary totals the month's settled transactions (pending holds
// never count): opening and closing settled balances and the sums of
// settled credits and debits, so opening + credits - debits = closing.
type StatementSummary struct {
	OpeningBalance int64 `json:"opening_balance"`
	ClosingBalance int64 `json:"closing_balance"`
	TotalCredits   int64 `json:"total_credits"`
	TotalDebits    int64 `json:"total_debits"`
}

// Statement transaction statuses.
const (
	StatusCompleted = "completed"
	StatusPending   = "pending"
)

// StatementTransaction is one line of a statement: a settled change
// (status completed, with the settled balance after it) or a pending hold
// (status pending, RunningBalance nil).
type StatementTransaction struct {
	// ID is the journal entry ID or the hold ID.
	ID      string `json:"id"`
	Created int64  `json:"created"`
	// Type is credit or debit.
	Type           string `json:"type"`
	Amount         int64  `json:"amount"`
	RunningBalance *int64 `json:"running_balance"`
	Status         string `json:"status"`
	Narration      string `json:"narration"`
	Reference      string `json:"reference"`
}

// StatementPagination pages a statement's transactions.
type StatementPagination struct {
	Limit          int     `json:"limit"`
	HasNext        bool    `json:"has_next"`
	HasPrevious    bool    `json:"has_previous"`
	NextCursor     *string `json:"next_cursor"`
	PreviousCursor *string `json:"previous_cursor"`
}

// stmtPos is a position in the merged order of a statement: by time, then
// settled before pending, then seq or hold ID.
type stmtPos struct {
	ms     int64
	stream byte
	seq    uint64
	holdID string
}

func (p stmtPos) cursor() string {
	b := []byte{p.stream}
	b = binary.BigEndian.AppendUint64(b, uint64(p.ms))
	if p.stream == histSettled {
		b = binary.BigEndian.AppendUint64(b, p.seq)
	} else {
		b = append(b, p.holdID...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseStmtCursor(c string) (stmtPos, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 9 {
		return stmtPos{}, false
	}
	p := stmtPos{stream: b[0], ms: int64(binary.BigEndian.Uint64(b[1:9]))}
	switch {
	case p.stream == histSettled && len(b) == 17:
		p.seq = binary.BigEndian.Uint64(b[9:])
	case p.stream == histPending && len(b) > 9 && validID(string(b[9:])):
		p.holdID = string(b[9:])
	default:
		return stmtPos{}, false
	}
	return p, p.ms >= 0
}

func (p stmtPos) less(o stmtPos) bool {
	if p.ms != o.ms {
		return p.ms < o.ms
	}
	if p.stream != o.stream {
		return p.stream == histSettled
	}
	if p.stream == histSettled {
		return p.seq < o.seq
	}
	return p.holdID < o.holdID
}

type stmtItem struct {
	pos stmtPos
	tx  StatementTransaction
}

// Statement returns one page of the monthly statement of account
// accountID, when caller may see the account (narrowed to q.EntityID when
// set, as in GetAccount). Opening and closing balances and totals cost two
// seeks (each settled history line carries the running balance and
// cumulative totals), and a page costs one seek plus the page, wherever it
// lies in the account's history.
//
// Errors: a validation error on year, month, limit or cursor;
// corebank.ErrEntityNotFound for an unknown or foreign q.EntityID;
// ErrAccountNotFound (also for an account outside the caller's tree).
func (s *Service) Statement(ctx context.Context, caller corebank.Caller, accountID string, q StatementQuery) (*Statement, error) {
	p := corebank.Problems{}
	if q.Year < 1970 || q.Year > 9999 {
		p.Add("year", "must be between 1970 and 9999")
	}
	if q.Month < 1 || q.Month > 12 {
		p.Add("month", "must be between 1 and 12")
	}
	limit, err := q.CheckLimit(corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	var cur *stmtPos
	for _, c := range []string{q.After, q.Before} {
		if c == "" {
			continue
		}
		pos, ok := parseStmtCursor(c)
		if !ok || (pos.stream == histPending && !q.IncludePending) {
			p.Add("cursor", "is malformed")
		}
		cur = &pos
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	start := time.Date(q.Year, time.Month(q.Month), 1, 0, 0, 0, 0, time.UTC)
	endT := start.AddDate(0, 1, 0)
	startMs, endMs := start.UnixMilli(), endT.UnixMilli()-1 // inclusive bounds

	return storage.View(ctx, s.db, func(tx storage.Tx) (*Statement, error) {
		a, err := scope.Get(tx, s.tree, caller, q.EntityID, accountID, s.getAccountTx, accountNotFound(accountID))
		if err != nil {
			return nil, err
		}
		st := &Statement{
			AccountID:    a.ID,
			EntityID:     a.EntityID,
			AccountName:  a.DisplayName,
			Currency:     a.Currency,
			ServiceBAN:   a.ServiceBAN,
			GeneratedAt:  s.clock.Now().UTC().Format(time.RFC3339),
			Period:       StatementPeriod{Start: start.Format(time.DateOnly), End: endT.AddDate(0, 0, -1).Format(time.DateOnly)},
			Transactions: []StatementTransaction{},
			Pagination:   StatementPagination{Limit: limit},
		}
		open, err := lastLineBefore(tx, accountID, histSettled, uint64(startMs))
		if err != nil {
			return nil, err
		}
		closing, err := lastLineBefore(tx, accountID, histSettled, uint64(endMs)+1)
		if err != nil {
			return nil, err
		}
		if open != nil {
			st.Summary.OpeningBalance = open.Balance.Settled
			st.Summary.TotalCredits, st.Summary.TotalDebits = -open.Credits, -open.Debits
		}
		if closing != nil {
			st.Summary.ClosingBalance = closing.Balance.Settled
			st.Summary.TotalCredits += closing.Credits
			st.Summary.TotalDebits += closing.Debits
		} else {
			st.Summary = StatementSummary{}
		}

		sc := stmtScan{tx: tx, account: accountID, startMs: startMs, endMs: endMs, pending: q.IncludePending}
		var items []stmtItem
		var hasNext, hasPrev bool
		if q.Before != "" {
			items, err = sc.scan(cur, true, limit+1)
			if err != nil {
				return nil, err
			}
			if len(items) > limit {
				hasPrev = true
				items = items[:limit]
			}
			slices.Reverse(items)
			from := cur
			if len(items) > 0 {
				from = &items[len(items)-1].pos
			}
			more, err := sc.scan(from, false, 1)
			if err != nil {
				return nil, err
			}
			hasNext = len(more) > 0
		} else {
			items, err = sc.scan(cur, false, limit+1)
			if err != nil {
				return nil, err
			}
			if len(items) > limit {
				hasNext = true
				items = items[:limit]
			}
			if cur != nil {
				from := cur
				if len(items) > 0 {
					from = &items[0].pos
				}
				more, err := sc.scan(from, true, 1)
				if err != nil {
					return nil, err
				}
				hasPrev = len(more) > 0
			}
		}
		for _, it := range items {
			st.Transactions = append(st.Transactions, it.tx)
		}
		if len(items) > 0 {
			if hasNext {
				c := items[len(items)-1].pos.cursor()
				st.Pagination.NextCursor = &c
			}
			if hasPrev {
				c := items[0].pos.cursor()
				st.Pagination.PreviousCursor = &c
			}
		}
		st.Pagination.HasNext, st.Pagination.HasPrevious = hasNext, hasPrev
		return st, nil
	})
}

type stmtScan struct {
	tx             storage.Tx
	account        string
	startMs, endMs int64
	pending        bool
}

// scan returns up to n items strictly after from (before it when reverse;
// from nil means the period's edge) in merged order, within the period.
func (sc *stmtScan) scan(from *stmtPos, reverse bool, n int) ([]stmtItem, error) {
	items, err := sc.scanSettled(from, reverse, n)
	if err != nil {
		return nil, err
	}
	if sc.pending {
		more, err := sc.scanPending(from, reverse, n)
		if err != nil {
			return nil, err
		}
		items = append(items, more...)
		slices.SortFunc(items, func(a, b stmtItem) int {
			switch {
			case a.pos.less(b.pos):
				return -1
			case b.pos.less(a.pos):
				return 1
			}
			return 0
		})
		if reverse {
			slices.Reverse(items)
		}
		if len(items) > n {
			items = items[:n]
		}
	}
	return items, nil
}

func (sc *stmtScan) edge(reverse bool) int64 {
	if reverse {
		return sc.endMs + 1
	}
	return sc.startMs
}

func (sc *stmtScan) scanSettled(from *stmtPos, reverse bool, n int) ([]stmtItem, error) {
	prefix := histPrefix(sc.account, histSettled)
	after := bytes.Clone(prefix)
	switch {
	case from == nil:
		after = storage.AppendInt64(after, sc.edge(reverse))
	case from.stream == histSettled:
		after = storage.AppendUint64(storage.AppendInt64(after, from.ms), from.seq)
	default: // pending at ms: every settled line at ms sorts before it
		after = storage.AppendUint64(storage.AppendInt64(after, from.ms), math.MaxUint64)
		if !reverse {
			after = append(after, 0)
		}
	}
	var out []stmtItem
	err := sc.tx.Scan(bucketHistory, storage.ScanOptions{Prefix: prefix, After: after, Reverse: reverse, Limit: n}, func(k, v []byte) error {
		if len(k) != len(prefix)+16 {
			return storage.ErrCorrupt
		}
		ms := int64(binary.BigEndian.Uint64(k[len(prefix):]))
		if ms > sc.endMs || ms < sc.startMs {
			return storage.ErrStop
		}
		l, err := decodeLine(v)
		if err != nil {
			return err
		}
		t := StatementTransaction{ID: l.TxID, Created: l.Created, Type: string(Credit), Amount: l.SettledDelta,
			Status: StatusCompleted, Narration: l.Narration, Reference: l.Reference}
		if l.SettledDelta < 0 {
			t.Type, t.Amount = string(Debit), -l.SettledDelta
		}
		bal := l.Balance.Settled
		t.RunningBalance = &bal
		out = append(out, stmtItem{pos: stmtPos{ms: ms, stream: histSettled, seq: l.Seq}, tx: t})
		return nil
	})
	return out, err
}

func (sc *stmtScan) scanPending(from *stmtPos, reverse bool, n int) ([]stmtItem, error) {
	prefix := append([]byte(sc.account), '/')
	after := bytes.Clone(prefix)
	switch {
	case from == nil:
		after = storage.AppendInt64(after, sc.edge(reverse))
	case from.stream == histSettled: // settled at ms: pending at ms sort after it
		after = storage.AppendInt64(after, from.ms)
	default:
		after = append(storage.AppendInt64(after, from.ms), from.holdID...)
	}
	var out []stmtItem
	err := sc.tx.Scan(bucketPending, storage.ScanOptions{Prefix: prefix, After: after, Reverse: reverse, Limit: n}, func(k, v []byte) error {
		if len(k) < len(prefix)+8 {
			return storage.ErrCorrupt
		}
		ms := int64(binary.BigEndian.Uint64(k[len(prefix):]))
		if ms > sc.endMs || ms < sc.startMs {
			return storage.ErrStop
		}
		t, err := decodePendingValue(v)
		if err != nil {
			return err
		}
		t.ID, t.Created = string(k[len(prefix)+8:]), ms
		out = append(out, stmtItem{pos: stmtPos{ms: ms, stream: histPending, holdID: t.ID}, tx: t})
		return nil
	})
	return out, err
}
