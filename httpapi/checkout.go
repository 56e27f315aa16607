package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"html/template"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
)

// The sandbox checkout page (funding.SessionService.Checkout): the page an
// open-banking or crypto session's checkout_url opens, a mock bank consent
// or a mock invoice. The token in its path is the capability, so it needs
// no key. Everything it shows goes through html/template; it loads nothing
// from elsewhere and runs no script (checkoutCSP).

//go:embed checkout.html
var checkoutHTML string

var checkoutPage = template.Must(template.New("checkout").Funcs(template.FuncMap{
	"amount": checkoutAmount,
	"time":   func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04 UTC") },
}).Parse(checkoutHTML))

// checkoutStyle is the page's one <style> element; the policy allows it by
// its hash, and nothing else.
var checkoutStyle = styleHash(checkoutHTML)

// styleHash is the CSP source of a page's one <style> element.
func styleHash(page string) string {
	_, rest, _ := strings.Cut(page, "<style>")
	css, _, _ := strings.Cut(rest, "</style>")
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// checkoutFailureCodes are the codes the reject button offers, SPEC.md's
// list, the usual one first.
var checkoutFailureCodes = []string{funding.FailurePaymentRejected, funding.FailurePaymentBlocked,
	funding.FailureInsufficientFunds, funding.FailureInstitutionUnavailable,
	funding.FailureInstitutionNotSupported, funding.FailureProviderError,
	funding.FailurePaymentCancelled, funding.FailureSessionExpired}

var errCheckoutForged = corebank.E(corebank.KindForbidden, "forbidden",
	"this form did not come from this checkout page, or the page is too old: open the page again")

// checkoutNonceTTL is how long a rendered page's form stays good.
const checkoutNonceTTL = 24 * time.Hour

type checkoutView struct {
	Title   string
	Status  int
	Message string   // an error page's explanation
	Fields  []string // an error page's field problems
	S       *funding.Session
	Open    bool   // the session awaits the payer: the form is shown
	Nonce   string // the form's anti-forgery value
	Back    string // where "back" leads: the redirect with the outcome
	Codes   []string
}

// checkoutPageGet serves the page: the session awaiting its payer gets the
// form (Approve, Reject with a code, Cancel); any other status is shown
// with a link back to redirect_url. The page's routes answer HTML and
// read a form, for the payer's browser rather than an API key's holder, so
// they are not built from an adapter (helpers.go).
func (h *handler) checkoutPageGet(x *exchange, r *http.Request) error {
	token := r.PathValue("token")
	s, err := h.sessions.CheckoutSession(r.Context(), token)
	if err != nil {
		return h.checkoutError(x, r, nil, err)
	}
	v := &checkoutView{S: s, Status: http.StatusOK, Codes: checkoutFailureCodes}
	switch {
	case s.FundingType == funding.Crypto:
		v.Title = "Sandbox invoice"
	default:
		v.Title = "Sandbox Bank: approve a payment"
	}
	if s.Status == funding.SessionAwaitingUser {
		v.Open = true
		v.Nonce = h.checkoutNonce(token, h.clock.Now())
	} else {
		v.Back = checkoutRedirect(s)
	}
	h.renderCheckout(x, v)
	return nil
}

// checkoutPagePost applies the payer's choice (form fields choice:
// approve, reject or cancel; failure_code with reject; nonce from the
// page) and answers 303 to redirect_url with funding_session_id, status
// and, for a failure, failure_code added to its query. A form that is not
// from this server's page (a cross-site Origin or Sec-Fetch-Site, or no
// valid nonce) is refused with 403 and changes nothing.
func (h *handler) checkoutPagePost(x *exchange, r *http.Request) error {
	token := r.PathValue("token")
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	form, err := url.ParseQuery(string(x.body))
	if mt != "application/x-www-form-urlencoded" || err != nil {
		return h.checkoutError(x, r, nil, corebank.InvalidField("body", "must be the page's form (application/x-www-form-urlencoded)"))
	}
	if !sameOrigin(r) || !h.checkNonce(token, form.Get("nonce"), h.clock.Now()) {
		if _, err := h.sessions.CheckoutSession(r.Context(), token); err != nil {
			return h.checkoutError(x, r, nil, err) // an unknown token is 404 whatever the form
		}
		return h.checkoutError(x, r, nil, errCheckoutForged)
	}
	var outcome, code string
	switch form.Get("choice") {
	case "approve":
		outcome = funding.SessionSettled
	case "reject":
		outcome, code = funding.SessionFailed, form.Get("failure_code")
		if code == "" {
			code = funding.FailurePaymentRejected
		}
	case "cancel":
		outcome, code = funding.SessionCancelled, funding.FailurePaymentCancelled
	default:
		return h.checkoutError(x, r, nil, corebank.InvalidField("choice", "must be approve, reject or cancel"))
	}
	s, err := h.sessions.Checkout(r.Context(), token, outcome, code)
	if err != nil {
		if errors.Is(err, funding.ErrSessionInvalidForState) {
			s, _ = h.sessions.CheckoutSession(r.Context(), token)
		}
		return h.checkoutError(x, r, s, err)
	}
	x.Header().Set("Location", checkoutRedirect(s))
	x.Header().Set("Referrer-Policy", "no-referrer")
	x.Header().Set("Cache-Control", "no-store")
	x.WriteHeader(http.StatusSeeOther)
	return nil
}

// checkoutError answers err as an HTML page with its status: an unknown
// token is a plain 404, a state that does not allow the move shows the
// session's status with a link back. An error that is not a
// *corebank.Error goes to writeError (logged, a sanitised 500).
func (h *handler) checkoutError(x *exchange, r *http.Request, s *funding.Session, err error) error {
	var ce *corebank.Error
	if !errors.As(err, &ce) || statusOf(ce.Kind) >= 500 && ce.Kind != corebank.KindUnavailable {
		return err
	}
	v := &checkoutView{Status: statusOf(ce.Kind), Title: "Checkout", Message: ce.Message}
	if errors.Is(err, funding.ErrSessionNotFound) {
		v.Title, v.Message = "Not found", "There is no checkout at this address."
	}
	if len(ce.Fields) > 1 { // one is in the message already
		for _, f := range slices.Sorted(maps.Keys(ce.Fields)) {
			v.Fields = append(v.Fields, f+": "+ce.Fields[f])
		}
	}
	if s != nil {
		v.S, v.Back = s, checkoutRedirect(s)
	}
	h.renderCheckout(x, v)
	return nil
}

func (h *handler) renderCheckout(x *exchange, v *checkoutView) {
	var buf bytes.Buffer
	if err := checkoutPage.Execute(&buf, v); err != nil {
		panic("httpapi: checkout template: " + err.Error()) // a bug in checkout.html
	}
	redirect := ""
	if v.S != nil && v.S.RedirectURL != nil {
		redirect = *v.S.RedirectURL
	}
	writePage(x, v.Status, buf.Bytes(), checkoutStyle, redirect)
}

// writePage answers a sandbox HTML page (checkout, 3DS challenge) with its
// security headers: nothing loads from elsewhere, no script runs, only
// the page's own style applies, and its form posts only to itself and,
// through the 303 after it, to redirect's origin.
func writePage(x *exchange, status int, body []byte, style, redirect string) {
	formTo := "'self'"
	if o := redirectOrigin(redirect); o != "" {
		formTo += " " + o // the 303 after the form is a navigation form-action governs
	}
	hd := x.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src "+style+
		"; form-action "+formTo+"; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer") // the path is the capability
	hd.Set("Cache-Control", "no-store")
	x.WriteHeader(status)
	_, _ = x.Write(body)
}

var originHost = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]+)?$`)

// redirectOrigin is the origin of an http(s) redirect URL for the policy,
// or "" when its host has anything a source expression could not hold.
func redirectOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || !originHost.MatchString(u.Host) {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// checkoutRedirect is the session's redirect_url with the outcome in its
// query ("" without one).
func checkoutRedirect(s *funding.Session) string {
	if s.RedirectURL == nil {
		return ""
	}
	u, err := url.Parse(*s.RedirectURL)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("funding_session_id", s.ID)
	q.Set("status", s.Status)
	if s.Failure != nil {
		q.Set("failure_code", s.Failure.Code)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// sameOrigin refuses a form a browser says another site sent: the
// Sec-Fetch-Site and Origin headers of a cross-site post. A client that
// sends neither (curl) passes; the nonce still binds it to a rendered page.
// Origin "null" is what a browser sends from a page under
// Referrer-Policy no-referrer, this one's own; Sec-Fetch-Site still tells.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// checkoutNonce is the form's anti-forgery value, made per render and
// bound to the token: the time it was rendered and an HMAC of both under
// the server's cursor key.
func (h *handler) checkoutNonce(token string, now time.Time) string {
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	return ts + "." + h.nonceMAC(token, ts)
}

func (h *handler) nonceMAC(token, ts string) string {
	m := hmac.New(sha256.New, h.cursors.key)
	m.Write([]byte("checkout\x00" + token + "\x00" + ts))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkNonce reports whether nonce was made for token within
// checkoutNonceTTL of now.
func (h *handler) checkNonce(token, nonce string, now time.Time) bool {
	ts, mac, ok := strings.Cut(nonce, ".")
	ms, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || len(ts) > 20 {
		return false
	}
	if age := now.Sub(time.UnixMilli(ms)); age > checkoutNonceTTL || age < -checkoutNonceTTL {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(h.nonceMAC(token, ts)))
}

// checkoutAmount shows an amount in smallest units as a decimal with two
// places (every currency a checkout takes has two).
func checkoutAmount(units int64) string {
	sign := ""
	if units < 0 {
		sign, units = "-", -units
	}
	return sign + strconv.FormatInt(units/100, 10) + "." + strconv.FormatInt(units%100/10, 10) + strconv.FormatInt(units%10, 10)
}
