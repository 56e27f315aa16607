package webhooks_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/webhooks"
)

func TestVerify(t *testing.T) {
	const secret = "whsec_test"
	now := time.UnixMilli(1700000000000)
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	body := []byte(`{"event":"accounts.created","data":{"id":"a"}}`)
	sig := webhooks.Sign(secret, ts, body)
	tests := []struct {
		name            string
		secret, ts, sig string
		body            []byte
		now             time.Time
		want            error
	}{
		{"OK", secret, ts, sig, body, now, nil},
		{"OKWithinTolerance", secret, ts, sig, body, now.Add(4 * time.Minute), nil},
		{"ErrInvalidSignatureBody", secret, ts, sig, []byte(`{}`), now, webhooks.ErrInvalidSignature},
		{"ErrInvalidSignatureSecret", "whsec_other", ts, sig, body, now, webhooks.ErrInvalidSignature},
		{"ErrInvalidSignatureHex", secret, ts, "zz", body, now, webhooks.ErrInvalidSignature},
		{"ErrInvalidSignatureUpper", secret, ts, sig[:10] + "Q" + sig[11:], body, now, webhooks.ErrInvalidSignature},
		{"ErrInvalidSignatureTimestampSwap", secret, strconv.FormatInt(now.UnixMilli()+1, 10), sig, body, now, webhooks.ErrInvalidSignature},
		{"ErrTimestampOutOfToleranceOld", secret, ts, sig, body, now.Add(6 * time.Minute), webhooks.ErrTimestampOutOfTolerance},
		{"ErrTimestampOutOfToleranceFuture", secret, ts, sig, body, now.Add(-6 * time.Minute), webhooks.ErrTimestampOutOfTolerance},
		{"ErrTimestampOutOfToleranceMalformed", secret, "yesterday", sig, body, now, webhooks.ErrTimestampOutOfTolerance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhooks.Verify(tt.secret, tt.ts, tt.sig, tt.body, 5*time.Minute, tt.now)
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr                string
		sandbox, production bool // allowed?
	}{
		{"93.184.216.34", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"127.0.0.1", true, false},
		{"::1", true, false},
		{"10.0.0.1", true, false},
		{"172.31.255.255", true, false},
		{"192.168.0.1", true, false},
		{"100.64.0.1", true, false},
		{"fc00::1", true, false},
		{"fd12::1", true, false},
		{"::ffff:10.0.0.1", true, false},
		{"64:ff9b::a00:1", true, false}, // NAT64 of 10.0.0.1
		{"2002:7f00:1::", true, false},  // 6to4 of 127.0.0.1
		{"169.254.169.254", false, false},
		{"fd00:ec2::254", false, false},
		{"169.254.1.1", false, false},
		{"fe80::1", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
		{"255.255.255.255", false, false},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.addr)
		if got := webhooks.CheckAddr(webhooks.EnvSandbox, ip) == nil; got != tt.sandbox {
			t.Errorf("sandbox %s allowed = %v, want %v", tt.addr, got, tt.sandbox)
		}
		if got := webhooks.CheckAddr(webhooks.EnvProduction, ip) == nil; got != tt.production {
			t.Errorf("production %s allowed = %v, want %v", tt.addr, got, tt.production)
		}
	}
}

// A receiver checks each delivery with Verify before acting on it, then
// deduplicates by the event ID.
func ExampleVerify() {
	secret := "whsec_example"
	body := []byte(`{"event":"outflows.completed","data":{"id":"01J0000000000000000000000A"}}`)
	timestamp := "1767323045000" // x-service-event-timestamp
	signature := webhooks.Sign(secret, timestamp, body)
	now := time.UnixMilli(1767323045000).Add(30 * time.Second)

	fmt.Println(webhooks.Verify(secret, timestamp, signature, body, 5*time.Minute, now))
	fmt.Println(webhooks.Verify("whsec_wrong", timestamp, signature, body, 5*time.Minute, now))
	fmt.Println(webhooks.Verify(secret, timestamp, signature, body, 5*time.Minute, now.Add(time.Hour)))
	// Output:
	// <nil>
	// invalid_signature: the webhook signature does not match
	// timestamp_out_of_tolerance: the webhook timestamp is outside the tolerance
}

// TestVerifier: a Verifier checks timestamps against its clock, so a
// delivery signed at a fake clock's time verifies with that clock and not
// with the wall clock.
func TestVerifier(t *testing.T) {
	const secret = "whsec_test"
	fake := clock.NewMock()
	fake.Set(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	body := []byte(`{"event":"test","data":{}}`)
	signedAt := func(at time.Time) http.Header {
		ts := strconv.FormatInt(at.UnixMilli(), 10)
		h := http.Header{}
		h.Set(webhooks.HeaderTimestamp, ts)
		h.Set(webhooks.HeaderSignature, webhooks.Sign(secret, ts, body))
		return h
	}
	tests := []struct {
		name string
		v    webhooks.Verifier
		h    http.Header
		want error
	}{
		{"FakeClock", webhooks.Verifier{Secret: secret, Clock: fake}, signedAt(fake.Now()), nil},
		{"FakeClockWithinDefault", webhooks.Verifier{Secret: secret, Clock: fake}, signedAt(fake.Now().Add(-4 * time.Minute)), nil},
		{"FakeClockPastDefault", webhooks.Verifier{Secret: secret, Clock: fake}, signedAt(fake.Now().Add(-6 * time.Minute)), webhooks.ErrTimestampOutOfTolerance},
		{"FakeClockOwnTolerance", webhooks.Verifier{Secret: secret, Clock: fake, Tolerance: time.Hour}, signedAt(fake.Now().Add(-59 * time.Minute)), nil},
		{"WallClockRefusesFakeTime", webhooks.Verifier{Secret: secret}, signedAt(fake.Now()), webhooks.ErrTimestampOutOfTolerance},
		{"WallClock", webhooks.Verifier{Secret: secret}, signedAt(time.Now()), nil},
		{"WrongSecret", webhooks.Verifier{Secret: "whsec_other", Clock: fake}, signedAt(fake.Now()), webhooks.ErrInvalidSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.v.VerifyRequest(tt.h, body); !errors.Is(err, tt.want) {
				t.Errorf("VerifyRequest: %v, want %v", err, tt.want)
			}
		})
	}
}
