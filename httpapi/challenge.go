package httpapi

import (
	"bytes"
	_ "embed"
	"errors"
	"html/template"
	"mime"
	"net/http"
	"net/url"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
)

// The sandbox 3DS challenge page (acquiring.Service.AuthenticateAction): the
// page an intent action's next_action.url opens, a mock issuer asking the
// cardholder for a password, like Adyen's test cards. The token in its
// path is the capability, so it needs no key; it is built like the
// checkout page (checkout.go): html/template, no script, one hashed
// style, a nonce bound to the token.

//go:embed challenge.html
var challengeHTML string

var challengePage = template.Must(template.New("challenge").Funcs(template.FuncMap{
	"amount": checkoutAmount,
}).Parse(challengeHTML))

var challengeStyle = styleHash(challengeHTML)

// challengePassword is the sandbox issuer's one password.
const challengePassword = "password"

type challengeView struct {
	Title   string
	Status  int
	Message string
	A       *acquiring.Action
	Open    bool
	Nonce   string
	Back    string
}

// challengePageGet serves the page: an action awaiting the cardholder
// gets the form; any other status is shown with a link back to
// return_url. Like the checkout page's, these routes answer HTML and
// read a form, not an adapter's JSON (helpers.go).
func (h *handler) challengePageGet(x *exchange, r *http.Request) error {
	token := r.PathValue("token")
	a, err := h.acq.ChallengeAction(r.Context(), token)
	if err != nil {
		return h.challengeError(x, nil, err)
	}
	v := &challengeView{A: a, Status: http.StatusOK, Title: "Sandbox Issuer: confirm it is you"}
	if a.Status == acquiring.ActionPendingUserAction {
		v.Open, v.Nonce = true, h.checkoutNonce(token, h.clock.Now())
	} else {
		v.Back = challengeRedirect(a)
	}
	h.renderChallenge(x, v)
	return nil
}

// challengePagePost applies the cardholder's answer (form fields choice:
// complete or fail; password; nonce from the page): complete with the
// password authenticates, anything else fails authentication. It answers
// 303 to return_url with payment_intent_id and status in its query. A
// form not from this page (cross-site, or no valid nonce) is 403 and
// changes nothing.
func (h *handler) challengePagePost(x *exchange, r *http.Request) error {
	token := r.PathValue("token")
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	form, err := url.ParseQuery(string(x.body))
	if mt != "application/x-www-form-urlencoded" || err != nil {
		return h.challengeError(x, nil, corebank.InvalidField("body", "must be the page's form (application/x-www-form-urlencoded)"))
	}
	if !sameOrigin(r) || !h.checkNonce(token, form.Get("nonce"), h.clock.Now()) {
		if _, err := h.acq.ChallengeAction(r.Context(), token); err != nil {
			return h.challengeError(x, nil, err)
		}
		return h.challengeError(x, nil, errCheckoutForged)
	}
	var passed bool
	switch form.Get("choice") {
	case "complete":
		passed = form.Get("password") == challengePassword
	case "fail":
	default:
		return h.challengeError(x, nil, corebank.InvalidField("choice", "must be complete or fail"))
	}
	a, err := h.acq.AuthenticateAction(r.Context(), token, passed)
	if err != nil {
		if errors.Is(err, acquiring.ErrInvalidForState) {
			a, _ = h.acq.ChallengeAction(r.Context(), token)
		}
		return h.challengeError(x, a, err)
	}
	back := challengeRedirect(a)
	if back == "" { // no return_url (3ds_disabled, always-challenge card): show the outcome
		h.renderChallenge(x, &challengeView{A: a, Status: http.StatusOK, Title: "Authentication " + a.Status})
		return nil
	}
	x.Header().Set("Location", back)
	x.Header().Set("Referrer-Policy", "no-referrer")
	x.Header().Set("Cache-Control", "no-store")
	x.WriteHeader(http.StatusSeeOther)
	return nil
}

// challengeError answers err as an HTML page with its status (see
// checkoutError).
func (h *handler) challengeError(x *exchange, a *acquiring.Action, err error) error {
	var ce *corebank.Error
	if !errors.As(err, &ce) || statusOf(ce.Kind) >= 500 && ce.Kind != corebank.KindUnavailable {
		return err
	}
	v := &challengeView{Status: statusOf(ce.Kind), Title: "3-D Secure", Message: ce.Message}
	if errors.Is(err, acquiring.ErrActionNotFound) {
		v.Title, v.Message = "Not found", "There is no authentication at this address."
	}
	if a != nil {
		v.A, v.Back = a, challengeRedirect(a)
	}
	h.renderChallenge(x, v)
	return nil
}

func (h *handler) renderChallenge(x *exchange, v *challengeView) {
	var buf bytes.Buffer
	if err := challengePage.Execute(&buf, v); err != nil {
		panic("httpapi: challenge template: " + err.Error()) // a bug in challenge.html
	}
	redirect := ""
	if v.A != nil && v.A.ReturnURL != nil {
		redirect = *v.A.ReturnURL
	}
	writePage(x, v.Status, buf.Bytes(), challengeStyle, redirect)
}

// challengeRedirect is the action's return_url with payment_intent_id and
// status (the action's) in its query; "" without one.
func challengeRedirect(a *acquiring.Action) string {
	if a.ReturnURL == nil {
		return ""
	}
	u, err := url.Parse(*a.ReturnURL)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("payment_intent_id", a.PaymentIntentID)
	q.Set("status", a.Status)
	u.RawQuery = q.Encode()
	return u.String()
}
