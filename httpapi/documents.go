package httpapi

import (
	"net/http"
)

// maxDocumentBody is the body limit of POST /documents. A document carries
// two files of up to entities.MaxFileSize (10 MiB) each, base64 encoded:
// about 26.7 MiB, or 28 MiB with MIME line breaks escaped in JSON. 30 MiB
// leaves room for the rest of the body; every other route keeps maxBody.
const maxDocumentBody = 30 << 20

// bodyLimits raises the request body limit of the routes whose bodies carry
// files, by route pattern. readBody consults it.
var bodyLimits = map[string]int64{
	"POST /documents": maxDocumentBody,
}

// createDocument serves POST /documents: the envelope's data is
// {document, entity_verification_impact}. entity_id is the body's alone:
// the domain resolves it in the caller's tree (404 outside it).
func (h *handler) createDocument(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "document uploaded"), nil, h.ent.CreateDocument)
}

// getDocument serves GET /documents/{id}: the document (no bytes). The
// domain decides scope: a foreign entity_id is 404 entity not found, a
// foreign document 404 document not found, as a missing one.
func (h *handler) getDocument(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "document retrieved"), h.ent.GetDocument)
}

// downloadDocument serves GET /documents/{id}/file (urls.main): the stored
// bytes as an attachment. Scope is as getDocument's.
func (h *handler) downloadDocument(x *exchange, r *http.Request) error {
	return fetched(x, r, attachment(r.PathValue("id")), h.ent.OpenDocument)
}

// downloadDocumentBack serves GET /documents/{id}/file_back (urls.back).
func (h *handler) downloadDocumentBack(x *exchange, r *http.Request) error {
	return fetched(x, r, attachment(r.PathValue("id")+"_back"), h.ent.OpenDocumentBack)
}
