package entities

import (
	"context"
	"errors"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// Review decisions.
const (
	DecisionApproved  = StatusApproved
	DecisionRejected  = StatusRejected
	DecisionSuspended = StatusSuspended
)

// reviewMoves lists, per status, the decisions Review accepts. The sandbox
// may decide on an entity that was never submitted (a back-office
// decision); an approved entity can be suspended; a suspended one can be
// reinstated or rejected; a rejected one must be resubmitted first.
var reviewMoves = map[string][]string{
	StatusIncomplete: {StatusApproved, StatusRejected, StatusSuspended},
	StatusPending:    {StatusApproved, StatusRejected, StatusSuspended},
	StatusApproved:   {StatusSuspended},
	StatusSuspended:  {StatusApproved, StatusRejected},
	StatusRejected:   nil,
}

// reviewed is what Review's transaction decided.
type reviewed struct {
	Entity *Entity
	From   string
}

// ReviewEntity records a review decision ("approved", "rejected" or
// "suspended") on the entity with id, which the caller must be able to act
// on, and writes entities.updated. The person, identification and the
// entity's latest submission take the same status. Deciding the status the
// entity already has changes nothing and returns it. Scope is checked
// before the decision, so an entity outside the tree answers
// ErrEntityNotFound whatever the decision. Errors: corebank.ErrForbidden
// for a read-only caller; ErrEntityNotFound; a validation error naming
// "decision" for any other value; ErrInvalidTransition for a move the
// current status does not allow (see the package docs).
func (s *Service) ReviewEntity(ctx context.Context, caller corebank.Caller, id, decision string) (*Entity, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	res, err := storage.Update(ctx, s.db, func(tx storage.Tx) (reviewed, error) {
		if err := scope.Check(tx, s, caller, id, ErrEntityNotFound); err != nil {
			return reviewed{}, err
		}
		switch decision {
		case DecisionApproved, DecisionRejected, DecisionSuspended:
		case "":
			return reviewed{}, corebank.InvalidField("decision", "is required: approved, rejected or suspended")
		default:
			return reviewed{}, corebank.InvalidField("decision", "must be one of approved, rejected, suspended")
		}
		e, from, err := s.reviewTx(tx, now, id, decision)
		return reviewed{e, from}, err
	})
	if err != nil {
		return nil, err
	}
	if res.From != decision {
		s.log.Info("entity reviewed", "entity_id", id, "from", res.From, "to", decision)
	}
	return res.Entity, nil
}

func (s *Service) reviewTx(tx storage.Tx, now time.Time, id, decision string) (*Entity, string, error) {
	rec, err := getEntity(tx, id)
	if err != nil {
		return nil, "", err
	}
	from := rec.Status
	if from == decision {
		return &rec.Entity, from, nil
	}
	allowed := false
	for _, d := range reviewMoves[from] {
		allowed = allowed || d == decision
	}
	if !allowed {
		return nil, from, ErrInvalidTransition.With("an entity that is " + from + " cannot become " + decision)
	}
	ms := corebank.Millis(now)
	rec.Status, rec.Updated = decision, ms
	prof, err := getProfile(tx, id)
	if err != nil {
		return nil, from, err
	}
	setVerification(prof, decision, ms)
	if err := putEntity(tx, rec, false); err != nil {
		return nil, from, err
	}
	if err := storage.PutJSON(tx, bucketEntities, profileKey(id), prof); err != nil {
		return nil, from, err
	}
	if err := setSubmissionStatus(tx, id, decision, ms); err != nil {
		return nil, from, err
	}
	if err := setDocumentsStatus(tx, id, decision, ms); err != nil {
		return nil, from, err
	}
	if err := s.event(tx, now, EventUpdated, composite(rec, prof)); err != nil {
		return nil, from, err
	}
	return &rec.Entity, from, nil
}

// setVerification gives the person, identification and officers the
// review's status.
func setVerification(p *profileRecord, status string, ms int64) {
	if p.Person != nil {
		p.Person.Status, p.Person.Updated = status, ms
	}
	setIdent(p.Ident, status, ms)
	for i := range p.Officers {
		if p.Officers[i].Person != nil {
			p.Officers[i].Person.Status, p.Officers[i].Person.Updated = status, ms
		}
		setIdent(p.Officers[i].Ident, status, ms)
	}
}

func setIdent(id *identRecord, status string, ms int64) {
	if id == nil {
		return
	}
	id.VerificationStatus, id.Updated = status, ms
	if id.Document != nil {
		id.Document.VerificationStatus = status
	}
	if id.ProofOfAddress != nil {
		id.ProofOfAddress.VerificationStatus = status
	}
	for i := range id.IdentityNumbers {
		id.IdentityNumbers[i].VerificationStatus = status
	}
}

// Gate is the ledger.EntityGate over a store's entities. It needs no
// Service, so a ledger.Service can be built with it before the entities
// Service that takes the ledger: ledger.Options{Gate: entities.Gate{}}.
type Gate struct{}

// CanOpenAccount returns nil when the entity exists and is approved,
// ErrEntityNotFound when it does not exist, ErrEntitySuspended when it is
// suspended and ErrEntityNotApproved otherwise.
func (Gate) CanOpenAccount(tx storage.Tx, entityID string) error {
	return approved(tx, entityID)
}

// GateRefs is the key CanMoveMoney reads first (ledger.GateReads).
func (Gate) GateRefs(entityID string) []storage.Ref {
	return []storage.Ref{{Bucket: bucketEntities, Key: gateKey(entityID)}}
}

// CanMoveMoney returns nil when the entity exists and is approved,
// ErrEntityNotFound when it does not exist, ErrEntitySuspended when it is
// suspended (it can still read) and ErrEntityNotApproved otherwise.
func (Gate) CanMoveMoney(tx storage.Tx, entityID string) error {
	return approved(tx, entityID)
}

func approved(tx storage.Tx, entityID string) error {
	rec, err := getGate(tx, entityID)
	if err != nil {
		return err
	}
	switch rec.status {
	case StatusApproved:
		return nil
	case StatusSuspended:
		return ErrEntitySuspended
	}
	return ErrEntityNotApproved.With("the entity is " + rec.status + "; it must be approved first")
}

// InTreeTx reports whether id is ancestorID or one of its descendants
// (scope.Tree); an unknown id lies in no tree.
func (Gate) InTreeTx(tx storage.Tx, ancestorID, id string) (bool, error) {
	return inTree(tx, ancestorID, id)
}

// AncestorsTx returns id's ancestors from its gate record (webhooks
// Ancestry), nil for a root or an unknown entity. Without it the webhooks'
// fan-out found an event's ancestors by walking every entity that owns a
// webhook and asking InTreeTx of each: a whole-bucket scan per event,
// which on PostgreSQL locks the bucket of webhook owners exclusively, so
// every node's ingest and every webhook created waited for each other.
func (Gate) AncestorsTx(tx storage.Tx, id string) ([]string, error) {
	rec, err := getGate(tx, id)
	if errors.Is(err, ErrEntityNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return rec.ancestorIDs()
}

// CanOpenAccount is Gate.CanOpenAccount.
func (s *Service) CanOpenAccount(tx storage.Tx, entityID string) error {
	return Gate{}.CanOpenAccount(tx, entityID)
}

// CanMoveMoney is Gate.CanMoveMoney.
func (s *Service) CanMoveMoney(tx storage.Tx, entityID string) error {
	return Gate{}.CanMoveMoney(tx, entityID)
}

// EntityProfileTx returns entity id's type and status (capital.Directory:
// product eligibility and inactive owners); an unknown id is
// ErrEntityNotFound.
func (Gate) EntityProfileTx(tx storage.Tx, id string) (typ, status string, err error) {
	rec, err := getEntity(tx, id)
	if err != nil {
		return "", "", err
	}
	return rec.Type, rec.Status, nil
}
