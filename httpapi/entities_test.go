package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Identity and document numbers the fixtures send. None may ever appear in
// a response: only their last four characters, masked.
const (
	secretBVN      = "22212345678"
	secretNIN      = "33398765432"
	secretSSN      = "123450987"
	secretPassport = "A0P4SS9876"
	secretLicence  = "DL77665544"
)

var secrets = []string{secretBVN, secretNIN, secretSSN, secretPassport, secretLicence}

// kyc is an env that records every response body, and checks when the test
// ends that no identity or document number appears unmasked in any.
type kyc struct {
	*env
	bodies []string
}

func newKYC(t *testing.T) *kyc {
	t.Helper()
	k := &kyc{env: newEnv(t)}
	t.Cleanup(func() { checkMasked(t, k.bodies) })
	return k
}

func checkMasked(t *testing.T, bodies []string) {
	t.Helper()
	for _, b := range bodies {
		for _, s := range secrets {
			if strings.Contains(b, s) {
				t.Errorf("a response shows the number %s unmasked: %.300s", s, b)
			}
		}
	}
}

func (k *kyc) do(method, path, key string, body any, hdr ...string) resp {
	k.t.Helper()
	r := k.env.do(method, path, key, body, hdr...)
	k.bodies = append(k.bodies, r.Raw)
	return r
}

func (k *kyc) must(status int, method, path, key string, body any, hdr ...string) resp {
	k.t.Helper()
	r := k.do(method, path, key, body, hdr...)
	if r.Status != status {
		k.t.Fatalf("%s %s: got %d, want %d: %.500s", method, path, r.Status, status, r.Raw)
	}
	return r
}

// run is env.run through the recorder.
func (k *kyc) run(t *testing.T, tests []call) {
	t.Helper()
	runCalls(t, k.env, tests, k.do, func(t *testing.T, got resp) {
		if got.Status < 300 && got.Body["status"] != "success" {
			t.Fatalf("success not in the envelope: %.300s", got.Raw)
		}
	})
}

// individual is a valid POST /individual-entities body for a Nigerian.
func individual(name string) map[string]any {
	return map[string]any{
		"name": name,
		"person": map[string]any{"first_name": "Ada", "last_name": "Obi", "middle_name": "N",
			"date_of_birth": "1990-04-01", "email": "ada@example.com", "nationality": "NG", "gender": "f",
			"phonenumber": "+2348012345678", "bvn": secretBVN, "nin": secretNIN},
		"address": map[string]any{"line_1": "1 Marina", "city": "Lagos", "state": "Lagos",
			"postal_code": "101001", "country_code": "NG"},
		"identification": map[string]any{
			"document": map[string]any{"type": "international_passport", "number": secretPassport,
				"issue_date": "2020-01-02", "expiry_date": "2030-01-01", "issuing_country": "NG"},
			"proof_of_address": map[string]any{"type": "utility_bill"},
		},
		"meta": map[string]any{"tax_id": "T-1"},
	}
}

// officer is a business officer, a US national with an SSN.
func officer(pct float64, control bool) map[string]any {
	return map[string]any{"job_title": "CEO", "is_control_person": control, "is_beneficial_owner": true,
		"ownership_percentage": pct,
		"person": map[string]any{"first_name": "Sam", "last_name": "Lee", "date_of_birth": "1980-07-15",
			"email": "sam@example.com", "nationality": "US", "gender": "m", "phonenumber": "+12025550143",
			"ssn": secretSSN,
			"identification": map[string]any{"document": map[string]any{"type": "drivers_license",
				"number": secretLicence, "issuing_country": "US"}}}}
}

// business is a valid POST /business-entities body with every detail
// submission needs except the certificate document.
func business(name string) map[string]any {
	return map[string]any{
		"name": name,
		"business": map[string]any{"legal_name": name + " LLC", "type": "llc", "email": "ops@acme.example",
			"registration_number": "RC123456", "industry": "software",
			"incorporation_meta": map[string]any{"year": 2019, "month": 5, "country": "US", "state": "DE"}},
		"address": map[string]any{"line_1": "1 Main St", "city": "Dover", "state": "DE",
			"postal_code": "19901", "country_code": "US"},
		"business_officers": []any{officer(60, true)},
	}
}

// with returns a copy of body with path (dotted) set to v; v == nil
// deletes it.
func with(body map[string]any, path string, v any) map[string]any {
	raw, _ := json.Marshal(body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	m := out
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	last := parts[len(parts)-1]
	if v == nil {
		delete(m, last)
	} else {
		m[last] = v
	}
	return out
}

// mkIndividual creates an individual with key (parent_entity when not "")
// and returns the response.
func (k *kyc) mkIndividual(key, parent string) resp {
	k.t.Helper()
	body := individual("Ada Obi")
	if parent != "" {
		body["parent_entity"] = parent
	}
	return k.must(201, "POST", "/individual-entities", key, body)
}

var (
	pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("png data "), 50)...)
	pdfBytes = append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("pdf data "), 50)...)
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// doc is a POST /documents body.
func doc(entity, key string, file []byte, fileType string) map[string]any {
	body := map[string]any{"key": key, "description": key + " scan", "file": b64(file),
		"meta": map[string]any{"file_type": fileType}}
	if entity != "" {
		body["entity_id"] = entity
	}
	return body
}

func TestEntitiesCreate(t *testing.T) {
	k := newKYC(t)
	tr := newTrees(k.env)
	ind := individual("Ada Obi")
	biz := business("Acme")
	k.run(t, []call{
		{"OKIndividual", "POST", "/individual-entities", ind, k.key, 201, "", ""},
		{"OKBusiness", "POST", "/business-entities", biz, k.key, 201, "", ""},
		{"OKParentInTree", "POST", "/individual-entities", with(ind, "parent_entity", tr.a1), tr.keyA, 201, "", ""},
		{"OKSoleTrader", "POST", "/individual-entities", with(ind, "business", map[string]any{"name": "Ada Stores",
			"description": "groceries", "category_code": "5411"}), k.key, 201, "", ""},
		{"ErrMissingFirstName", "POST", "/individual-entities", with(ind, "person.first_name", nil), k.key, 422, "validation_error", "person.first_name"},
		{"ErrMissingPerson", "POST", "/individual-entities", with(ind, "person", nil), k.key, 422, "validation_error", "person"},
		{"ErrMissingName", "POST", "/individual-entities", with(ind, "name", nil), k.key, 422, "validation_error", "name"},
		{"ErrBadDateOfBirth", "POST", "/individual-entities", with(ind, "person.date_of_birth", "1990-02-30"), k.key, 422, "validation_error", "person.date_of_birth"},
		{"ErrFutureDateOfBirth", "POST", "/individual-entities", with(ind, "person.date_of_birth", "2099-01-01"), k.key, 422, "validation_error", "person.date_of_birth"},
		{"ErrBadNationality", "POST", "/individual-entities", with(ind, "person.nationality", "Nigeria"), k.key, 422, "validation_error", "person.nationality"},
		{"ErrBadCountryCode", "POST", "/individual-entities", with(ind, "address.country_code", "XX"), k.key, 422, "validation_error", "address.country_code"},
		{"ErrBadGender", "POST", "/individual-entities", with(ind, "person.gender", "x"), k.key, 422, "validation_error", "person.gender"},
		{"ErrBadPhone", "POST", "/individual-entities", with(ind, "person.phonenumber", "12"), k.key, 422, "validation_error", "person.phonenumber"},
		{"ErrSSNForNonUS", "POST", "/individual-entities", with(ind, "person.ssn", secretSSN), k.key, 422, "validation_error", "person.ssn"},
		{"ErrBVNForNonNG", "POST", "/individual-entities", with(with(ind, "person.nationality", "GB"), "person.nin", nil), k.key, 422, "validation_error", "person.bvn"},
		{"ErrBadDocumentType", "POST", "/individual-entities", with(ind, "identification.document.type", "passport"), k.key, 422, "validation_error", "identification.document.type"},
		{"ErrBadProofType", "POST", "/individual-entities", with(ind, "identification.proof_of_address.type", "selfie"), k.key, 422, "validation_error", "identification.proof_of_address.type"},
		{"ErrOfficersOver100", "POST", "/business-entities", with(biz, "business_officers", []any{officer(60, true), officer(50, false)}), k.key, 422, "validation_error", "business_officers"},
		{"ErrOfficerOver100", "POST", "/business-entities", with(biz, "business_officers", []any{officer(101, true)}), k.key, 422, "validation_error", "business_officers.0.ownership_percentage"},
		{"ErrOfficerEmail", "POST", "/business-entities", with(biz, "business_officers", []any{with(officer(10, true), "person.email", "nope")}), k.key, 422, "validation_error", "business_officers.0.person.email"},
		{"ErrBusinessType", "POST", "/business-entities", with(biz, "business.type", "cooperative"), k.key, 422, "validation_error", "business.type"},
		{"ErrBusinessLegalName", "POST", "/business-entities", with(biz, "business.legal_name", nil), k.key, 422, "validation_error", "business.legal_name"},
		// Strict decoding.
		{"ErrUnknownField", "POST", "/individual-entities", with(ind, "persn", map[string]any{}), k.key, 422, "validation_error", "persn"},
		{"ErrUnknownNested", "POST", "/individual-entities", with(ind, "person.frist_name", "Ada"), k.key, 422, "validation_error", "person.frist_name"},
		{"ErrUnknownOfficerField", "POST", "/business-entities", with(biz, "business_officers", []any{with(officer(10, true), "person.sssn", "1")}), k.key, 422, "validation_error", "business_officers.0.person.sssn"},
		{"ErrEntityIDIsNotAField", "POST", "/individual-entities", with(ind, "entity_id", tr.a), k.key, 422, "validation_error", "entity_id"},
		{"ErrWrongType", "POST", "/individual-entities", with(ind, "person.first_name", 5), k.key, 422, "validation_error", "person.first_name"},
		{"ErrWrongTypeOfficer", "POST", "/business-entities", with(biz, "business_officers", []any{with(officer(10, true), "ownership_percentage", "ten")}), k.key, 422, "validation_error", "business_officers.0.ownership_percentage"},
		{"ErrMalformed", "POST", "/individual-entities", `{"name": "x",`, k.key, 422, "validation_error", "body"},
		{"ErrNotObject", "POST", "/business-entities", `[1]`, k.key, 422, "validation_error", "body"},
		// Auth and scope.
		{"ErrNoKey", "POST", "/individual-entities", ind, "", 401, "unauthorized", ""},
		{"ErrBadKey", "POST", "/business-entities", biz, "sk_sandbox_nope", 401, "unauthorized", ""},
		{"ErrReadOnly", "POST", "/individual-entities", ind, k.roKey, 403, "forbidden", ""},
		{"ErrReadOnlyBusiness", "POST", "/business-entities", biz, tr.roA, 403, "forbidden", ""},
		{"ErrParentInOtherTree", "POST", "/individual-entities", with(ind, "parent_entity", tr.b), tr.keyA, 404, "not_found", ""},
		{"ErrParentAbove", "POST", "/business-entities", with(biz, "parent_entity", k.root), tr.keyA, 404, "not_found", ""},
		{"ErrParentMissing", "POST", "/business-entities", with(biz, "parent_entity", "01HZZZZZZZZZZZZZZZZZZZZZZZ"), tr.keyA, 404, "not_found", ""},
	})

	t.Run("Shape", func(t *testing.T) {
		k.t = t
		r := k.mkIndividual(tr.keyA, "")
		if r.Body["message"] == "" || r.Body["status"] != "success" {
			t.Fatalf("not an envelope: %s", r.Raw)
		}
		d := r.data()
		ent := d["entity"].(map[string]any)
		if ent["type"] != "individual" || ent["status"] != "incomplete" || ent["parent_entity"] != tr.a ||
			ent["is_root"] != false || ent["risk_level"] != "medium" || ent["creation_context"] != "api" {
			t.Errorf("entity = %v", ent)
		}
		person := d["person"].(map[string]any)
		if person["id"] == "" || person["id"] != ent["person_id"] || person["phonenumber"] != "+2348012345678" {
			t.Errorf("person = %v", person)
		}
		for _, part := range []string{"entity", "person", "address", "identification", "business",
			"operating_address", "business_meta", "business_officers"} {
			if _, ok := d[part]; !ok {
				t.Errorf("composite lacks %s: %s", part, r.Raw)
			}
		}
		ident := d["identification"].(map[string]any)
		nums := ident["identity_numbers"].([]any)
		if len(nums) != 2 {
			t.Fatalf("identity_numbers = %v", nums)
		}
		for _, n := range nums {
			v := n.(map[string]any)["value"].(string)
			if !strings.HasSuffix(v, "5678") && !strings.HasSuffix(v, "5432") {
				t.Errorf("identity number %q is not masked to its last four", v)
			}
		}
		if num := ident["document"].(map[string]any)["number"].(string); !strings.HasSuffix(num, "9876") {
			t.Errorf("document number %q", num)
		}

		b := k.must(201, "POST", "/business-entities", k.key, business("Acme")).data()
		if b["entity"].(map[string]any)["type"] != "business" || b["entity"].(map[string]any)["parent_entity"] != k.root {
			t.Errorf("business entity = %v", b["entity"])
		}
		if offs := b["business_officers"].([]any); len(offs) != 1 || offs[0].(map[string]any)["ownership_percentage"] != 60.0 {
			t.Errorf("business_officers = %v", b["business_officers"])
		}
		if b["person"] != nil || b["business"].(map[string]any)["legal_name"] != "Acme LLC" {
			t.Errorf("business composite: %v", b)
		}
	})
}

func TestEntitiesPatch(t *testing.T) {
	k := newKYC(t)
	tr := newTrees(k.env)
	ind := k.mkIndividual(tr.keyA, tr.a1).str("data", "entity", "id")
	biz := k.must(201, "POST", "/business-entities", tr.keyA, business("Acme")).str("data", "entity", "id")
	name := map[string]any{"person": map[string]any{"first_name": "Adaeze"}}
	k.run(t, []call{
		{"OKIndividual", "PATCH", "/individual-entities/" + ind, name, tr.keyA, 200, "", ""},
		{"OKFromRoot", "PATCH", "/individual-entities/" + ind, map[string]any{"name": "Ada O."}, k.key, 200, "", ""},
		{"OKOwnKey", "PATCH", "/individual-entities/" + ind, name, tr.keyA1, 200, "", ""},
		{"OKEntityIDOfParent", "PATCH", "/individual-entities/" + ind, with(name, "entity_id", tr.a1), tr.keyA, 200, "", ""},
		{"OKEntityIDQuery", "PATCH", "/individual-entities/" + ind + "?entity_id=" + tr.a1, name, tr.keyA, 200, "", ""},
		{"OKBusiness", "PATCH", "/business-entities/" + biz, map[string]any{"business": map[string]any{"trade_name": "Acme"}}, tr.keyA, 200, "", ""},
		{"OKBusinessAddOfficer", "PATCH", "/business-entities/" + biz, map[string]any{"business_officers": []any{officer(40, false)}}, tr.keyA, 200, "", ""},
		{"ErrOfficersOver100", "PATCH", "/business-entities/" + biz, map[string]any{"business_officers": []any{officer(1, false)}}, tr.keyA, 422, "validation_error", "business_officers"},
		{"ErrBadDate", "PATCH", "/individual-entities/" + ind, map[string]any{"person": map[string]any{"date_of_birth": "01/02/1990"}}, tr.keyA, 422, "validation_error", "person.date_of_birth"},
		{"ErrBadCountry", "PATCH", "/individual-entities/" + ind, map[string]any{"address": map[string]any{"country_code": "ng"}}, tr.keyA, 422, "validation_error", "address.country_code"},
		{"ErrUnknownField", "PATCH", "/individual-entities/" + ind, map[string]any{"person": map[string]any{"ssn": secretSSN}}, tr.keyA, 422, "validation_error", "person.ssn"},
		{"ErrWrongType", "PATCH", "/individual-entities/" + ind, map[string]any{"name": 7}, tr.keyA, 422, "validation_error", "name"},
		{"ErrEntityIDMismatch", "PATCH", "/individual-entities/" + ind + "?entity_id=" + tr.a, with(name, "entity_id", tr.a1), tr.keyA, 422, "validation_error", "entity_id"},
		{"ErrWrongKind", "PATCH", "/business-entities/" + ind, map[string]any{"name": "x"}, tr.keyA, 404, "not_found", ""},
		{"ErrWrongKindIndividual", "PATCH", "/individual-entities/" + biz, map[string]any{"name": "x"}, tr.keyA, 404, "not_found", ""},
		{"ErrOtherTree", "PATCH", "/individual-entities/" + ind, name, tr.keyB, 404, "not_found", ""},
		{"ErrAbove", "PATCH", "/business-entities/" + tr.a, map[string]any{"name": "x"}, tr.keyA1, 404, "not_found", ""},
		{"ErrEntityIDOtherTree", "PATCH", "/individual-entities/" + ind, with(name, "entity_id", tr.b), tr.keyA, 404, "not_found", ""},
		{"ErrEntityIDNotAncestor", "PATCH", "/individual-entities/" + ind, with(name, "entity_id", tr.u), tr.keyA, 404, "not_found", ""},
		{"ErrMissing", "PATCH", "/individual-entities/01HZZZZZZZZZZZZZZZZZZZZZZZ", name, tr.keyA, 404, "not_found", ""},
		{"ErrNoKey", "PATCH", "/individual-entities/" + ind, name, "", 401, "unauthorized", ""},
		{"ErrReadOnly", "PATCH", "/individual-entities/" + ind, name, tr.roA, 403, "forbidden", ""},
		{"ErrReadOnlyBusiness", "PATCH", "/business-entities/" + biz, name, tr.roA, 403, "forbidden", ""},
	})

	t.Run("ChangesApplied", func(t *testing.T) {
		k.t = t
		r := k.must(200, "PATCH", "/individual-entities/"+ind, tr.keyA, map[string]any{"name": "Ada Obi-Okafor",
			"person": map[string]any{"last_name": "Okafor"}, "address": map[string]any{"city": "Abuja"}})
		d := r.data()
		ch := d["changes_applied"].(map[string]any)
		for part, field := range map[string]string{"entity_fields": "name", "person_fields": "last_name", "address_fields": "city"} {
			if !slices.Contains(ch[part].([]any), any(field)) {
				t.Errorf("changes_applied.%s lacks %s: %v", part, field, ch)
			}
		}
		if d["entity"].(map[string]any)["name"] != "Ada Obi-Okafor" || d["person"].(map[string]any)["last_name"] != "Okafor" {
			t.Errorf("patch not applied: %s", r.Raw)
		}
		if d["person"].(map[string]any)["first_name"] != "Adaeze" {
			t.Errorf("absent fields changed: %s", r.Raw)
		}
	})
}

func TestEntitiesGet(t *testing.T) {
	k := newKYC(t)
	tr := newTrees(k.env)
	created := k.mkIndividual(tr.keyA, tr.a1)
	id := created.str("data", "entity", "id")
	k.run(t, []call{
		{"OKOwnKey", "GET", "/entities/" + tr.a, nil, tr.keyA, 200, "", ""},
		{"OKChild", "GET", "/entities/" + id, nil, tr.keyA, 200, "", ""},
		{"OKRoot", "GET", "/entities/" + id, nil, k.key, 200, "", ""},
		{"OKReadOnly", "GET", "/entities/" + id, nil, tr.roA, 200, "", ""},
		{"OKEntityID", "GET", "/entities/" + id + "?entity_id=" + tr.a1, nil, tr.keyA, 200, "", ""},
		{"ErrEntityIDSibling", "GET", "/entities/" + id + "?entity_id=" + tr.u, nil, tr.keyA, 404, "not_found", ""},
		{"ErrEntityIDOtherTree", "GET", "/entities/" + id + "?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrOtherTree", "GET", "/entities/" + id, nil, tr.keyB, 404, "not_found", ""},
		{"ErrAbove", "GET", "/entities/" + tr.a, nil, tr.keyA1, 404, "not_found", ""},
		{"ErrRoot", "GET", "/entities/" + k.root, nil, tr.keyA, 404, "not_found", ""},
		{"ErrMissing", "GET", "/entities/01HZZZZZZZZZZZZZZZZZZZZZZZ", nil, tr.keyA, 404, "not_found", ""},
		{"ErrEntityIDTwice", "GET", "/entities/" + id + "?entity_id=" + tr.a + "&entity_id=" + tr.a1, nil, tr.keyA, 422, "validation_error", "entity_id"},
		{"ErrNoKey", "GET", "/entities/" + id, nil, "", 401, "unauthorized", ""},
	})

	t.Run("SameAsCreate", func(t *testing.T) {
		k.t = t
		got := k.must(200, "GET", "/entities/"+id, tr.keyA, nil)
		if diff := cmp.Diff(created.data(), got.data()); diff != "" {
			t.Errorf("GET differs from create (-create +get):\n%s", diff)
		}
		if got.Body["status"] != "success" {
			t.Errorf("not an envelope: %s", got.Raw)
		}
	})

	t.Run("ForeignLooksMissing", func(t *testing.T) {
		k.t = t
		const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
		for _, c := range []struct{ method, path string }{
			{"GET", "/entities/%s"},
			{"PATCH", "/individual-entities/%s"},
		} {
			var body any
			if c.method == "PATCH" {
				body = map[string]any{"name": "x"}
			}
			foreign := k.do(c.method, fmt.Sprintf(c.path, id), tr.keyB, body)
			gone := k.do(c.method, fmt.Sprintf(c.path, missing), tr.keyB, body)
			if a, b := strings.ReplaceAll(foreign.Raw, id, "ID"), strings.ReplaceAll(gone.Raw, missing, "ID"); foreign.Status != 404 || a != b {
				t.Errorf("%s %s: foreign %d %s, missing %s", c.method, c.path, foreign.Status, a, b)
			}
			// A foreign entity_id (query, or body for PATCH) answers alike
			// for an existing and a missing entity.
			q := "?entity_id=" + tr.a
			existing := k.do(c.method, fmt.Sprintf(c.path, id)+q, tr.keyB, body)
			gone = k.do(c.method, fmt.Sprintf(c.path, missing)+q, tr.keyB, body)
			if existing.Status != 404 || existing.Raw != gone.Raw {
				t.Errorf("%s %s%s: existing %d %s, missing %s", c.method, c.path, q, existing.Status, existing.Raw, gone.Raw)
			}
			if c.method == "PATCH" {
				withID := map[string]any{"name": "x", "entity_id": tr.a}
				existing := k.do(c.method, fmt.Sprintf(c.path, id), tr.keyB, withID)
				gone := k.do(c.method, fmt.Sprintf(c.path, missing), tr.keyB, withID)
				if existing.Status != 404 || existing.Raw != gone.Raw {
					t.Errorf("%s %s body entity_id: existing %d %s, missing %s", c.method, c.path, existing.Status, existing.Raw, gone.Raw)
				}
			}
		}
	})
}

// walkEntities pages through path with key in both directions and returns
// the IDs seen each way.
func (k *kyc) walkEntities(t *testing.T, path, key string, limit int) (fwd, back []string) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	base := fmt.Sprintf("%s%slimit=%d", path, sep, limit)
	next := base
	var pag map[string]any
	ids := func(r resp) []string {
		var out []string
		for _, it := range r.Body["data"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		if len(out) > limit {
			t.Fatalf("page of %d items for limit %d", len(out), limit)
		}
		return out
	}
	for pages := 0; ; pages++ {
		if pages > 200 {
			t.Fatal("walk does not end")
		}
		r := k.must(200, "GET", next, key, nil)
		page := ids(r)
		fwd = append(fwd, page...)
		pag = r.Body["meta"].(map[string]any)["pagination"].(map[string]any)
		if pag["has_next"] != true {
			back = page // the walk back starts from the last page
			if pag["next_cursor"] != nil {
				t.Fatalf("next_cursor without has_next: %v", pag)
			}
			break
		}
		next = base + "&cursor=" + url.QueryEscape(pag["next_cursor"].(string))
	}
	for pages := 0; pag["has_previous"] == true; pages++ {
		if pages > 200 {
			t.Fatal("walk does not end")
		}
		r := k.must(200, "GET", base+"&prev_cursor="+url.QueryEscape(pag["previous_cursor"].(string)), key, nil)
		back = append(ids(r), back...)
		pag = r.Body["meta"].(map[string]any)["pagination"].(map[string]any)
	}
	return fwd, back
}

func TestEntitiesList(t *testing.T) {
	k := newKYC(t)
	tr := newTrees(k.env)
	// Under a1: 23 individuals and businesses, created by a's key.
	var under []string
	for i := 0; i < 23; i++ {
		var r resp
		if i%3 == 0 {
			r = k.must(201, "POST", "/business-entities", tr.keyA, with(business(fmt.Sprintf("Biz %d", i)), "parent_entity", tr.a1))
		} else {
			r = k.must(201, "POST", "/individual-entities", tr.keyA, with(individual(fmt.Sprintf("Person %d", i)), "parent_entity", tr.a1))
		}
		under = append(under, r.str("data", "entity", "id"))
	}
	// a's tree: a, a1, u and the 23, oldest first.
	wantA := append([]string{tr.a, tr.a1, tr.u}, under...)

	t.Run("WalkEveryItemOnce", func(t *testing.T) {
		k.t = t
		for _, limit := range []int{1, 4, 7, 26, 100} {
			fwd, back := k.walkEntities(t, "/entities", tr.keyA, limit)
			if diff := cmp.Diff(wantA, fwd); diff != "" {
				t.Errorf("limit %d forward (-want +got):\n%s", limit, diff)
			}
			if diff := cmp.Diff(wantA, back); diff != "" {
				t.Errorf("limit %d backward (-want +got):\n%s", limit, diff)
			}
		}
		// The parent filter walks only a1's children.
		fwd, _ := k.walkEntities(t, "/entities?parent_entity="+tr.a1, tr.keyA, 5)
		if diff := cmp.Diff(under, fwd); diff != "" {
			t.Errorf("parent_entity walk (-want +got):\n%s", diff)
		}
		// Root sees its whole tree, each once.
		fwd, _ = k.walkEntities(t, "/entities", k.key, 9)
		seen := map[string]int{}
		for _, id := range fwd {
			seen[id]++
		}
		for _, id := range append(wantA, k.root, tr.b) {
			if seen[id] != 1 {
				t.Errorf("root walk saw %s %d times", id, seen[id])
			}
		}
		if len(fwd) != len(wantA)+2 {
			t.Errorf("root walk saw %d items, want %d", len(fwd), len(wantA)+2)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		k.t = t
		r := k.must(200, "GET", "/entities?type=business&status=incomplete&parent_entity="+tr.a1+"&limit=100", tr.keyA, nil)
		var got []string
		for _, it := range r.Body["data"].([]any) {
			m := it.(map[string]any)
			if m["type"] != "business" || m["status"] != "incomplete" || m["parent_entity"] != tr.a1 {
				t.Errorf("filtered list holds %v", m)
			}
			got = append(got, m["id"].(string))
		}
		if len(got) != 8 {
			t.Errorf("got %d businesses under a1, want 8", len(got))
		}
		meta := r.Body["meta"].(map[string]any)
		f := meta["filters_applied"].(map[string]any)
		want := map[string]any{"type": "business", "status": "incomplete", "parent_entity": tr.a1, "entity_id": tr.a}
		if diff := cmp.Diff(want, f); diff != "" {
			t.Errorf("filters_applied (-want +got):\n%s", diff)
		}
		p := meta["pagination"].(map[string]any)
		for _, field := range []string{"limit", "has_next", "has_previous", "next_cursor", "previous_cursor"} {
			if _, ok := p[field]; !ok {
				t.Errorf("pagination lacks %s: %v", field, p)
			}
		}
		r = k.must(200, "GET", "/entities?status=approved", tr.keyA, nil)
		var approved []string
		for _, it := range r.Body["data"].([]any) {
			approved = append(approved, it.(map[string]any)["id"].(string))
		}
		if diff := cmp.Diff([]string{tr.a, tr.a1}, approved); diff != "" {
			t.Errorf("status=approved (-want +got):\n%s", diff)
		}
		// entity_id narrows to that entity's tree.
		r = k.must(200, "GET", "/entities?entity_id="+tr.a1+"&limit=100", tr.keyA, nil)
		if n := len(r.Body["data"].([]any)); n != 24 {
			t.Errorf("a1's tree has %d entities, want 24", n)
		}
		// A child key never sees its parent or siblings.
		r = k.must(200, "GET", "/entities?limit=100", tr.keyB, nil)
		if d := r.Body["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != tr.b {
			t.Errorf("b's list: %.300s", r.Raw)
		}
	})

	first := k.must(200, "GET", "/entities?limit=2", tr.keyA, nil)
	cursor := url.QueryEscape(first.Body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string))
	k.run(t, []call{
		{"OKReadOnly", "GET", "/entities", nil, tr.roA, 200, "", ""},
		{"OKCursor", "GET", "/entities?limit=2&cursor=" + cursor, nil, tr.keyA, 200, "", ""},
		{"ErrCursorOtherFilter", "GET", "/entities?type=business&cursor=" + cursor, nil, tr.keyA, 422, "validation_error", "cursor"},
		{"ErrCursorOtherKey", "GET", "/entities?cursor=" + cursor, nil, tr.keyB, 422, "validation_error", "cursor"},
		{"ErrCursorGarbage", "GET", "/entities?cursor=abc", nil, tr.keyA, 422, "validation_error", "cursor"},
		{"ErrType", "GET", "/entities?type=robot", nil, tr.keyA, 422, "validation_error", "type"},
		{"ErrStatus", "GET", "/entities?status=sleeping", nil, tr.keyA, 422, "validation_error", "status"},
		{"ErrLimitLow", "GET", "/entities?limit=0", nil, tr.keyA, 422, "validation_error", "limit"},
		{"ErrLimitHigh", "GET", "/entities?limit=101", nil, tr.keyA, 422, "validation_error", "limit"},
		{"ErrParentOtherTree", "GET", "/entities?parent_entity=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrParentAbove", "GET", "/entities?parent_entity=" + k.root, nil, tr.keyA, 404, "not_found", ""},
		{"ErrEntityIDOtherTree", "GET", "/entities?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrEntityIDAbove", "GET", "/entities?entity_id=" + tr.a, nil, tr.keyA1, 404, "not_found", ""},
		{"ErrNoKey", "GET", "/entities", nil, "", 401, "unauthorized", ""},
	})
}

// TestEntitiesGolden pins the whole shape of the entity, document and
// submission responses (go test ./httpapi -run TestEntitiesGolden -update).
func TestEntitiesGolden(t *testing.T) {
	k := &kyc{env: newEnvSeeded(t, 4242)}
	t.Cleanup(func() { checkMasked(t, k.bodies) })
	r := k.must(201, "POST", "/individual-entities", k.key, individual("Ada Obi"))
	golden(t, "entity_individual_create", r)
	id := r.str("data", "entity", "id")
	golden(t, "entity_business_create", k.must(201, "POST", "/business-entities", k.key, business("Acme")))
	k.clock.Add(1e9)
	golden(t, "entity_individual_patch", k.must(200, "PATCH", "/individual-entities/"+id, k.key,
		map[string]any{"person": map[string]any{"first_name": "Adaeze"}}))
	golden(t, "entity_get", k.must(200, "GET", "/entities/"+id, k.key, nil))
	golden(t, "entity_list", k.must(200, "GET", "/entities?limit=2", k.key, nil))
	golden(t, "submission_incomplete", k.must(422, "POST", "/onboarding-submissions", k.key, map[string]any{"entity_id": id}))
	d := k.must(201, "POST", "/documents", k.key, doc(id, "identity", pngBytes, "image/png"))
	golden(t, "document_create", d)
	golden(t, "document_get", k.must(200, "GET", "/documents/"+d.str("data", "document", "id"), k.key, nil))
	k.must(201, "POST", "/documents", k.key, doc(id, "proof_of_address", pdfBytes, "application/pdf"))
	s := k.must(201, "POST", "/onboarding-submissions", k.key, map[string]any{"entity_id": id})
	golden(t, "submission_create", s)
	k.must(200, "POST", "/sandbox/entities/"+id+"/review", k.key, map[string]any{"decision": "approved"})
	golden(t, "submission_get", k.must(200, "GET", "/onboarding-submissions/"+s.str("data", "id"), k.key, nil))
	golden(t, "error_entity_not_found", k.must(404, "GET", "/entities/01HZZZZZZZZZZZZZZZZZZZZZZZ", k.key, nil))
}

// TestEntitiesMasking sends every identity and document number through
// every route that echoes an entity and checks, on top of the recorder's
// check, that the masked forms are what comes back.
func TestEntitiesMasking(t *testing.T) {
	k := newKYC(t)
	ind := k.mkIndividual(k.key, "")
	id := ind.str("data", "entity", "id")
	biz := k.must(201, "POST", "/business-entities", k.key, business("Masked")).str("data", "entity", "id")
	k.must(200, "PATCH", "/individual-entities/"+id, k.key, map[string]any{"identification": map[string]any{
		"document": map[string]any{"type": "national_id", "number": secretPassport, "issuing_country": "NG"}}})
	k.must(200, "PATCH", "/business-entities/"+biz, k.key, map[string]any{"business_officers": []any{officer(10, false)}})
	k.must(200, "GET", "/entities/"+id, k.key, nil)
	k.must(200, "GET", "/entities/"+biz, k.key, nil)
	k.must(200, "GET", "/entities?limit=100", k.key, nil)
	k.must(201, "POST", "/documents", k.key, doc(id, "identity", pngBytes, "image/png"))
	k.must(201, "POST", "/documents", k.key, doc(id, "proof_of_address", pngBytes, "image/png"))
	sub := k.must(201, "POST", "/onboarding-submissions", k.key, map[string]any{"entity_id": id}).str("data", "id")
	k.must(200, "GET", "/onboarding-submissions/"+sub, k.key, nil)
	k.must(200, "POST", "/sandbox/entities/"+id+"/review", k.key, map[string]any{"decision": "approved"})
	// Validation errors must not echo numbers either.
	k.must(422, "POST", "/individual-entities", k.key, with(individual("x"), "person.ssn", secretSSN))
	k.must(422, "POST", "/individual-entities", k.key, with(individual("x"), "identification.document.number", secretPassport+"!"))

	all := strings.Join(k.bodies, "\n")
	for _, last4 := range []string{"5678", "5432", "9876", "0987", "5544"} {
		if !strings.Contains(all, last4) {
			t.Errorf("no response shows the masked number ending %s", last4)
		}
	}
	if len(k.bodies) < 14 {
		t.Fatalf("recorded %d bodies", len(k.bodies))
	}
}
