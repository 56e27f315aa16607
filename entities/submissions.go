package entities

import (
	"context"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// Requirement statuses.
const (
	RequirementSatisfied = "satisfied"
	RequirementMissing   = "missing"
)

// Requirement is one condition of onboarding submission. Name is the
// field path a failed Submit reports it under: "documents.identity",
// "documents.proof_of_address", "documents.certificate_of_incorporation",
// "business.legal_name", "business.type", "business.email",
// "business.registration_number", "business.incorporation_meta.country",
// "address" and "business_officers" (a control person).
type Requirement struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Description says what satisfies the requirement.
	Description string `json:"description"`
}

// Submission is one submission of an entity for review. Status is
// "pending" until Review decides, then the decision.
type Submission struct {
	ID           string        `json:"id"`
	EntityID     string        `json:"entity_id"`
	Status       string        `json:"status"`
	SubmittedAt  int64         `json:"submitted_at"`
	Requirements []Requirement `json:"requirements"`
	Updated      int64         `json:"updated"`
}

// Reviewer is the KYC/KYB provider an entity is handed to on submission.
// RequestReview is called after the submission commits, with the composite
// as the API shows it (numbers masked). It returns a decision to apply at
// once ("approved", "rejected" or "suspended"), or "" when the decision
// comes later through Service.Review (the provider's callback, or the
// sandbox route). An error is logged; the submission stays pending.
type Reviewer interface {
	RequestReview(ctx context.Context, sub Submission, c *Composite) (decision string, err error)
}

// SandboxReviewer is the default Reviewer. With Decision "" every
// submission waits for POST /sandbox/entities/{id}/review; otherwise it is
// decided at once.
type SandboxReviewer struct {
	Decision string
}

// RequestReview returns r.Decision.
func (r SandboxReviewer) RequestReview(context.Context, Submission, *Composite) (string, error) {
	return r.Decision, nil
}

func req(name string, ok bool, desc string) Requirement {
	st := RequirementMissing
	if ok {
		st = RequirementSatisfied
	}
	return Requirement{Name: name, Status: st, Description: desc}
}

// requirements evaluates the submission rules: an individual needs an
// identity and a proof_of_address document; a business needs its details
// (legal name, type, email, registration number, country of incorporation,
// registered address), at least one control person and a
// certificate_of_incorporation document.
func requirements(tx storage.Tx, ent *entityRecord, p *profileRecord) ([]Requirement, error) {
	docs, err := documentKeys(tx, ent.ID)
	if err != nil {
		return nil, err
	}
	if ent.Type == TypeIndividual {
		return []Requirement{
			req("documents.identity", docs[DocIdentity], "an identity document is uploaded"),
			req("documents.proof_of_address", docs[DocProofOfAddress], "a proof_of_address document is uploaded"),
		}, nil
	}
	b := p.Business
	if b == nil {
		b = &Business{}
	}
	inc := b.IncorporationMeta
	if inc == nil {
		inc = &IncorporationMeta{}
	}
	control := false
	for _, o := range p.Officers {
		control = control || o.IsControlPerson
	}
	return []Requirement{
		req("business.legal_name", b.LegalName != "", "the business's legal name is given"),
		req("business.type", b.Type != "", "the business type is given"),
		req("business.email", b.Email != "", "the business's email is given"),
		req("business.registration_number", b.RegistrationNumber != "", "the registration number is given"),
		req("business.incorporation_meta.country", inc.Country != "", "the country of incorporation is given"),
		req("address", p.Address != nil, "the registered address is given"),
		req("business_officers", control, "at least one officer is a control person"),
		req("documents.certificate_of_incorporation", docs[DocCertificateOfIncorporation], "a certificate_of_incorporation document is uploaded"),
	}, nil
}

func subKey(id string) []byte { return storage.Key("submissions", id) }

func subEntityPrefix(entity string) []byte { return storage.Prefix("submissions", "by-entity", entity) }

// submitted is what Submit's transaction hands to the reviewer.
type submitted struct {
	Sub  *Submission
	Comp *Composite
}

// SubmitEntity submits entityID (the caller's own entity when "") for review: the
// caller must be able to act on it, and it must be incomplete or rejected
// and meet every requirement (see Requirement). The entity becomes pending
// and the Reviewer is asked. Errors: corebank.ErrForbidden for a read-only
// caller; ErrEntityNotFound for an entity outside the tree; a validation
// error whose Fields name every missing requirement (or "entity_id" when a
// System caller names none); ErrInvalidTransition when the entity is
// pending, approved or suspended.
func (s *Service) SubmitEntity(ctx context.Context, caller corebank.Caller, entityID string) (*Submission, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	ms := corebank.Millis(now)
	id := s.ids.New(now)
	res, err := storage.Update(ctx, s.db, func(tx storage.Tx) (submitted, error) {
		entityID, err := scope.Entity(tx, s, caller, entityID)
		if err != nil {
			return submitted{}, err
		}
		ent, err := getEntity(tx, entityID)
		if err != nil {
			return submitted{}, err
		}
		if ent.Status != StatusIncomplete && ent.Status != StatusRejected {
			return submitted{}, ErrInvalidTransition.With("an entity that is " + ent.Status + " cannot be submitted")
		}
		prof, err := getProfile(tx, entityID)
		if err != nil {
			return submitted{}, err
		}
		reqs, err := requirements(tx, ent, prof)
		if err != nil {
			return submitted{}, err
		}
		p := corebank.Problems{}
		for _, r := range reqs {
			if r.Status != RequirementSatisfied {
				p.Add(r.Name, "required before submission: "+r.Description)
			}
		}
		if err := p.Err(); err != nil {
			return submitted{}, err
		}
		ent.Status, ent.Updated = StatusPending, ms
		setVerification(prof, VerificationPending, ms)
		sub := &Submission{ID: id, EntityID: entityID, Status: StatusPending, SubmittedAt: ms,
			Requirements: reqs, Updated: ms}
		if err := putEntity(tx, ent, false); err != nil {
			return submitted{}, err
		}
		if err := storage.PutJSON(tx, bucketEntities, profileKey(entityID), prof); err != nil {
			return submitted{}, err
		}
		if err := storage.PutJSON(tx, bucketSubmissions, subKey(id), sub); err != nil {
			return submitted{}, err
		}
		if err := tx.Put(bucketSubmissions, append(subEntityPrefix(entityID), id...), []byte(id)); err != nil {
			return submitted{}, err
		}
		comp := composite(ent, prof)
		return submitted{sub, comp}, s.event(tx, now, EventUpdated, comp)
	})
	if err != nil {
		return nil, err
	}
	sub := res.Sub
	s.log.Info("entity submitted for review", "entity_id", sub.EntityID, "submission_id", id)
	decision, err := s.reviewer.RequestReview(ctx, *sub, res.Comp)
	if err != nil {
		s.log.Error("reviewer failed; the submission stays pending", "entity_id", sub.EntityID, "submission_id", id, "error", err)
		return sub, nil
	}
	if decision != "" {
		// The provider decides, not the caller: it may review any entity.
		if _, err := s.ReviewEntity(ctx, corebank.System(), sub.EntityID, decision); err != nil {
			return nil, err
		}
		sub.Status, sub.Updated = decision, corebank.Millis(s.clock.Now())
	}
	return sub, nil
}

// GetSubmission returns the submission with id when its entity lies in the
// caller's tree (and in entityID's, the request's entity_id, when not "").
// Errors: ErrEntityNotFound for an entityID outside the tree, whether the
// submission exists or not; ErrSubmissionNotFound for a missing submission
// and for one outside the tree alike.
func (s *Service) GetSubmission(ctx context.Context, caller corebank.Caller, entityID, id string) (*Submission, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Submission, error) {
		return scope.Get(tx, s, caller, entityID, id, getSubmission, ErrSubmissionNotFound)
	})
}

func getSubmission(tx storage.Tx, id string) (*Submission, error) {
	return storage.LoadJSON[Submission](tx, bucketSubmissions, subKey(id), ErrSubmissionNotFound)
}

// Owner returns the entity submitted (scope.Owned).
func (s *Submission) Owner() string { return s.EntityID }

// setSubmissionStatus gives the entity's latest pending submission a
// review's status.
func setSubmissionStatus(tx storage.Tx, entityID, status string, ms int64) error {
	var id string
	err := tx.Scan(bucketSubmissions, storage.ScanOptions{Prefix: subEntityPrefix(entityID), Reverse: true, Limit: 1},
		func(_, v []byte) error {
			id = string(v)
			return nil
		})
	if err != nil || id == "" {
		return err
	}
	sub, err := storage.LoadJSON[Submission](tx, bucketSubmissions, subKey(id), storage.ErrNotFound)
	if err != nil {
		return err
	}
	if sub.Status != StatusPending {
		return nil
	}
	sub.Status, sub.Updated = status, ms
	return storage.PutJSON(tx, bucketSubmissions, subKey(id), sub)
}
