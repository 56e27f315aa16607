package httpapi

import (
	"context"
	"errors"
	"hash/maphash"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/ratelimit"
)

// Rate is a request rate for Limits: Count requests per Per on average,
// at most Burst at once (0: Count). The zero Rate limits nothing.
type Rate = ratelimit.Rate

// ParseRate reads a Rate as the server's -rate-limit flag takes it: "off"
// (the zero Rate), or N/s, N/m or N/h with an optional ",burst=B", like
// "100/s,burst=200" or "10/m,burst=20"; N and B run from 1 to 1,000,000.
// The error says what is wrong without naming a flag.
func ParseRate(s string) (Rate, error) { return ratelimit.Parse(s) }

// The limit_type of a 429 from Limits.
const (
	LimitTypeKey        = "api_key"        // Limits.Key
	LimitTypeAddress    = "client_address" // Limits.Address
	LimitTypeFailedAuth = "failed_auth"    // Limits.FailedAuth
)

// KnownKeyTTL is how long a client address goes on reaching the key
// lookup with a key that authenticated from it, while the address is
// over Limits.FailedAuth.
const KnownKeyTTL = time.Hour

// Limits are the rate limits of Options.Limits: token buckets kept in the
// process's memory, so each of several servers behind one load balancer
// allows the whole rate.
//
//   - Address limits each client address (Options.ClientAddr; IPv6
//     addresses by their /64, which one host commonly holds whole), on every
//     request but GET /healthz and /readyz, before the key is read.
//   - FailedAuth limits the requests with a key that no API key has, per
//     client address. A request with a key takes one of its tokens before
//     the lookup and gives it back when the key is found (or the store
//     fails), so failures are counted even when many come at once. Once the
//     address's bucket is empty, its requests with a key are answered 429
//     before any lookup, unless the key authenticated from that address in
//     the last KnownKeyTTL: keys cannot be tried at speed, and clients
//     already working from the same address go on. Requests without a key
//     are 401 and count only against Address.
//   - Key limits each API key, by its ID, after it authenticated.
//
// A refused request takes no token and is answered 429 rate_limited with
// a Retry-After header (whole seconds, rounded up, at least 1) and the
// body of card creation's limit: retry_after (the same seconds),
// limit_type (LimitTypeKey, LimitTypeAddress or LimitTypeFailedAuth),
// current_count (the bucket's tokens in use, which is its burst when it
// refuses) and limit (the burst), under details and at the top level.
//
// A zero Rate turns its limit off. Limits is safe for concurrent use and
// read once, by the first New given it: handlers given the same *Limits
// share its buckets (examples/server gives its workspaces the server's).
type Limits struct {
	Key        Rate
	Address    Rate
	FailedAuth Rate
	// Clock refills the buckets (default the real clock; not
	// Options.Clock, which a sandbox may stop).
	Clock clock.Clock
	// MaxKeys bounds the keys each limit holds at once (default
	// 100,000, about 10 MB each). Keys whose buckets are full again are
	// dropped as time passes; a flood of more new keys than this evicts
	// arbitrary ones, which start again with full buckets.
	MaxKeys int
	// OnLimited, when set, is called with the limit_type of every request
	// refused 429, on the request's goroutine (metrics). It must not
	// block.
	OnLimited func(limitType string)

	once sync.Once
	on   *limiters
}

// limiters are the buckets of one Limits.
type limiters struct {
	key, addr, failed *ratelimit.Limiter[string]
	known             *ratelimit.Recent[knownKey]
	seed              maphash.Seed
	onLimited         func(string)
	refusal           map[string]*corebank.Error // by limit type
}

// knownKey is a key that authenticated from addr: a hash of its secret,
// which never leaves the request.
type knownKey struct {
	addr   string
	secret uint64
}

// rateLimit is the Data of a 429 from Limits, the fields card creation's
// limit answers (cards.RateLimit).
type rateLimit struct {
	RetryAfter   int64  `json:"retry_after"`
	LimitType    string `json:"limit_type"`
	CurrentCount int    `json:"current_count"`
	Limit        int    `json:"limit"`
}

// build is the buckets of l, made once; nil when l is nil or limits
// nothing.
func (l *Limits) build() *limiters {
	if l == nil {
		return nil
	}
	l.once.Do(func() {
		if l.Key.Off() && l.Address.Off() && l.FailedAuth.Off() {
			return
		}
		opt := &ratelimit.Options{Clock: l.Clock, MaxKeys: l.MaxKeys}
		on := &limiters{
			key:       ratelimit.New[string](l.Key, opt),
			addr:      ratelimit.New[string](l.Address, opt),
			failed:    ratelimit.New[string](l.FailedAuth, opt),
			seed:      maphash.MakeSeed(),
			onLimited: l.OnLimited,
		}
		if on.failed != nil {
			on.known = ratelimit.NewRecent[knownKey](KnownKeyTTL, opt)
		}
		on.refusal = map[string]*corebank.Error{
			LimitTypeKey: corebank.E(corebank.KindRateLimited, codeRateLimited,
				"too many requests with this API key (the limit is "+on.key.Rate().String()+"): retry after retry_after seconds"),
			LimitTypeAddress: corebank.E(corebank.KindRateLimited, codeRateLimited,
				"too many requests from this client address (the limit is "+on.addr.Rate().String()+"): retry after retry_after seconds"),
			LimitTypeFailedAuth: corebank.E(corebank.KindRateLimited, codeRateLimited,
				"too many failed authentications from this client address (the limit is "+on.failed.Rate().String()+
					"): keys that have not authenticated from it lately are refused for retry_after seconds"),
		}
		l.on = on
	})
	return l.on
}

// refused is the 429 of a limit of type typ that answered res.
func (l *limiters) refused(typ string, res ratelimit.Result) error {
	if l.onLimited != nil {
		l.onLimited(typ)
	}
	secs := max(1, int64((res.RetryAfter+time.Second-1)/time.Second))
	return l.refusal[typ].WithData(&rateLimit{RetryAfter: secs, LimitType: typ, CurrentCount: res.Count, Limit: res.Limit})
}

// before takes a token from the bucket of the client address addr, for
// every request but the probes: a load balancer's health checks must tell
// whether the server is up, not whether its address is busy.
func (l *limiters) before(r *http.Request, addr string) error {
	if l.addr == nil || r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
		return nil
	}
	if res := l.addr.Allow(addr); !res.OK {
		return l.refused(LimitTypeAddress, res)
	}
	return nil
}

// after takes a token from the bucket of the authenticated key.
func (l *limiters) after(c corebank.Caller) error {
	if l.key == nil {
		return nil
	}
	if res := l.key.Allow(c.KeyID); !res.OK {
		return l.refused(LimitTypeKey, res)
	}
	return nil
}

// guardedLookup is lookup under Limits.FailedAuth for the client address
// addr (see Limits).
func (h *handler) guardedLookup(ctx context.Context, addr, secret string) (corebank.Caller, error) {
	l := h.limits
	if l.failed == nil {
		return h.lookup(ctx, secret)
	}
	kk := knownKey{addr: addr, secret: maphash.String(l.seed, secret)}
	if l.known.Refresh(kk) {
		c, err := h.lookup(ctx, secret)
		if errors.Is(err, errUnauthorized) { // a key revoked since: a failure like any
			l.failed.Allow(addr)
		}
		return c, err
	}
	if res := l.failed.Allow(addr); !res.OK {
		return corebank.Caller{}, l.refused(LimitTypeFailedAuth, res)
	}
	c, err := h.lookup(ctx, secret)
	switch {
	case err == nil:
		l.failed.Return(addr)
		l.known.Add(kk)
	case !errors.Is(err, errUnauthorized): // the store failed, not the caller
		l.failed.Return(addr)
	}
	return c, err
}

// limitAddr is the bucket key of a client address: an IPv6 address's /64
// network (a host commonly holds a whole /64), anything else as given.
func limitAddr(addr string) string {
	if strings.IndexByte(addr, ':') < 0 {
		return addr
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil || !ip.Is6() || ip.Is4In6() {
		return addr
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}
