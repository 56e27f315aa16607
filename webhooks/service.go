package webhooks

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// Buckets the webhooks package writes. Every name starts with "webhooks.".
const (
	bucketHooks       = storage.Bucket("webhooks.hooks")        // hook ID -> record JSON
	bucketHooksEntity = storage.Bucket("webhooks.hooks_entity") // <entity>/<hook ID> -> empty (not deleted)
	bucketTestEvents  = storage.Bucket("webhooks.events")       // test event ID -> Event JSON (others live in the outbox)
	bucketDeliveries  = storage.Bucket("webhooks.deliveries")   // delivery ID -> Delivery JSON
	bucketDlvHook     = storage.Bucket("webhooks.dlv_hook")     // <hook ID>/<delivery ID> -> empty
	bucketDlvKeys     = storage.Bucket("webhooks.dlv_keys")     // <hook ID>/<event ID> -> latest delivery ID
	bucketMeta        = storage.Bucket("webhooks.meta")         // "cursor" -> ID of the last outbox event ingested
)

// Kinds of the webhooks' work in storage's due queue (see DueJobs). Each
// item is scheduled in the transaction that makes it due.
const (
	dueExpire  = "webhooks.expire"  // webhook ID at its expires_at: it becomes inactive
	dueSweep   = "webhooks.sweep"   // one item: purge what EventRetention has passed, oldest first
	dueAttempt = "webhooks.attempt" // pending delivery ID: first attempt at 0, a retry at its time
)

// keyCursor held, in bucketMeta, the dispatcher's position in the outbox
// before the outbox indexed its unread events (migrateUnread).
var keyCursor = []byte("cursor")

// Webhook statuses.
const (
	StatusActive   = "active"
	StatusInactive = "inactive"
)

// Limits on webhook fields.
const (
	MaxURLLength         = 2048
	MaxDescriptionLength = 500
	MaxTags              = 20
	MaxTagLength         = 100
	// MaxExpiresIn is the largest expires_in accepted: 100 years in seconds.
	MaxExpiresIn = 100 * 365 * 24 * 3600
)

// Event is one outbox event as the webhooks package sees it. ID is a ULID
// minted at the event's creation; Created is Unix milliseconds.
type Event struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	EntityID string          `json:"entity_id"`
	Data     json.RawMessage `json:"data"`
	Created  int64           `json:"created"`
}

// Outbox is where events live: the ledger's outbox (LedgerOutbox), which
// events are appended to in the same transaction as the change they
// report, in the store the Service is given. The webhooks keep no copy of
// an event: the dispatcher reads new ones, ListEvents, RedeliverEvent and
// attempts read them back, and retention deletes them, each inside the
// webhooks' own transaction.
type Outbox interface {
	// EventsTx returns up to limit events after the event with ID after
	// ("" for the first), in ID order; an empty slice when there are none.
	EventsTx(tx storage.Tx, after string, limit int) ([]Event, error)
	// UnreadEventsTx returns up to limit events not yet marked read,
	// oldest ID first: every committed event is there until MarkReadTx,
	// whatever order the transactions that appended them committed in.
	UnreadEventsTx(tx storage.Tx, limit int) ([]Event, error)
	// MarkReadTx marks events read.
	MarkReadTx(tx storage.Tx, ids ...string) error
	// MarkUnreadTx marks an event unread again.
	MarkUnreadTx(tx storage.Tx, id string) error
	// OldestUnreadTx returns the ID of the oldest unread event, "" when
	// none is: every event with a smaller ID has been read.
	OldestUnreadTx(tx storage.Tx) (string, error)
	// UnreadTx reports whether the event with id is unread.
	UnreadTx(tx storage.Tx, id string) (bool, error)
	// EventTx returns the event with id; storage.ErrNotFound when there
	// is none.
	EventTx(tx storage.Tx, id string) (Event, error)
	// DeleteEventTx removes the event with id; an absent one is not an
	// error.
	DeleteEventTx(tx storage.Tx, id string) error
	// PageEventsTx reads one page of events as storage.ReadPage reads q
	// (positions are event IDs; q.Bucket is ignored), keeping those keep
	// accepts.
	PageEventsTx(tx storage.Tx, q storage.PageQuery, keep func(Event) (bool, error)) (*corebank.Page[Event], error)
}

// Sealer encrypts webhook secrets at rest; *corebank.Sealer satisfies it.
type Sealer interface {
	Seal(plaintext, associatedData []byte) []byte
	Open(sealed, associatedData []byte) ([]byte, error)
}

// Ancestry is an optional extension of scope.Tree. When Options.Tree also
// implements it, fan-out looks up the webhooks of each ancestor of an
// event's entity (one index scan per ancestor); without it, fan-out checks
// each entity that owns webhooks with InTreeTx.
type Ancestry interface {
	// AncestorsTx returns entityID's ancestors, without entityID itself;
	// nil for a root or an unknown entity.
	AncestorsTx(tx storage.Tx, entityID string) ([]string, error)
}

// AncestorsFunc adapts a function listing an entity's ancestors to
// scope.Tree and Ancestry.
type AncestorsFunc func(tx storage.Tx, entityID string) ([]string, error)

// AncestorsTx calls f.
func (f AncestorsFunc) AncestorsTx(tx storage.Tx, entityID string) ([]string, error) {
	return f(tx, entityID)
}

// InTreeTx reports whether ancestorID is id or among f's ancestors of id.
func (f AncestorsFunc) InTreeTx(tx storage.Tx, ancestorID, id string) (bool, error) {
	if id == ancestorID {
		return true, nil
	}
	anc, err := f(tx, id)
	if err != nil {
		return false, err
	}
	for _, a := range anc {
		if a == ancestorID {
			return true, nil
		}
	}
	return false, nil
}

// MaxEventScan bounds how many events ListEvents examines for one page; a
// page cut short by it has HasNext set and a Next cursor to continue from.
const MaxEventScan = 5000

// Options are the Service's optional dependencies and knobs. The zero value,
// and a nil *Options, use the documented defaults.
type Options struct {
	// Deps are the clock, IDs, tree and logger every service shares. The
	// clock is the only source of time (attempt times, backoff, expiry,
	// retention); default the real one. The tree (see also Ancestry)
	// decides both which webhooks an event fans out to and what a caller
	// may reach: with none, a webhook receives only its own entity's
	// events, ListEvents lists only the entity's own, and a caller
	// reaches only its own entity. The logger receives one line per
	// failed attempt (never secrets or bodies).
	service.Deps
	// Env is EnvSandbox or EnvProduction (the default, and anything else).
	// Production refuses destinations on loopback, private, link-local,
	// CGNAT, multicast, unspecified and metadata addresses, at registration
	// (resolving the host) and again at connect time; sandbox allows
	// loopback and private addresses so that a local receiver works.
	Env string
	// Resolver resolves destination hosts, at registration in production
	// and, for the default HTTPClient, at every connection; default
	// net.DefaultResolver.
	Resolver Resolver
	// RootCAs are the CAs trusted for deliveries when HTTPClient is nil;
	// default the system roots (see CertPoolWithPEM for -webhook-ca).
	RootCAs *x509.CertPool
	// HTTPClient sends deliveries; default NewHTTPClient(Env, RootCAs). A
	// client given here is used as a copy whose redirects are never
	// followed; its transport is the embedder's, so the connect-time
	// address check applies only if it dials through NewHTTPClient's kind
	// of dialer.
	HTTPClient *http.Client
	// Concurrency bounds attempts in flight; default 16.
	Concurrency int
	// RetryBase is the first retry delay, doubled after each failure;
	// default 10 s.
	RetryBase time.Duration
	// RetryWindow is how long after an event retries continue; default
	// 15 min.
	RetryWindow time.Duration
	// EventRetention is how long ListEvents and RedeliverEvent see an event
	// and ListDeliveries a finished delivery; default 30 days. The sweep
	// that purges them reads each one's creation time from its ID, so a new
	// value applies to everything stored from the next sweep on (a longer
	// one once the sweep queued under the old value has run).
	EventRetention time.Duration
	// PollInterval is how often Run looks for work on the real clock when
	// no Wake arrives; default 1 s.
	PollInterval time.Duration
	// Node names this Service among the nodes sharing its store (several
	// processes on one database): its runners write it into their leases
	// on due attempts; default storage.NewNodeID().
	Node string
	// Lease is how long a node keeps the attempts it takes before another
	// node may take them over; default storage.DefaultDueLease. It must
	// outlast two AttemptTimeouts: a runner takes Concurrency attempts at
	// a time, and each may wait for an attempt before it.
	Lease time.Duration
	// LeaseClock measures leases (default Clock); see storage.Due.LeaseClock.
	LeaseClock clock.Clock
	// SignClock gives an attempt's x-service-event-timestamp, and so its
	// signature: the time of sending, by default the real clock whatever
	// Clock says. A receiver checks the timestamp against its own clock,
	// as Stripe's do even under test clocks, so a bank on a fake clock
	// must not sign with it. The event's own times (created, the
	// attempts' records, the schedule of retries) stay on Clock.
	SignClock clock.Clock
	// OnAttempt, when set, is called once per delivery attempt after its
	// outcome is recorded, with OutcomeSucceeded, OutcomeFailed or
	// OutcomeStopped (metrics: examples/server counts deliveries by
	// outcome with it). It runs on the attempt's goroutine and must not
	// block.
	OnAttempt func(outcome string)
}

// Outcomes of a delivery attempt, for Options.OnAttempt.
const (
	// OutcomeSucceeded: the receiver answered 2xx.
	OutcomeSucceeded = "succeeded"
	// OutcomeFailed: sent and not acknowledged (another status, a
	// redirect, a timeout, a connection or TLS error); a retry may follow.
	OutcomeFailed = "failed"
	// OutcomeStopped: not sent, and the delivery ended (webhook deleted
	// or inactive, event no longer retained, retry window elapsed).
	OutcomeStopped = "stopped"
)

// Service manages webhooks and delivers outbox events to them. It is safe
// for concurrent use; all state lives in the storage backend, so a new
// Service over the same backend resumes where the last one stopped.
type Service struct {
	db        storage.Backend
	outbox    Outbox
	sealer    Sealer
	clock     clock.Clock
	ids       *corebank.IDs
	env       string
	tree      scope.Tree
	ancestry  Ancestry
	resolver  Resolver
	client    *http.Client
	base      time.Duration
	window    time.Duration
	retention time.Duration
	poll      time.Duration
	log       *slog.Logger
	onAttempt func(outcome string)
	node      string
	lease     time.Duration
	leaseClk  clock.Clock
	signClk   clock.Clock

	sem      chan struct{}
	wake     chan struct{}
	ingestMu sync.Mutex
	mu       sync.Mutex
	inflight map[string]bool // deliveries this Service is attempting (the store's leases keep other nodes off them)
}

// NewService returns a webhook service over db reading events from outbox
// and sealing secrets with sealer. It starts no goroutines: call Run (or
// RunDue/Drain) to deliver. It panics if outbox or sealer is nil.
func NewService(db storage.Backend, outbox Outbox, sealer Sealer, opt *Options) *Service {
	if outbox == nil || sealer == nil {
		panic("webhooks: NewService needs an outbox and a sealer")
	}
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Deps = o.Deps.WithDefaults(nil)
	if o.Env != EnvSandbox {
		o.Env = EnvProduction
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.HTTPClient == nil {
		o.HTTPClient = newHTTPClient(o.Env, o.RootCAs, o.Resolver)
	} else {
		c := *o.HTTPClient
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		if c.Timeout == 0 || c.Timeout > AttemptTimeout {
			c.Timeout = AttemptTimeout
		}
		o.HTTPClient = &c
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 10 * time.Second
	}
	if o.RetryWindow <= 0 {
		o.RetryWindow = 15 * time.Minute
	}
	if o.EventRetention <= 0 {
		o.EventRetention = 30 * 24 * time.Hour
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Node == "" {
		o.Node = storage.NewNodeID()
	}
	if o.Lease <= 0 {
		o.Lease = storage.DefaultDueLease
	}
	if o.LeaseClock == nil {
		o.LeaseClock = o.Clock
	}
	if o.SignClock == nil {
		o.SignClock = clock.New()
	}
	ancestry, _ := o.Tree.(Ancestry)
	return &Service{
		db:        db,
		outbox:    outbox,
		sealer:    sealer,
		clock:     o.Clock,
		ids:       o.IDs,
		env:       o.Env,
		tree:      o.Tree,
		ancestry:  ancestry,
		resolver:  o.Resolver,
		client:    o.HTTPClient,
		base:      o.RetryBase,
		window:    o.RetryWindow,
		retention: o.EventRetention,
		poll:      o.PollInterval,
		log:       o.Logger,
		onAttempt: o.OnAttempt,
		node:      o.Node,
		lease:     o.Lease,
		leaseClk:  o.LeaseClock,
		signClk:   o.SignClock,
		sem:       make(chan struct{}, o.Concurrency),
		wake:      make(chan struct{}, 1),
		inflight:  map[string]bool{},
	}
}

// Webhook is a subscription: SPEC's Webhook object.
type Webhook struct {
	ID            string        `json:"id"`
	EntityID      string        `json:"entity_id"`
	URL           string        `json:"url"`
	ExpiresIn     int64         `json:"expires_in"`
	EnabledEvents EnabledEvents `json:"enabled_events"`
	// PreferredEvents is derived from EnabledEvents; see Preferred.
	PreferredEvents []string `json:"preferred_events"`
	// Secret is set only in the results of CreateWebhook and
	// RotateWebhookSecret.
	Secret      string   `json:"secret,omitempty"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	// Status is StatusActive or StatusInactive; it reads inactive once
	// created + expires_in has passed on the clock.
	Status  string `json:"status"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
	// Deleted is when the webhook was deleted (ms), 0 when it is not.
	Deleted int64 `json:"deleted"`
	Stats   Stats `json:"stats"`
}

// Stats counts delivery attempts. Every attempt counts once in
// TotalWebhooksSent and once in either TotalWebhooksSuccessful (a 2xx) or
// TotalWebhooksFailed. LastWebhookEvent is the time (ms) of the latest
// attempt, 0 when none.
type Stats struct {
	TotalWebhooksSent       int64 `json:"total_webhooks_sent"`
	TotalWebhooksSuccessful int64 `json:"total_webhooks_successful"`
	TotalWebhooksFailed     int64 `json:"total_webhooks_failed"`
	LastWebhookEvent        int64 `json:"last_webhook_event"`
}

// record is a stored webhook: the API object (without Secret) plus what is
// never shown. Its shallower Enabled and Preferred fields shadow the
// embedded Webhook's in JSON, so enabled_events is stored as a short list
// of names, cheap to decode on every attempt, and preferred_events not at
// all.
type record struct {
	Webhook
	Enabled      []string `json:"enabled_events"`
	Preferred    []string `json:"preferred_events,omitempty"`
	SealedSecret []byte   `json:"sealed_secret"`
	ExpiresAt    int64    `json:"expires_at"` // ms: Created + ExpiresIn*1000
}

// Owner is the entity the webhook belongs to (scope.Get).
func (r *record) Owner() string { return r.EntityID }

func putRecord(tx storage.Tx, r *record) error {
	r.Enabled = r.EnabledEvents.names()
	r.Preferred, r.PreferredEvents, r.Secret = nil, nil, ""
	return storage.PutJSON(tx, bucketHooks, []byte(r.ID), r)
}

// active reports whether the webhook receives deliveries at now (ms).
func (r *record) active(now int64) bool {
	return r.Deleted == 0 && r.Status == StatusActive && now < r.ExpiresAt
}

// view returns the API form at now.
func (r *record) view(now int64) *Webhook {
	w := r.Webhook
	w.Secret = ""
	if w.Status == StatusActive && now >= r.ExpiresAt {
		w.Status = StatusInactive
	}
	if w.Deleted != 0 {
		w.Status = StatusInactive
	}
	w.PreferredEvents = w.EnabledEvents.Preferred()
	if w.Tags == nil {
		w.Tags = []string{}
	}
	w.Tags = append([]string{}, w.Tags...)
	return &w
}

// NewWebhook is the input of CreateWebhook (the body of POST
// /entity-webhooks).
type NewWebhook struct {
	// EntityID owns the webhook: the caller's entity or one below it; ""
	// means the caller's own (System must name one).
	EntityID string `json:"entity_id"`
	// URL is required and must start with https://.
	URL string `json:"url"`
	// ExpiresIn is required: a positive number of seconds after creation.
	ExpiresIn *int64 `json:"expires_in"`
	// EnabledEvents is required and must enable at least one event.
	EnabledEvents *EnabledEvents `json:"enabled_events"`
	Description   string         `json:"description"`
	Tags          []string       `json:"tags"`
}

// WebhookPatch is the input of UpdateWebhook; nil fields are left
// unchanged.
type WebhookPatch struct {
	URL           *string        `json:"url"`
	Description   *string        `json:"description"`
	Tags          *[]string      `json:"tags"`
	EnabledEvents *EnabledEvents `json:"enabled_events"`
	// ExpiresIn, when set, still counts from the webhook's creation.
	ExpiresIn *int64 `json:"expires_in"`
	// Status is StatusActive or StatusInactive. Activating an expired
	// webhook needs an ExpiresIn that reaches past now.
	Status *string `json:"status"`
}

// checkURL validates a destination for env and adds a problem for field.
func (s *Service) checkURL(ctx context.Context, p corebank.Problems, field, raw string) {
	if raw == "" {
		p.Add(field, "is required")
		return
	}
	if problem := corebank.TextProblem(raw, false); problem != "" {
		p.Add(field, problem)
		return
	}
	if !strings.HasPrefix(raw, "https://") {
		p.Add(field, "must start with https://")
		return
	}
	if len(raw) > MaxURLLength {
		p.Add(field, fmt.Sprintf("must be at most %d characters", MaxURLLength))
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		p.Add(field, "must be a valid https URL with a host")
		return
	}
	if u.User != nil {
		p.Add(field, "must not contain credentials")
		return
	}
	if u.Fragment != "" {
		p.Add(field, "must not contain a fragment")
		return
	}
	host := u.Hostname()
	if err := checkHostName(s.env, host); err != nil {
		p.Add(field, "destination is not allowed: "+policyReason(err))
		return
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := CheckAddr(s.env, ip); err != nil {
			p.Add(field, "destination is not allowed: "+policyReason(err))
		}
		return
	}
	if s.env == EnvSandbox {
		return // resolved, and checked, at connect time only
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := s.resolver.LookupNetIP(rctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		p.Add(field, "host cannot be resolved")
		return
	}
	for _, a := range addrs {
		if err := CheckAddr(s.env, a); err != nil {
			p.Add(field, "destination is not allowed: "+policyReason(err))
			return
		}
	}
}

func policyReason(err error) string {
	msg := err.Error()
	return strings.TrimPrefix(strings.TrimPrefix(msg, errForbiddenAddress.Error()), ": ")
}

func checkExpiresIn(p corebank.Problems, v *int64, required bool) {
	switch {
	case v == nil:
		if required {
			p.Add("expires_in", "is required")
		}
	case *v <= 0:
		p.Add("expires_in", "must be a positive number of seconds")
	case *v > MaxExpiresIn:
		p.Add("expires_in", fmt.Sprintf("must be at most %d seconds", MaxExpiresIn))
	}
}

func checkText(p corebank.Problems, desc string, tags []string) {
	corebank.CheckText(p, "description", desc, corebank.FreeText(0, MaxDescriptionLength))
	if len(tags) > MaxTags {
		p.Add("tags", fmt.Sprintf("must have at most %d tags", MaxTags))
	}
	for i, t := range tags {
		f := fmt.Sprintf("tags.%d", i)
		if t == "" {
			p.Add(f, fmt.Sprintf("must be 1-%d characters", MaxTagLength))
			continue
		}
		corebank.CheckText(p, f, t, corebank.Line(1, MaxTagLength))
	}
}

// newSecret returns "whsec_" and 32 random bytes in unpadded base64url.
func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (Go 1.24+)
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b)
}

func secretAD(hookID string) []byte { return []byte("webhooks.secret/" + hookID) }

// CreateWebhook registers a webhook for in.EntityID ("" is the caller's
// entity) and returns it with its secret, the only time the secret is shown.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an entity outside the caller's tree or
// unknown; a validation error naming each bad field (url, expires_in,
// enabled_events.<group>.<key>, description, tags.N; entity_id when System
// names none).
func (s *Service) CreateWebhook(ctx context.Context, caller corebank.Caller, in NewWebhook) (*Webhook, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	p := corebank.Problems{}
	s.checkURL(ctx, p, "url", in.URL)
	checkExpiresIn(p, in.ExpiresIn, true)
	if in.EnabledEvents == nil {
		p.Add("enabled_events", "is required")
	} else {
		in.EnabledEvents.validate(p, "enabled_events")
	}
	checkText(p, in.Description, in.Tags)
	now := s.clock.Now()
	ms := corebank.Millis(now)
	secret := newSecret()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Webhook, error) {
		// The entity is checked before the fields, so that a foreign
		// entity_id answers not found whatever the body holds.
		entity, err := scope.Entity(tx, s.tree, caller, in.EntityID)
		if err != nil {
			return nil, err
		}
		if err := p.Err(); err != nil {
			return nil, err
		}
		id := s.ids.New(now) // only a webhook that is created takes an ID
		rec := &record{
			Webhook: Webhook{
				ID: id, EntityID: entity, URL: in.URL, ExpiresIn: *in.ExpiresIn,
				EnabledEvents: in.EnabledEvents.normalized(), Description: in.Description,
				Tags: append([]string{}, in.Tags...), Status: StatusActive, Created: ms, Updated: ms,
			},
			SealedSecret: s.sealer.Seal([]byte(secret), secretAD(id)),
			ExpiresAt:    ms + *in.ExpiresIn*1000,
		}
		if err := putRecord(tx, rec); err != nil {
			return nil, err
		}
		if err := tx.Put(bucketHooksEntity, storage.Key(entity, id), nil); err != nil {
			return nil, err
		}
		w := rec.view(ms)
		w.Secret = secret
		return w, storage.Schedule(tx, dueExpire, rec.ExpiresAt, id)
	})
}

func getRecord(tx storage.Tx, id string) (*record, error) {
	r, err := storage.LoadJSON[record](tx, bucketHooks, []byte(id), ErrWebhookNotFound)
	if err != nil {
		return nil, err
	}
	r.EnabledEvents = enabledFromNames(r.Enabled)
	return r, nil
}

// GetWebhook returns the webhook with id, deleted ones included
// (Deleted != 0). entityID, when set, is an entity in the caller's tree
// that the webhook must lie under.
//
// Errors: corebank.ErrEntityNotFound for an entityID outside the caller's
// tree or unknown, whatever id is; ErrWebhookNotFound for a webhook that
// is missing or outside the caller's (or entityID's) tree.
func (s *Service) GetWebhook(ctx context.Context, caller corebank.Caller, entityID, id string) (*Webhook, error) {
	now := corebank.Millis(s.clock.Now())
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Webhook, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getRecord, ErrWebhookNotFound)
		if err != nil {
			return nil, err
		}
		return r.view(now), nil
	})
}

// WebhookFilter narrows ListWebhooks to the webhooks of entity EntityID
// ("" is the caller's entity).
type WebhookFilter struct {
	EntityID string
}

// ListWebhooks returns one page of the webhooks of f.EntityID that are
// not deleted, oldest first; cursors are webhook IDs.
//
// Errors: corebank.ErrEntityNotFound for an entity outside the caller's
// tree or unknown; a validation error for a bad limit or cursor
// (corebank.ErrCursor).
func (s *Service) ListWebhooks(ctx context.Context, caller corebank.Caller, f WebhookFilter, opts corebank.ListOptions) (*corebank.Page[Webhook], error) {
	now := corebank.Millis(s.clock.Now())
	return storage.View(ctx, s.db, func(tx storage.Tx) (*corebank.Page[Webhook], error) {
		entity, err := scope.Entity(tx, s.tree, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		limit, err := storage.CheckList(opts, corebank.DefaultLimit)
		if err != nil {
			return nil, err
		}
		q := storage.PageQuery{Bucket: bucketHooksEntity, Prefix: storage.Prefix(entity), Opts: opts, Limit: limit}
		return storage.ReadPage(tx, q, func(id string, _ []byte) (Webhook, bool, error) {
			r, err := getRecord(tx, id)
			if err != nil {
				return Webhook{}, false, err
			}
			return *r.view(now), true, nil
		})
	})
}

// UpdateWebhook changes the fields set in in and returns the webhook;
// entityID is as for GetWebhook. Deliveries already created keep going to
// the webhook's current URL and secret at each attempt.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound and ErrWebhookNotFound as for GetWebhook; then
// a validation error naming each bad field; ErrWebhookDeleted.
func (s *Service) UpdateWebhook(ctx context.Context, caller corebank.Caller, entityID, id string, in WebhookPatch) (*Webhook, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	p := corebank.Problems{}
	if in.URL != nil {
		s.checkURL(ctx, p, "url", *in.URL)
	}
	checkExpiresIn(p, in.ExpiresIn, false)
	if in.EnabledEvents != nil {
		in.EnabledEvents.validate(p, "enabled_events")
	}
	if in.Status != nil && *in.Status != StatusActive && *in.Status != StatusInactive {
		p.Add("status", "must be active or inactive")
	}
	var desc string
	var tags []string
	if in.Description != nil {
		desc = *in.Description
	}
	if in.Tags != nil {
		tags = *in.Tags
	}
	checkText(p, desc, tags)
	now := corebank.Millis(s.clock.Now())
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Webhook, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getRecord, ErrWebhookNotFound)
		if err != nil {
			return nil, err
		}
		if err := p.Err(); err != nil {
			return nil, err
		}
		if r.Deleted != 0 {
			return nil, ErrWebhookDeleted
		}
		wasActive := r.Status == StatusActive
		oldExpiry := r.ExpiresAt
		if in.URL != nil {
			r.URL = *in.URL
		}
		if in.Description != nil {
			r.Description = *in.Description
		}
		if in.Tags != nil {
			r.Tags = append([]string{}, tags...)
		}
		if in.EnabledEvents != nil {
			r.EnabledEvents = in.EnabledEvents.normalized()
		}
		if in.ExpiresIn != nil {
			r.ExpiresIn = *in.ExpiresIn
			r.ExpiresAt = r.Created + *in.ExpiresIn*1000
		}
		if in.Status != nil {
			r.Status = *in.Status
		}
		if r.Status == StatusActive && now >= r.ExpiresAt {
			if in.Status != nil && *in.Status == StatusActive {
				return nil, corebank.InvalidField("status", "the webhook has expired; set an expires_in that reaches past now to activate it")
			}
			r.Status = StatusInactive
		}
		if wasActive {
			if err := storage.Unschedule(tx, dueExpire, oldExpiry, id); err != nil {
				return nil, err
			}
		}
		if r.Status == StatusActive {
			if err := storage.Schedule(tx, dueExpire, r.ExpiresAt, id); err != nil {
				return nil, err
			}
		}
		r.Updated = now
		return r.view(now), putRecord(tx, r)
	})
}

// DeleteWebhook soft-deletes the webhook (Deleted is set, status inactive)
// and returns it; no further attempt is made for it, pending ones included.
// Deleting a deleted webhook returns it unchanged. entityID is as for
// GetWebhook.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound and ErrWebhookNotFound as for GetWebhook.
func (s *Service) DeleteWebhook(ctx context.Context, caller corebank.Caller, entityID, id string) (*Webhook, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := corebank.Millis(s.clock.Now())
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Webhook, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getRecord, ErrWebhookNotFound)
		if err != nil {
			return nil, err
		}
		if r.Deleted == 0 {
			if r.Status == StatusActive {
				if err := storage.Unschedule(tx, dueExpire, r.ExpiresAt, id); err != nil {
					return nil, err
				}
			}
			if err := tx.Delete(bucketHooksEntity, storage.Key(r.EntityID, id)); err != nil {
				return nil, err
			}
			r.Deleted, r.Updated, r.Status = now, now, StatusInactive
			if err := putRecord(tx, r); err != nil {
				return nil, err
			}
		}
		return r.view(now), nil
	})
}

// RotateWebhookSecret replaces the webhook's secret and returns the webhook
// with the new one, shown this once; every later attempt, retries of earlier
// events included, is signed with it, and the old one verifies nothing more.
// entityID is as for GetWebhook.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound and ErrWebhookNotFound as for GetWebhook;
// ErrWebhookDeleted.
func (s *Service) RotateWebhookSecret(ctx context.Context, caller corebank.Caller, entityID, id string) (*Webhook, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := corebank.Millis(s.clock.Now())
	secret := newSecret()
	sealed := s.sealer.Seal([]byte(secret), secretAD(id))
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Webhook, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getRecord, ErrWebhookNotFound)
		if err != nil {
			return nil, err
		}
		if r.Deleted != 0 {
			return nil, ErrWebhookDeleted
		}
		r.SealedSecret, r.Updated = sealed, now
		w := r.view(now)
		w.Secret = secret
		return w, putRecord(tx, r)
	})
}
