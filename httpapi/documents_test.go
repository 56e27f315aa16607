package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corebank/corebank/entities"
)

func TestDocuments(t *testing.T) {
	k := newKYC(t)
	tr := newTrees(k.env)
	child := k.mkIndividual(tr.keyA, tr.a1)
	cid := child.str("data", "entity", "id")
	personID := child.str("data", "person", "id")

	// A two-sided PNG for the child, uploaded by a's key through entity_id.
	body := doc(cid, "identity", pngBytes, "image/png")
	back := append(append([]byte(nil), pngBytes...), "back side"...)
	body["file_back"] = b64(back)
	body["link_to_identity"] = map[string]any{"person_id": personID}
	up := k.must(201, "POST", "/documents", tr.keyA, body)
	d := up.data()
	document := d["document"].(map[string]any)
	id := document["id"].(string)
	urls := document["urls"].(map[string]any)
	if document["entity_id"] != cid || document["key"] != "identity" || urls["main"] != "/documents/"+id+"/file" ||
		urls["back"] != "/documents/"+id+"/file_back" || document["meta"].(map[string]any)["file_type"] != "image/png" ||
		document["verification_status"] != "pending" || document["uploaded_at"] == nil {
		t.Errorf("document = %v", document)
	}
	impact := d["entity_verification_impact"].(map[string]any)
	if impact["entity_id"] != cid || impact["ready_to_submit"] != false {
		t.Errorf("entity_verification_impact = %v", impact)
	}
	if up.Body["status"] != "success" {
		t.Errorf("not an envelope: %s", up.Raw)
	}
	// A one-sided PDF of a's own.
	own := k.must(201, "POST", "/documents", tr.keyA, doc("", "tax_verification", pdfBytes, "application/pdf")).str("data", "document", "id")

	t.Run("Download", func(t *testing.T) {
		k.t = t
		for _, c := range []struct {
			path, key, ct string
			want          []byte
		}{
			{"/documents/" + id + "/file", tr.keyA, "image/png", pngBytes},
			{"/documents/" + id + "/file_back", tr.keyA, "image/png", back},
			{"/documents/" + id + "/file", tr.keyA1, "image/png", pngBytes},
			{"/documents/" + id + "/file?entity_id=" + tr.a1, tr.roA, "image/png", pngBytes},
			{"/documents/" + own + "/file", tr.keyA, "application/pdf", pdfBytes},
		} {
			r := k.must(200, "GET", c.path, c.key, nil)
			if !bytes.Equal([]byte(r.Raw), c.want) {
				t.Errorf("%s: %d bytes differ from the %d uploaded", c.path, len(r.Raw), len(c.want))
			}
			h := r.Header
			if h.Get("Content-Type") != c.ct || h.Get("X-Content-Type-Options") != "nosniff" ||
				!strings.HasPrefix(h.Get("Content-Disposition"), "attachment") {
				t.Errorf("%s headers: %v", c.path, h)
			}
		}
		// The URLs in the document are the download paths.
		if r := k.must(200, "GET", urls["main"].(string), tr.keyA, nil); r.Raw != string(pngBytes) {
			t.Error("urls.main does not download the file")
		}
		// HEAD answers the headers alone.
		req := httptest.NewRequest("HEAD", "/documents/"+own+"/file", nil)
		req.Header.Set("Authorization", "Bearer "+tr.keyA)
		w := k.serve(req)
		if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Type") != "application/pdf" {
			t.Errorf("HEAD: %d %v %d bytes", w.Code, w.Header(), w.Body.Len())
		}
	})

	t.Run("Get", func(t *testing.T) {
		k.t = t
		r := k.must(200, "GET", "/documents/"+id, tr.keyA1, nil)
		if r.Body["status"] != "success" || r.str("data", "id") != id || r.str("data", "entity_id") != cid ||
			r.str("data", "urls", "main") != urls["main"] {
			t.Errorf("GET /documents/{id}: %s", r.Raw)
		}
	})

	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	k.run(t, []call{
		{"OKRootReads", "GET", "/documents/" + id, nil, k.key, 200, "", ""},
		{"OKReadOnlyReads", "GET", "/documents/" + id, nil, tr.roA, 200, "", ""},
		{"OKEntityID", "GET", "/documents/" + id + "?entity_id=" + cid, nil, tr.keyA, 200, "", ""},
		{"ErrOtherTree", "GET", "/documents/" + id, nil, tr.keyB, 404, "not_found", ""},
		{"ErrOtherTreeFile", "GET", "/documents/" + id + "/file", nil, tr.keyB, 404, "not_found", ""},
		{"ErrOtherTreeBack", "GET", "/documents/" + id + "/file_back", nil, tr.keyB, 404, "not_found", ""},
		{"ErrChildReadsParent", "GET", "/documents/" + own, nil, tr.keyA1, 404, "not_found", ""},
		{"ErrChildDownloadsParent", "GET", "/documents/" + own + "/file", nil, tr.keyA1, 404, "not_found", ""},
		{"ErrEntityIDSibling", "GET", "/documents/" + id + "?entity_id=" + tr.u, nil, tr.keyA, 404, "not_found", ""},
		{"ErrEntityIDOtherTree", "GET", "/documents/" + id + "/file?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrMissing", "GET", "/documents/" + missing, nil, tr.keyA, 404, "not_found", ""},
		{"ErrMissingFile", "GET", "/documents/" + missing + "/file", nil, tr.keyA, 404, "not_found", ""},
		{"ErrNoBack", "GET", "/documents/" + own + "/file_back", nil, tr.keyA, 404, "not_found", ""},
		{"ErrNoKey", "GET", "/documents/" + id, nil, "", 401, "unauthorized", ""},
		{"ErrNoKeyFile", "GET", "/documents/" + id + "/file", nil, "", 401, "unauthorized", ""},
		// Upload validation.
		{"ErrKey", "POST", "/documents", doc("", "selfie", pngBytes, "image/png"), tr.keyA, 422, "validation_error", "key"},
		{"ErrKeyMissing", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "key", nil), tr.keyA, 422, "validation_error", "key"},
		{"ErrFileTypeMismatch", "POST", "/documents", doc("", "identity", pdfBytes, "image/png"), tr.keyA, 422, "validation_error", "file"},
		{"ErrBackTypeMismatch", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "file_back", b64(pdfBytes)), tr.keyA, 422, "validation_error", "file_back"},
		{"ErrFileType", "POST", "/documents", doc("", "identity", pngBytes, "image/gif"), tr.keyA, 422, "validation_error", "meta.file_type"},
		{"ErrFileTypeMissing", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "meta", nil), tr.keyA, 422, "validation_error", "meta.file_type"},
		{"ErrNotBase64", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "file", "@@not base64@@"), tr.keyA, 422, "validation_error", "file"},
		{"ErrFileMissing", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "file", nil), tr.keyA, 422, "validation_error", "file"},
		{"ErrUnknownField", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "meta.filetype", "x"), tr.keyA, 422, "validation_error", "meta.filetype"},
		{"ErrTypoEntityID", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "entityid", cid), tr.keyA, 422, "validation_error", "entityid"},
		{"ErrWrongType", "POST", "/documents", with(doc("", "identity", pngBytes, "image/png"), "file", 12), tr.keyA, 422, "validation_error", "file"},
		{"ErrLinkPerson", "POST", "/documents", with(doc(cid, "identity", pngBytes, "image/png"), "link_to_identity.person_id", "nobody"), tr.keyA, 422, "validation_error", "link_to_identity.person_id"},
		{"ErrEntityOtherTree", "POST", "/documents", doc(tr.b, "identity", pngBytes, "image/png"), tr.keyA, 404, "not_found", ""},
		{"ErrEntityAbove", "POST", "/documents", doc(tr.a, "identity", pngBytes, "image/png"), tr.keyA1, 404, "not_found", ""},
		{"ErrReadOnly", "POST", "/documents", doc("", "identity", pngBytes, "image/png"), tr.roA, 403, "forbidden", ""},
		{"ErrNoKeyUpload", "POST", "/documents", doc("", "identity", pngBytes, "image/png"), "", 401, "unauthorized", ""},
	})

	t.Run("ForeignLooksMissing", func(t *testing.T) {
		k.t = t
		for _, suffix := range []string{"", "/file", "/file_back"} {
			foreign := k.do("GET", "/documents/"+id+suffix, tr.keyB, nil)
			gone := k.do("GET", "/documents/"+missing+suffix, tr.keyB, nil)
			if a, b := strings.ReplaceAll(foreign.Raw, id, "ID"), strings.ReplaceAll(gone.Raw, missing, "ID"); foreign.Status != 404 || a != b {
				t.Errorf("%s: foreign %d %s, missing %s", suffix, foreign.Status, a, b)
			}
			if msg := foreign.str("message"); msg != "document not found" {
				t.Errorf("%s: foreign document says %q, want document not found", suffix, msg)
			}
		}
	})

	// A foreign entity_id is decided before the document is read: an
	// existing and a missing document answer the same entity-not-found.
	t.Run("ForeignEntityIDLooksMissing", func(t *testing.T) {
		k.t = t
		for _, suffix := range []string{"", "/file", "/file_back"} {
			for _, key := range []string{tr.keyA, tr.keyB} {
				q := "?entity_id=" + tr.b
				if key == tr.keyB {
					q = "?entity_id=" + tr.a1
				}
				existing := k.do("GET", "/documents/"+id+suffix+q, key, nil)
				gone := k.do("GET", "/documents/"+missing+suffix+q, key, nil)
				if existing.Status != 404 || existing.Raw != gone.Raw || existing.str("message") != "entity not found" {
					t.Errorf("%s%s: existing %d %s, missing %s", suffix, q, existing.Status, existing.Raw, gone.Raw)
				}
			}
		}
	})
}

// TestDocumentSizes uploads the largest legal document (two 10 MiB files,
// about 27 MiB of JSON) and checks the limits around it.
func TestDocumentSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("moves about 100 MiB")
	}
	k := newKYC(t)
	big := append(pdfBytes[:len(pdfBytes):len(pdfBytes)], bytes.Repeat([]byte("0123456789abcdef\x00\xff"), entities.MaxFileSize/18)...)
	big = big[:entities.MaxFileSize]
	// MIME-style base64 (CRLF every 76 characters, escaped in JSON) is the
	// largest honest encoding.
	enc := base64.StdEncoding.EncodeToString(big)
	var mime strings.Builder
	for i := 0; i < len(enc); i += 76 {
		mime.WriteString(enc[i:min(i+76, len(enc))])
		mime.WriteString("\r\n")
	}
	body := map[string]any{"key": "certificate_of_incorporation", "file": mime.String(), "file_back": mime.String(),
		"meta": map[string]any{"file_type": "application/pdf"}}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) <= 20<<20 || len(raw) > 30<<20 {
		t.Fatalf("body is %d bytes; the test means one between 20 and 30 MiB", len(raw))
	}
	up := k.must(201, "POST", "/documents", k.key, raw)
	id := up.str("data", "document", "id")
	if r := k.must(200, "GET", "/documents/"+id+"/file_back", k.key, nil); !bytes.Equal([]byte(r.Raw), big) {
		t.Errorf("a 10 MiB file_back came back as %d different bytes", len(r.Raw))
	}
	k.bodies = k.bodies[:0] // the downloads are large and hold no numbers

	// One byte over 10 MiB decoded is 413 file_too_large naming the file.
	over := append(big, 0)
	r := k.do("POST", "/documents", k.key, map[string]any{"key": "identity", "file": b64(over),
		"meta": map[string]any{"file_type": "application/pdf"}})
	if r.Status != 413 || r.code() != "file_too_large" || r.details()["file"] == nil {
		t.Errorf("10 MiB + 1 file: %d %.300s", r.Status, r.Raw)
	}
	// A body over 30 MiB is 413 request_too_large before any decoding.
	r = k.do("POST", "/documents", k.key, bytes.Repeat([]byte(" "), 30<<20+1))
	if r.Status != 413 || r.code() != "request_too_large" || !strings.Contains(r.str("message"), "30 MiB") {
		t.Errorf("30 MiB + 1 body: %d %.300s", r.Status, r.Raw)
	}
	// Every other route keeps the 10 MiB limit.
	for _, p := range []string{"/individual-entities", "/business-entities", "/onboarding-submissions", "/accounts"} {
		r := k.do("POST", p, k.key, bytes.Repeat([]byte(" "), 10<<20+1))
		if r.Status != 413 || r.code() != "request_too_large" {
			t.Errorf("POST %s with 10 MiB + 1: %d %.200s", p, r.Status, r.Raw)
		}
	}
	k.bodies = k.bodies[:0]
}
