package httpapi

import (
	"context"
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
	res, err := h.ent.CreateDocument(r.Context(), x.p.entityID, req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "document uploaded", res)
}

// document loads a document the caller may see: its entity must lie in the
// caller's tree (and in entity_id's, when given). Anything else answers
// exactly as a missing document.
func (h *handler) document(ctx context.Context, x *exchange, r *http.Request) (*entities.Document, error) {
	entity, err := queryEntityID(r)
	if err != nil {
		return nil, err
	}
	d, err := h.ent.GetDocument(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if err := h.within(ctx, x, d.EntityID, entity, entities.ErrDocumentNotFound); err != nil {
		return nil, err
	}
	return d, nil
}

// getDocument serves GET /documents/{id}: the document (no bytes).
func (h *handler) getDocument(x *exchange, r *http.Request) error {
	d, err := h.document(r.Context(), x, r)
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
// type, as an attachment the browser must not sniff or cache.
func (h *handler) serveDocument(x *exchange, r *http.Request, back bool) error {
	ctx := r.Context()
	d, err := h.document(ctx, x, r)
	if err != nil {
		return err
	}
	open, name := h.ent.OpenDocument, d.ID
	if back {
		open, name = h.ent.OpenDocumentBack, d.ID+"_back"
	}
	ct, data, err := open(ctx, d.ID)
	if err != nil {
		return err
	}
	hd := x.Header()
	hd.Set("Content-Type", ct)
	hd.Set("Content-Length", strconv.Itoa(len(data)))
	hd.Set("Content-Disposition", `attachment; filename="`+name+fileExt[ct]+`"`)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "private, no-store")
	x.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = x.Write(data)
	}
	return nil
}
