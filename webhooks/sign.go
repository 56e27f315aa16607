package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

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
