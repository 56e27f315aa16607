package httpapi_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// detailKeys returns the sorted details keys of an error response.
func detailKeys(r resp) []string {
	var out []string
	for k := range r.details() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestOnboardingFlow takes an individual from creation to an account:
// submit too early (422 naming each missing requirement), upload, submit,
// review in the sandbox, open an account; then suspend it.
func TestOnboardingFlow(t *testing.T) {
	k := newKYC(t)
	tr := newTrees(k.env)
	// a's key creates the individual under a1 and drives everything through
	// entity_id.
	created := k.mkIndividual(tr.keyA, tr.a1)
	id := created.str("data", "entity", "id")
	submit := map[string]any{"entity_id": id}

	r := k.must(422, "POST", "/onboarding-submissions", tr.keyA, submit)
	if diff := cmp.Diff([]string{"documents.identity", "documents.proof_of_address"}, detailKeys(r)); r.code() != "validation_error" || diff != "" {
		t.Fatalf("early submission: %s (-want +got details):\n%s", r.Raw, diff)
	}

	up := k.must(201, "POST", "/documents", tr.keyA, doc(id, "identity", pngBytes, "image/png"))
	if up.data()["entity_verification_impact"].(map[string]any)["ready_to_submit"] != false {
		t.Errorf("ready after one document: %s", up.Raw)
	}
	r = k.must(422, "POST", "/onboarding-submissions", tr.keyA, submit)
	if diff := cmp.Diff([]string{"documents.proof_of_address"}, detailKeys(r)); diff != "" {
		t.Fatalf("details after identity (-want +got):\n%s", diff)
	}
	up = k.must(201, "POST", "/documents", tr.keyA, doc(id, "proof_of_address", pdfBytes, "application/pdf"))
	impact := up.data()["entity_verification_impact"].(map[string]any)
	if impact["ready_to_submit"] != true || impact["entity_status"] != "incomplete" {
		t.Errorf("impact after both documents: %v", impact)
	}
	// The documents were linked to the person's identification.
	ident := k.must(200, "GET", "/entities/"+id, tr.keyA, nil).data()["identification"].(map[string]any)
	if ident["document"].(map[string]any)["document_id"] == "" || ident["proof_of_address"].(map[string]any)["document_id"] == "" {
		t.Errorf("documents not linked: %v", ident)
	}

	// Another tree cannot submit it, nor a read-only key, nor an unknown field.
	k.run(t, []call{
		{"ErrOtherTree", "POST", "/onboarding-submissions", submit, tr.keyB, 404, "not_found", ""},
		{"ErrAbove", "POST", "/onboarding-submissions", map[string]any{"entity_id": tr.a}, tr.keyA1, 404, "not_found", ""},
		{"ErrMissingEntity", "POST", "/onboarding-submissions", map[string]any{"entity_id": "01HZZZZZZZZZZZZZZZZZZZZZZZ"}, tr.keyA, 404, "not_found", ""},
		{"ErrReadOnly", "POST", "/onboarding-submissions", submit, tr.roA, 403, "forbidden", ""},
		{"ErrNoKey", "POST", "/onboarding-submissions", submit, "", 401, "unauthorized", ""},
		{"ErrTypo", "POST", "/onboarding-submissions", map[string]any{"entityid": id}, tr.keyA, 422, "validation_error", "entityid"},
		{"ErrWrongType", "POST", "/onboarding-submissions", map[string]any{"entity_id": 1}, tr.keyA, 422, "validation_error", "entity_id"},
	})
	k.t = t

	r = k.must(201, "POST", "/onboarding-submissions", tr.keyA, submit)
	sub := r.data()
	subID, _ := sub["id"].(string)
	if r.Body["status"] != "success" || sub["entity_id"] != id || sub["status"] != "pending" || subID == "" ||
		sub["submitted_at"] == nil || len(sub["requirements"].([]any)) != 2 {
		t.Fatalf("submission: %s", r.Raw)
	}
	if st := k.must(200, "GET", "/entities/"+id, tr.keyA, nil).str("data", "entity", "status"); st != "pending" {
		t.Errorf("entity status after submission = %q", st)
	}
	// Submitting again while pending is a conflict.
	if r := k.must(409, "POST", "/onboarding-submissions", tr.keyA, submit); r.code() != "invalid_entity_state" {
		t.Errorf("second submission: %s", r.Raw)
	}
	// Not approved yet: no account.
	acct := map[string]any{"entity_id": id, "type": "checking", "currency": "NGN", "display_name": "Main"}
	if r := k.must(422, "POST", "/accounts", tr.keyA, acct); r.code() != "entity_not_approved" {
		t.Errorf("account before approval: %s", r.Raw)
	}

	k.run(t, []call{
		{"OKGetSubmission", "GET", "/onboarding-submissions/" + subID, nil, tr.keyA, 200, "", ""},
		{"OKGetSubmissionReadOnly", "GET", "/onboarding-submissions/" + subID, nil, tr.roA, 200, "", ""},
		{"OKGetSubmissionEntityID", "GET", "/onboarding-submissions/" + subID + "?entity_id=" + tr.a1, nil, tr.keyA, 200, "", ""},
		{"ErrGetSubmissionOtherTree", "GET", "/onboarding-submissions/" + subID, nil, tr.keyB, 404, "not_found", ""},
		{"ErrGetSubmissionEntityID", "GET", "/onboarding-submissions/" + subID + "?entity_id=" + tr.u, nil, tr.keyA, 404, "not_found", ""},
		{"ErrGetSubmissionMissing", "GET", "/onboarding-submissions/01HZZZZZZZZZZZZZZZZZZZZZZZ", nil, tr.keyA, 404, "not_found", ""},
		{"ErrGetSubmissionNoKey", "GET", "/onboarding-submissions/" + subID, nil, "", 401, "unauthorized", ""},
	})
	k.t = t
	foreign := k.do("GET", "/onboarding-submissions/"+subID, tr.keyB, nil)
	gone := k.do("GET", "/onboarding-submissions/01HZZZZZZZZZZZZZZZZZZZZZZZ", tr.keyB, nil)
	if foreign.Raw != gone.Raw {
		t.Errorf("foreign submission %s differs from a missing one %s", foreign.Raw, gone.Raw)
	}
	// A foreign entity_id answers entity-not-found, submission or not.
	existing := k.do("GET", "/onboarding-submissions/"+subID+"?entity_id="+tr.a1, tr.keyB, nil)
	gone = k.do("GET", "/onboarding-submissions/01HZZZZZZZZZZZZZZZZZZZZZZZ?entity_id="+tr.a1, tr.keyB, nil)
	if existing.Status != 404 || existing.Raw != gone.Raw || existing.str("message") != "entity not found" {
		t.Errorf("foreign entity_id: existing %d %s, missing %s", existing.Status, existing.Raw, gone.Raw)
	}

	// The sandbox review approves; the submission follows.
	if r := k.must(200, "POST", "/sandbox/entities/"+id+"/review", tr.keyA, map[string]any{"decision": "approved"}); r.str("status") != "approved" {
		t.Fatalf("review: %s", r.Raw)
	}
	if st := k.must(200, "GET", "/onboarding-submissions/"+subID, tr.keyA, nil).str("data", "status"); st != "approved" {
		t.Errorf("submission status after approval = %q", st)
	}
	acctID := k.must(201, "POST", "/accounts", tr.keyA, acct).str("data", "id")
	if acctID == "" {
		t.Fatal("no account id")
	}
	k.must(201, "POST", "/sandbox/inflows", tr.keyA, map[string]any{"account_id": acctID, "amount": 5000})

	// Suspended: the entity can read but not open accounts or move money.
	k.must(200, "POST", "/sandbox/entities/"+id+"/review", tr.keyA, map[string]any{"decision": "suspended"})
	_, own := k.newKey(tr.keyA, id, false)
	k.run(t, []call{
		{"OKSuspendedReadsItself", "GET", "/entities/" + id, nil, own, 200, "", ""},
		{"OKSuspendedReadsAccount", "GET", "/accounts/" + acctID, nil, own, 200, "", ""},
		{"OKSuspendedLists", "GET", "/entities", nil, own, 200, "", ""},
		{"OKSuspendedReadsSubmission", "GET", "/onboarding-submissions/" + subID, nil, own, 200, "", ""},
		{"ErrSuspendedOpens", "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "x"}, own, 422, "entity_suspended", ""},
		{"ErrSuspendedOpensViaParent", "POST", "/accounts", acct, tr.keyA, 422, "entity_suspended", ""},
		{"ErrSuspendedInflow", "POST", "/sandbox/inflows", map[string]any{"account_id": acctID, "amount": 100}, own, 422, "entity_suspended", ""},
		{"ErrSuspendedSubmits", "POST", "/onboarding-submissions", map[string]any{}, own, 409, "invalid_entity_state", ""},
	})
	k.t = t
	if st := k.must(200, "GET", "/entities/"+id, own, nil).str("data", "entity", "status"); st != "suspended" {
		t.Errorf("status = %q, want suspended", st)
	}
}

// TestOnboardingBusiness checks a business's requirements: its details, a
// control person and a certificate_of_incorporation.
func TestOnboardingBusiness(t *testing.T) {
	k := newKYC(t)
	bare := k.must(201, "POST", "/business-entities", k.key, map[string]any{"name": "Bare",
		"business": map[string]any{"legal_name": "Bare Ltd", "type": "llc"}}).str("data", "entity", "id")
	r := k.must(422, "POST", "/onboarding-submissions", k.key, map[string]any{"entity_id": bare})
	want := []string{"address", "business.email", "business.incorporation_meta.country", "business.registration_number",
		"business_officers", "documents.certificate_of_incorporation"}
	if diff := cmp.Diff(want, detailKeys(r)); diff != "" {
		t.Errorf("bare business details (-want +got):\n%s", diff)
	}

	full := k.must(201, "POST", "/business-entities", k.key, business("Acme")).str("data", "entity", "id")
	r = k.must(422, "POST", "/onboarding-submissions", k.key, map[string]any{"entity_id": full})
	if diff := cmp.Diff([]string{"documents.certificate_of_incorporation"}, detailKeys(r)); diff != "" {
		t.Errorf("full business details (-want +got):\n%s", diff)
	}
	k.must(201, "POST", "/documents", k.key, doc(full, "certificate_of_incorporation", pdfBytes, "application/pdf"))
	sub := k.must(201, "POST", "/onboarding-submissions", k.key, map[string]any{"entity_id": full}).data()
	if sub["status"] != "pending" {
		t.Errorf("submission = %v", sub)
	}
	names := []string{}
	for _, rq := range sub["requirements"].([]any) {
		m := rq.(map[string]any)
		if m["status"] != "satisfied" {
			t.Errorf("requirement %v not satisfied", m)
		}
		names = append(names, m["name"].(string))
	}
	if !slices.Contains(names, "business_officers") {
		t.Errorf("requirements = %v", names)
	}
	// Officers' identity numbers stay masked in the business composite.
	raw := k.must(200, "GET", "/entities/"+full, k.key, nil).Raw
	if !strings.Contains(raw, "0987") {
		t.Errorf("the officer's masked SSN is missing: %.400s", raw)
	}
}
