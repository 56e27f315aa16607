package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// An integrity check reads a whole store in one View and reports what
// breaks the rules the services keep: each domain package has a VerifyStore
// that checks its own records, indexes and due work, since it alone knows
// their layout, and bank/verify runs them all over one snapshot. This file
// is what they share: the Finding they report, the Verifier that gathers
// findings and counts, and the checks every domain makes alike (an index
// against its records, the due queue against the objects it names).

// Kinds of Finding the shared checks report. Domain packages add their
// own (a ledger entry that does not balance, a hold no object owns); every
// kind is a stable snake_case word an operator can grep for.
const (
	// FindCorrupt: a stored value does not decode.
	FindCorrupt = "record_corrupt"
	// FindIndexMissing: a record lacks an index key it must have.
	FindIndexMissing = "index_missing"
	// FindIndexDangling: an index key names a record that does not exist.
	FindIndexDangling = "index_dangling"
	// FindIndexStale: an index key names a record that exists but should
	// not be under that key (an old status, another owner), or holds the
	// wrong value.
	FindIndexStale = "index_stale"
	// FindCountMismatch: a counter kept beside an index differs from the
	// number of keys it counts.
	FindCountMismatch = "count_mismatch"
	// FindDueOrphan: a due item names an object that is gone, or no longer
	// in a state that needs the work.
	FindDueOrphan = "due_orphan"
	// FindDueMissing: an object waits for due work that is not queued.
	FindDueMissing = "due_missing"
	// FindDueUnknown: a due item of a kind no service runs.
	FindDueUnknown = "due_unknown_kind"
	// FindUnclaimed: an object that another must own (a pending hold: its
	// card authorization, transfer, inflow...) is owned by none.
	FindUnclaimed = "unclaimed"
)

// Finding is one broken rule.
type Finding struct {
	// Kind is the rule's class (FindIndexMissing, "entry_unbalanced", ...).
	Kind string
	// IDs are the objects involved, the one at fault first.
	IDs []string
	// Detail says what differs, in one sentence.
	Detail string
}

// String is the finding as one line: kind, IDs, then what differs.
func (f Finding) String() string {
	s := f.Kind
	if len(f.IDs) > 0 {
		s += " " + strings.Join(f.IDs, " ")
	}
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return s
}

// Verifier gathers what the domains' VerifyStore functions find while they read
// one snapshot: findings, handed to the report function as they come,
// counts of what was checked, objects one domain expects another to claim,
// and the kinds of due work that some domain checked. A Verifier is used
// by one goroutine.
type Verifier struct {
	report   func(Finding)
	findings int
	counts   map[string]int
	expected map[string]map[string]string // set -> id -> what it is
	dueKinds map[string]bool
}

// NewVerifier returns a Verifier that passes each finding to report.
func NewVerifier(report func(Finding)) *Verifier {
	return &Verifier{report: report, counts: map[string]int{}, expected: map[string]map[string]string{}, dueKinds: map[string]bool{}}
}

// Report records a finding of kind about ids.
func (v *Verifier) Report(kind string, ids []string, format string, args ...any) {
	v.findings++
	v.report(Finding{Kind: kind, IDs: ids, Detail: fmt.Sprintf(format, args...)})
}

// Findings is how many findings were reported.
func (v *Verifier) Findings() int { return v.findings }

// Count adds n to the count of what ("accounts", "entries"), for the
// summary.
func (v *Verifier) Count(what string, n int) { v.counts[what] += n }

// Counted returns the count of what.
func (v *Verifier) Counted(what string) int { return v.counts[what] }

// Expect records that object id of set (a pending hold) must be claimed by
// some domain before Unclaimed runs; what describes it in the finding.
func (v *Verifier) Expect(set, id, what string) {
	m := v.expected[set]
	if m == nil {
		m = map[string]string{}
		v.expected[set] = m
	}
	m[id] = what
}

// Claim marks object id of set as owned. Claiming an object nobody
// expected is no error: the claimant checks that it exists.
func (v *Verifier) Claim(set, id string) { delete(v.expected[set], id) }

// Unclaimed reports each object of set expected and never claimed, in ID
// order, as FindUnclaimed, and forgets them.
func (v *Verifier) Unclaimed(set, owners string) {
	m := v.expected[set]
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		v.Report(FindUnclaimed, []string{id}, "%s is owned by no %s", m[id], owners)
	}
	delete(v.expected, set)
}

// VerifyDue checks every queued item of kind: live returns "" when the
// item's ID names an object that needs the work at that time, else what
// is wrong (reported as FindDueOrphan). It records kind as checked (see
// VerifyDueKinds), which counts every item under "due items".
func VerifyDue(tx Tx, v *Verifier, kind string, live func(id string, at int64) (string, error)) error {
	v.dueKinds[kind] = true
	prefix := append([]byte(kind), '/')
	return tx.Scan(BucketDue, ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
		at, id, ok := parseDueKey(k[len(prefix):])
		if !ok {
			v.Report(FindCorrupt, []string{string(k)}, "due item key of kind %s is malformed", kind)
			return nil
		}
		problem, err := live(id, at)
		if err != nil {
			return err
		}
		if problem != "" {
			v.Report(FindDueOrphan, []string{id}, "%s item due at %d: %s", kind, at, problem)
		}
		return nil
	})
}

// IsDue reports whether item id of kind is queued at at.
func IsDue(tx Tx, kind string, at int64, id string) (bool, error) {
	return Exists(tx, BucketDue, dueKey(kind, at, id))
}

// VerifyDueKinds counts every queued item and reports, as FindDueUnknown,
// those of a kind no VerifyDue checked: work no service would ever run.
// It runs after every domain's VerifyStore. Leases (BucketDueLease) on items
// no longer queued are reported as FindDueOrphan.
func VerifyDueKinds(tx Tx, v *Verifier) error {
	err := tx.Scan(BucketDue, ScanOptions{}, func(k, _ []byte) error {
		v.Count("due items", 1)
		kind, rest, ok := bytes.Cut(k, []byte{'/'})
		if !ok {
			v.Report(FindCorrupt, []string{string(k)}, "due item key has no kind")
			return nil
		}
		if !v.dueKinds[string(kind)] {
			_, id, _ := parseDueKey(rest)
			v.Report(FindDueUnknown, []string{id}, "due item of kind %q, which no service runs", kind)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tx.Scan(BucketDueLease, ScanOptions{}, func(k, _ []byte) error {
		if ok, err := Exists(tx, BucketDue, k); err != nil || ok {
			return err
		}
		kind, rest, _ := bytes.Cut(k, []byte{'/'})
		_, id, _ := parseDueKey(rest)
		v.Report(FindDueOrphan, []string{id}, "a lease on a %s item that is not queued", kind)
		return nil
	})
}

// parseDueKey splits what follows a due key's kind and '/': the time and
// the ID.
func parseDueKey(b []byte) (at int64, id string, ok bool) {
	if len(b) <= 8 {
		return 0, "", false
	}
	u, _ := Uint64(b)
	return int64(u), string(b[8:]), true
}

// KV is one key and value a record's write puts, as Writes records it.
type KV struct {
	Bucket Bucket
	Key    []byte
	Value  []byte
}

// Writes runs write against a Tx that reads from tx and records, instead
// of storing, what write puts, and returns the puts in order. A domain's
// VerifyStore passes the very function that writes a record's indexes, so what
// the check expects is what the service writes, from one definition.
// Deletes drop a recorded put of the same key.
func Writes(tx Tx, write func(Tx) error) ([]KV, error) {
	r := &recorder{Tx: tx}
	err := write(r)
	return r.puts, err
}

type recorder struct {
	Tx
	puts []KV
}

func (r *recorder) find(b Bucket, key []byte) int {
	for i := len(r.puts) - 1; i >= 0; i-- {
		if r.puts[i].Bucket == b && bytes.Equal(r.puts[i].Key, key) {
			return i
		}
	}
	return -1
}

func (r *recorder) Get(b Bucket, key []byte) ([]byte, error) {
	if i := r.find(b, key); i >= 0 {
		return bytes.Clone(r.puts[i].Value), nil
	}
	return r.Tx.Get(b, key)
}

func (r *recorder) Put(b Bucket, key, value []byte) error {
	if i := r.find(b, key); i >= 0 {
		r.puts = append(r.puts[:i], r.puts[i+1:]...)
	}
	r.puts = append(r.puts, KV{Bucket: b, Key: bytes.Clone(key), Value: bytes.Clone(value)})
	return nil
}

func (r *recorder) Delete(b Bucket, key []byte) error {
	if i := r.find(b, key); i >= 0 {
		r.puts = append(r.puts[:i], r.puts[i+1:]...)
	}
	return nil
}

// IndexRange is one range of index keys: the keys of Bucket under Prefix.
type IndexRange struct {
	Bucket Bucket
	Prefix []byte
	// ID returns the ID of the record key k (value v) names, or "" when k
	// is malformed.
	ID func(k, v []byte) string
	// Loose, when set, checks only that the record named exists: its keys
	// in the range cannot be computed from it (a hash under a secret the
	// check does not have), so none is expected and none is stale.
	Loose bool
	// Optional, when set, lets a record lack its key in the range (a
	// record written before the key existed) but not hold a wrong one.
	Optional bool
}

// LastPart is an IndexRange.ID for keys ending in '/' and the ID.
func LastPart(k, _ []byte) string {
	i := bytes.LastIndexByte(k, '/')
	if i < 0 || i == len(k)-1 {
		return ""
	}
	return string(k[i+1:])
}

// ValueID is an IndexRange.ID for keys whose value is the ID.
func ValueID(_, v []byte) string { return string(v) }

// Indexed describes the records of one kind and their secondary indexes,
// for VerifyIndexed.
type Indexed[R any] struct {
	// Kind names the records in findings ("transfer").
	Kind string
	// Records calls fn with every record, streamed from a scan.
	Records func(tx Tx, fn func(id string, r R) error) error
	// Load returns the record id, or an error wrapping ErrNotFound when it
	// does not exist.
	Load func(tx Tx, id string) (R, error)
	// Keys returns what r's write puts (Writes is the usual way); only the
	// keys inside Ranges are checked, each with its value unless the value
	// is nil.
	Keys func(tx Tx, r R) ([]KV, error)
	// Ranges are the index keys the records own.
	Ranges []IndexRange
}

// VerifyIndexed checks the indexes of ix both ways: every key a record
// must have is stored with its value (else FindIndexMissing or
// FindIndexStale), and every key stored in a range names a record that
// exists (else FindIndexDangling) and must have that key (else
// FindIndexStale). A record that does not decode is reported as
// FindCorrupt. It reads each record once per direction and each index
// key once, holding one record at a time.
func VerifyIndexed[R any](tx Tx, v *Verifier, ix Indexed[R]) error {
	inRange := func(kv KV) *IndexRange {
		// The range the key lies in, nil when none or a loose one.
		for i := range ix.Ranges {
			r := &ix.Ranges[i]
			if r.Bucket == kv.Bucket && bytes.HasPrefix(kv.Key, r.Prefix) && !r.Loose {
				return r
			}
		}
		return nil
	}
	err := ix.Records(tx, func(id string, r R) error {
		kvs, err := ix.Keys(tx, r)
		if err != nil {
			return fmt.Errorf("%s %s: %w", ix.Kind, id, err)
		}
		for _, kv := range kvs {
			rg := inRange(kv)
			if rg == nil {
				continue
			}
			got, err := tx.Get(kv.Bucket, kv.Key)
			switch {
			case errors.Is(err, ErrNotFound) && rg.Optional:
			case errors.Is(err, ErrNotFound):
				v.Report(FindIndexMissing, []string{id}, "%s has no key %q in %s", ix.Kind, kv.Key, kv.Bucket)
			case err != nil:
				return err
			case kv.Value != nil && !bytes.Equal(got, kv.Value):
				v.Report(FindIndexStale, []string{id}, "%s's key %q in %s holds %q, want %q", ix.Kind, kv.Key, kv.Bucket, got, kv.Value)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, rg := range ix.Ranges {
		// The record read last, and its keys: an object's keys in one
		// range are often next to each other.
		const (
			found = iota
			absent
			corrupt // reported by the forward pass
		)
		var lastID string
		var lastKeys map[string]bool
		state := found
		err := tx.Scan(rg.Bucket, ScanOptions{Prefix: rg.Prefix}, func(k, val []byte) error {
			id := rg.ID(k, val)
			if id == "" {
				v.Report(FindCorrupt, []string{string(k)}, "%s index key in %s names no %s", ix.Kind, rg.Bucket, ix.Kind)
				return nil
			}
			if id != lastID || lastKeys == nil {
				lastID, lastKeys, state = id, map[string]bool{}, found
				r, err := ix.Load(tx, id)
				switch {
				case errors.Is(err, ErrNotFound):
					state = absent
				case errors.Is(err, ErrCorrupt):
					state = corrupt
				case err != nil:
					return err
				default:
					kvs, err := ix.Keys(tx, r)
					if err != nil {
						return fmt.Errorf("%s %s: %w", ix.Kind, id, err)
					}
					for _, kv := range kvs {
						if kv.Bucket == rg.Bucket {
							lastKeys[string(kv.Key)] = true
						}
					}
				}
			}
			switch {
			case state == absent:
				v.Report(FindIndexDangling, []string{id}, "key %q in %s names %s %s, which does not exist", k, rg.Bucket, ix.Kind, id)
			case state == found && !rg.Loose && !lastKeys[string(k)]:
				v.Report(FindIndexStale, []string{id}, "key %q in %s names %s %s, which should not be under it", k, rg.Bucket, ix.Kind, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ScanJSON is an Indexed.Records for JSON records keyed by their ID in
// bucket b under prefix (which the ID follows, with no '/' after it: keys
// deeper under prefix are indexes beside the records, and skipped): it
// decodes each into a new T and reports those that do not decode as
// FindCorrupt.
func ScanJSON[T any](b Bucket, prefix []byte, v *Verifier, kind string) func(tx Tx, fn func(id string, r *T) error) error {
	return func(tx Tx, fn func(id string, r *T) error) error {
		return tx.Scan(b, ScanOptions{Prefix: prefix}, func(k, raw []byte) error {
			if bytes.IndexByte(k[len(prefix):], '/') >= 0 {
				return nil // an index beside the records, not a record
			}
			id := string(k[len(prefix):])
			r, err := decodeJSON[T](raw)
			if err != nil {
				v.Report(FindCorrupt, []string{id}, "%s in %s does not decode: %v", kind, b, err)
				return nil
			}
			return fn(id, r)
		})
	}
}

func decodeJSON[T any](raw []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	return v, nil
}

// Found adapts a getter whose absence is the error notFound to
// Indexed.Load, whose absence is ErrNotFound.
func Found[R any](get func(Tx, string) (R, error), notFound error) func(Tx, string) (R, error) {
	return func(tx Tx, id string) (R, error) {
		r, err := get(tx, id)
		if errors.Is(err, notFound) {
			return r, ErrNotFound
		}
		return r, err
	}
}
