package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"
)

// DefaultTolerance is how far a delivery's timestamp may lie from the
// receiver's clock when a Verifier gives no Tolerance.
const DefaultTolerance = 5 * time.Minute

// Sign returns the x-service-event-signature value for body sent with
// timestamp (Unix milliseconds as decimal text): the lowercase hex
// HMAC-SHA256 of "{timestamp}.{body}" keyed with the whole secret string,
// "whsec_" prefix included.
func Sign(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a delivery on the receiving side. timestamp and signature
// are the x-service-event-timestamp and x-service-event-signature headers,
// body the raw request body as received. It returns
// ErrTimestampOutOfTolerance when timestamp is not Unix milliseconds or lies
// more than tolerance before or after now (a replayed or forged delivery;
// tolerance <= 0 disables this check, which is unwise), and
// ErrInvalidSignature when the signature is not the HMAC of
// "{timestamp}.{body}" under secret. The comparison is constant-time.
func Verify(secret, timestamp, signature string, body []byte, tolerance time.Duration, now time.Time) error {
	ms, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrTimestampOutOfTolerance.With("the timestamp is not Unix milliseconds")
	}
	if tolerance > 0 {
		d := now.Sub(time.UnixMilli(ms))
		if d > tolerance || d < -tolerance {
			return ErrTimestampOutOfTolerance
		}
	}
	got, err := hex.DecodeString(signature)
	if err != nil || len(got) != sha256.Size {
		return ErrInvalidSignature
	}
	want, _ := hex.DecodeString(Sign(secret, timestamp, body))
	if !hmac.Equal(got, want) {
		return ErrInvalidSignature
	}
	return nil
}

// Verifier checks deliveries against a clock: the real clock when Clock is
// nil, which is what a bank signs with by default (webhooks.Options.
// SignClock), fake clock or not; another Clock for a bank given another
// SignClock. The zero Tolerance is DefaultTolerance.
//
//	v := webhooks.Verifier{Secret: hook.Secret, Clock: bankClock}
//	err := v.VerifyRequest(r.Header, body)
type Verifier struct {
	Secret    string
	Tolerance time.Duration
	Clock     clock.Clock
}

// Verify is the package's Verify with v's secret, tolerance and clock.
func (v Verifier) Verify(timestamp, signature string, body []byte) error {
	tol := v.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	now := time.Now()
	if v.Clock != nil {
		now = v.Clock.Now()
	}
	return Verify(v.Secret, timestamp, signature, body, tol, now)
}

// VerifyRequest is Verify with the timestamp and signature read from a
// delivery's headers; body is the request body as received.
func (v Verifier) VerifyRequest(h http.Header, body []byte) error {
	return v.Verify(h.Get(HeaderTimestamp), h.Get(HeaderSignature), body)
}
