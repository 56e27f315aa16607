package entities

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// Environments decide the API key prefix.
const (
	EnvSandbox    = "sandbox"
	EnvProduction = "production"
)

// Options are the Service's knobs; the zero value and nil mean the
// documented defaults.
type Options struct {
	// Deps are the clock, IDs and logger every service shares; the clock
	// defaults to the wall clock, and the logger receives one line per
	// entity change, carrying IDs only. Tree is not read: the Service is
	// the tree.
	service.Deps
	// Env is EnvSandbox (the default; keys start "sk_sandbox_") or
	// EnvProduction (keys start "sk_live_").
	Env string
	// GenerateKey makes each API key's RSA key pair; the default is a
	// 2048-bit key from crypto/rand. Tests inject cached keys.
	GenerateKey func() (*rsa.PrivateKey, error)
	// Reviewer is told of every onboarding submission; the default is a
	// SandboxReviewer that leaves the decision to Review.
	Reviewer Reviewer
	// RootName is the bootstrap root entity's name; default "Root".
	RootName string
	// KeyNamespace, when set (letters and digits), goes between the
	// environment prefix and every key's secret: "sk_sandbox_" +
	// KeyNamespace + "_" + secret. A server holding several banks (sandbox
	// workspaces) gives each its own, and routes a key to its bank by the
	// prefix alone, in one lookup, before any bank reads it.
	KeyNamespace string
}

// Service manages entities, their onboarding data and documents, and API
// keys. It implements ledger.EntityGate. It is safe for concurrent use.
type Service struct {
	db       storage.Backend
	led      *ledger.Service
	sealer   *corebank.Sealer
	clock    clock.Clock
	ids      *corebank.IDs
	env      string
	genKey   func() (*rsa.PrivateKey, error)
	reviewer Reviewer
	rootName string
	keyNS    string
	log      *slog.Logger
}

var (
	_ ledger.EntityGate = (*Service)(nil)
	_ scope.Tree        = (*Service)(nil)
	_ scope.Tree        = Gate{}
)

// NewService returns a Service over db. led receives entities.created and
// entities.updated events in the same transaction as each change; a nil led
// writes no events. sealer protects RSA private keys and identity and
// document numbers at rest and is required. opt may be nil; a
// KeyNamespace of other than letters and digits panics.
func NewService(db storage.Backend, led *ledger.Service, sealer *corebank.Sealer, opt *Options) *Service {
	if opt == nil {
		opt = &Options{}
	}
	d := opt.Deps.WithDefaults(nil)
	s := &Service{db: db, led: led, sealer: sealer, clock: d.Clock, ids: d.IDs, env: opt.Env,
		genKey: opt.GenerateKey, reviewer: opt.Reviewer, rootName: opt.RootName, keyNS: opt.KeyNamespace, log: d.Logger}
	for _, r := range s.keyNS {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			// A configuration mistake of the embedder's, never input.
			panic(fmt.Sprintf("entities: KeyNamespace %q: letters and digits only", s.keyNS))
		}
	}
	if s.env == "" {
		s.env = EnvSandbox
	}
	if s.genKey == nil {
		s.genKey = func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) }
	}
	if s.reviewer == nil {
		s.reviewer = SandboxReviewer{}
	}
	if s.rootName == "" {
		s.rootName = "Root"
	}
	return s
}

func (s *Service) event(tx storage.Tx, now time.Time, typ string, c *Composite) error {
	if s.led == nil {
		return nil
	}
	_, err := s.led.AppendEventTx(tx, now, typ, c.Entity.ID, c)
	return err
}

// Event types this package writes.
const (
	EventCreated = "entities.created"
	EventUpdated = "entities.updated"
)

// BootstrapResult is what Bootstrap returns once, when it creates the root.
// The secrets cannot be recovered later.
type BootstrapResult struct {
	EntityID            string `json:"entity_id"`
	APIKey              string `json:"api_key"`
	ReadOnlyAPIKey      string `json:"read_only_api_key"`
	EncryptionPublicKey string `json:"encryption_public_key"`
}

// Bootstrap creates the root business entity (approved, is_root) with a
// full-access and a read-only API key when the store has no root, and
// returns them with created true. When a root exists it returns nil, false:
// keys are stored hashed and cannot be shown again.
func (s *Service) Bootstrap(ctx context.Context) (*BootstrapResult, bool, error) {
	exists, err := storage.View(ctx, s.db, func(tx storage.Tx) (bool, error) {
		return storage.Exists(tx, bucketEntities, keyRoot)
	})
	if err != nil || exists {
		return nil, false, err
	}
	now := s.clock.Now()
	ms := corebank.Millis(now)
	id := s.ids.New(now)
	full, fullSecret, err := s.prepareKey(now, id, false)
	if err != nil {
		return nil, false, err
	}
	ro, roSecret, err := s.prepareKey(now, id, true)
	if err != nil {
		return nil, false, err
	}
	businessID := s.ids.New(now)
	rec := &entityRecord{Entity: Entity{
		ID: id, Type: TypeBusiness, Status: StatusApproved, Name: s.rootName, IsRoot: true,
		BusinessID: OptionalID(businessID), CreationContext: ContextAPI, RiskLevel: RiskMedium,
		Meta: Meta{}, Created: ms, Updated: ms,
	}}
	prof := &profileRecord{
		Business: &Business{ID: businessID, LegalName: s.rootName, Created: ms, Updated: ms},
		BusinessMeta: &BusinessMeta{ID: s.ids.New(now), BusinessID: businessID,
			Meta: BusinessMetaValues{Strings: Meta{}}, Created: ms, Updated: ms},
	}
	created, err := storage.Update(ctx, s.db, func(tx storage.Tx) (bool, error) {
		if ok, err := storage.Exists(tx, bucketEntities, keyRoot); err != nil || ok {
			return false, err
		}
		if err := tx.Put(bucketEntities, keyRoot, []byte(id)); err != nil {
			return false, err
		}
		if err := s.insertEntity(tx, now, rec, prof); err != nil {
			return false, err
		}
		if err := putKey(tx, full, true); err != nil {
			return false, err
		}
		return true, putKey(tx, ro, true)
	})
	if err != nil || !created {
		return nil, false, err
	}
	s.log.Info("bootstrap root entity created", "entity_id", id, "api_key_id", full.ID, "read_only_api_key_id", ro.ID)
	return &BootstrapResult{EntityID: id, APIKey: fullSecret, ReadOnlyAPIKey: roSecret,
		EncryptionPublicKey: full.PublicKeyPEM}, true, nil
}

// insertEntity writes a new entity, its profile and indexes, and its
// entities.created event.
func (s *Service) insertEntity(tx storage.Tx, now time.Time, rec *entityRecord, prof *profileRecord) error {
	if err := putEntity(tx, rec, true); err != nil {
		return err
	}
	if err := storage.PutJSON(tx, bucketEntities, profileKey(rec.ID), prof); err != nil {
		return err
	}
	return s.event(tx, now, EventCreated, composite(rec, prof))
}

// GetEntity returns the entity with id for caller. entityID, when not "",
// is the request's entity_id: it must lie in the caller's tree and the
// entity in its tree. Errors: ErrEntityNotFound for an unknown entity, one
// outside the tree and a foreign entityID alike.
func (s *Service) GetEntity(ctx context.Context, caller corebank.Caller, entityID, id string) (*Entity, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Entity, error) {
		rec, err := scope.Get(tx, s, caller, entityID, id, getEntity, ErrEntityNotFound)
		if err != nil {
			return nil, err
		}
		return &rec.Entity, nil
	})
}

// GetComposite returns the entity with id and everything attached to it,
// numbers masked, scoped as GetEntity. Errors: ErrEntityNotFound.
func (s *Service) GetComposite(ctx context.Context, caller corebank.Caller, entityID, id string) (*Composite, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Composite, error) {
		rec, err := scope.Get(tx, s, caller, entityID, id, getEntity, ErrEntityNotFound)
		if err != nil {
			return nil, err
		}
		prof, err := getProfile(tx, id)
		if err != nil {
			return nil, err
		}
		return composite(rec, prof), nil
	})
}

// InTree reports whether id is ancestorID or one of its descendants. An
// unknown id is not in any tree. Services decide scope with InTreeTx
// (scope.Tree) inside their own transactions; InTree serves callers that
// have no transaction.
func (s *Service) InTree(ctx context.Context, ancestorID, id string) (bool, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (bool, error) {
		return s.InTreeTx(tx, ancestorID, id)
	})
}

// InTreeTx is InTree inside tx; Service implements scope.Tree with it. It
// costs one read: each entity stores its ancestry.
func (s *Service) InTreeTx(tx storage.Tx, ancestorID, id string) (bool, error) {
	return inTree(tx, ancestorID, id)
}

func inTree(tx storage.Tx, ancestorID, id string) (bool, error) {
	if ancestorID == "" || id == "" {
		return false, nil
	}
	rec, err := getGate(tx, id)
	if errors.Is(err, ErrEntityNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if id == ancestorID {
		return true, nil
	}
	return rec.hasAncestor(ancestorID)
}
