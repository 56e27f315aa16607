package httpapi

import (
	"net/http"
	"strconv"

	"github.com/corebank/corebank/entities"
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
// {document, entity_verification_impact}. The domain resolves entity_id in
// the caller's tree (404 outside it).
func (h *handler) createDocument(x *exchange, r *http.Request) error {
	var req entities.NewDocument
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	res, err := h.ent.CreateDocument(r.Context(), x.caller(), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "document uploaded", res)
}

// getDocument serves GET /documents/{id}: the document (no bytes). The
// domain decides scope: a foreign entity_id is 404 entity not found, a
// foreign document 404 document not found, as a missing one.
func (h *handler) getDocument(x *exchange, r *http.Request) error {
	within, err := queryEntityID(r)
	if err != nil {
		return err
	}
	d, err := h.ent.GetDocument(r.Context(), x.caller(), within, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "document retrieved", d)
}

// downloadDocument serves GET /documents/{id}/file (urls.main).
func (h *handler) downloadDocument(x *exchange, r *http.Request) error {
	return h.serveDocument(x, r, false)
}

// downloadDocumentBack serves GET /documents/{id}/file_back (urls.back).
func (h *handler) downloadDocumentBack(x *exchange, r *http.Request) error {
	return h.serveDocument(x, r, true)
}

// fileExt names downloads by media type.
var fileExt = map[string]string{"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg"}

// serveDocument writes a document's stored bytes with its stored media
// type, as an attachment the browser must not sniff or cache. Scope is as
// getDocument's.
func (h *handler) serveDocument(x *exchange, r *http.Request, back bool) error {
	within, err := queryEntityID(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	open, name := h.ent.OpenDocument, id
	if back {
		open, name = h.ent.OpenDocumentBack, id+"_back"
	}
	f, err := open(r.Context(), x.caller(), within, id)
	if err != nil {
		return err
	}
	hd := x.Header()
	hd.Set("Content-Type", f.ContentType)
	hd.Set("Content-Length", strconv.Itoa(len(f.Data)))
	hd.Set("Content-Disposition", `attachment; filename="`+name+fileExt[f.ContentType]+`"`)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "private, no-store")
	x.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = x.Write(f.Data)
	}
	return nil
}
