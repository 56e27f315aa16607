package entities

import (
	"context"
	"errors"

	"github.com/corebank/corebank"
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

// Submit submits the entity with entityID for review: it must be
// incomplete or rejected and meet every requirement (see Requirement).
// The entity becomes pending and the Reviewer is asked. Errors:
// ErrEntityNotFound; a validation error whose Fields name every missing
// requirement; ErrInvalidTransition when the entity is pending, approved
// or suspended. It does not check scope: pass an ID from ResolveEntity.
func (s *Service) Submit(ctx context.Context, entityID string) (*Submission, error) {
	now := s.clock.Now()
	ms := corebank.Millis(now)
	id := s.ids.New(now)
	var sub *Submission
	var comp *Composite
	err := s.db.Update(ctx, func(tx storage.Tx) error {
		ent, err := getEntity(tx, entityID)
		if err != nil {
			return err
		}
		if ent.Status != StatusIncomplete && ent.Status != StatusRejected {
			return ErrInvalidTransition.With("an entity that is " + ent.Status + " cannot be submitted")
		}
		prof, err := getProfile(tx, entityID)
		if err != nil {
			return err
		}
		reqs, err := requirements(tx, ent, prof)
		if err != nil {
			return err
		}
		p := corebank.Problems{}
		for _, r := range reqs {
			if r.Status != RequirementSatisfied {
				p.Add(r.Name, "required before submission: "+r.Description)
			}
		}
		if err := p.Err(); err != nil {
			return err
		}
		ent.Status, ent.Updated = StatusPending, ms
		setVerification(prof, VerificationPending, ms)
		sub = &Submission{ID: id, EntityID: entityID, Status: StatusPending, SubmittedAt: ms,
			Requirements: reqs, Updated: ms}
		if err := putEntity(tx, ent, false); err != nil {
			return err
		}
		if err := storage.PutJSON(tx, bucketEntities, profileKey(entityID), prof); err != nil {
			return err
		}
		if err := storage.PutJSON(tx, bucketSubmissions, subKey(id), sub); err != nil {
			return err
		}
		if err := tx.Put(bucketSubmissions, append(subEntityPrefix(entityID), id...), []byte(id)); err != nil {
			return err
		}
		comp = composite(ent, prof)
		return s.event(tx, now, EventUpdated, comp)
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("entity submitted for review", "entity_id", entityID, "submission_id", id)
	decision, err := s.reviewer.RequestReview(ctx, *sub, comp)
	if err != nil {
		s.log.Error("reviewer failed; the submission stays pending", "entity_id", entityID, "submission_id", id, "error", err)
		return sub, nil
	}
	if decision != "" {
		if _, err := s.Review(ctx, entityID, decision); err != nil {
			return nil, err
		}
		sub.Status, sub.Updated = decision, corebank.Millis(s.clock.Now())
	}
	return sub, nil
}

// GetSubmission returns the submission with id, or a NotFound error.
func (s *Service) GetSubmission(ctx context.Context, id string) (*Submission, error) {
	var out Submission
	err := s.db.View(ctx, func(tx storage.Tx) error {
		return storage.GetJSON(tx, bucketSubmissions, subKey(id), &out)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, corebank.NotFound("submission")
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

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
	var sub Submission
	if err := storage.GetJSON(tx, bucketSubmissions, subKey(id), &sub); err != nil {
		return err
	}
	if sub.Status != StatusPending {
		return nil
	}
	sub.Status, sub.Updated = status, ms
	return storage.PutJSON(tx, bucketSubmissions, subKey(id), &sub)
}
