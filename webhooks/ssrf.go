package webhooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Environments accepted by Options.Env.
const (
	EnvSandbox    = "sandbox"
	EnvProduction = "production"
)

// AttemptTimeout bounds one delivery attempt: connect, TLS, request and
// response headers.
const AttemptTimeout = 10 * time.Second

// errForbiddenAddress is wrapped by every policy refusal.
var errForbiddenAddress = errors.New("webhook destination address is forbidden")

// Hosts that always name a cloud metadata service.
var metadataHosts = map[string]bool{
	"metadata.google.internal": true,
	"metadata.goog":            true,
	"metadata":                 true,
	"instance-data":            true,
}

var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"),
		netip.MustParseAddr("169.254.170.2"),
		netip.MustParseAddr("fd00:ec2::254"),
	}
	// Refused in every environment: nothing legitimate listens there.
	alwaysForbidden = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),       // "this network", unspecified
		netip.MustParsePrefix("169.254.0.0/16"),  // IPv4 link-local (metadata services)
		netip.MustParsePrefix("224.0.0.0/4"),     // IPv4 multicast
		netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
		netip.MustParsePrefix("::/128"),          // unspecified
		netip.MustParsePrefix("fe80::/10"),       // IPv6 link-local
		netip.MustParsePrefix("ff00::/8"),        // IPv6 multicast
		netip.MustParsePrefix("100::/64"),        // discard-only
		netip.MustParsePrefix("2001:db8::/32"),   // documentation
		netip.MustParsePrefix("192.0.2.0/24"),    // documentation TEST-NET-1
		netip.MustParsePrefix("198.51.100.0/24"), // documentation TEST-NET-2
		netip.MustParsePrefix("203.0.113.0/24"),  // documentation TEST-NET-3
	}
	// Refused in production only: sandbox allows them so that a receiver on
	// the same machine or network can be tested.
	productionForbidden = []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),    // loopback
		netip.MustParsePrefix("::1/128"),        // loopback
		netip.MustParsePrefix("10.0.0.0/8"),     // RFC 1918
		netip.MustParsePrefix("172.16.0.0/12"),  // RFC 1918
		netip.MustParsePrefix("192.168.0.0/16"), // RFC 1918
		netip.MustParsePrefix("100.64.0.0/10"),  // CGNAT
		netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
		netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
		netip.MustParsePrefix("fc00::/7"),       // unique local
		netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	}
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
	teredo = netip.MustParsePrefix("2001::/32")
)

// CheckAddr returns nil when env allows deliveries to ip, else an error
// saying why. Production refuses loopback, private (RFC 1918, fc00::/7),
// link-local, CGNAT, unspecified, multicast, reserved and cloud metadata
// addresses; sandbox allows loopback and private ranges but refuses the
// rest. IPv4 addresses embedded in IPv6 (mapped, NAT64, 6to4) are checked
// as IPv4.
func CheckAddr(env string, ip netip.Addr) error {
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", errForbiddenAddress)
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixTo4.Contains(ip):
			ip = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		case teredo.Contains(ip):
			// The client address is the last 4 bytes, inverted.
			ip = netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		}
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return fmt.Errorf("%w: %s is a cloud metadata address", errForbiddenAddress, ip)
		}
	}
	for _, p := range alwaysForbidden {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in %s", errForbiddenAddress, ip, p)
		}
	}
	if env == EnvSandbox {
		return nil
	}
	for _, p := range productionForbidden {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in %s", errForbiddenAddress, ip, p)
		}
	}
	return nil
}

// checkHostName refuses names that always mean a metadata service or, in
// production, the local machine.
func checkHostName(env, host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if metadataHosts[h] {
		return fmt.Errorf("%w: %s is a cloud metadata host", errForbiddenAddress, host)
	}
	if env != EnvSandbox && (h == "localhost" || strings.HasSuffix(h, ".localhost")) {
		return fmt.Errorf("%w: %s is the local machine", errForbiddenAddress, host)
	}
	return nil
}

// Resolver looks up a host's addresses; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dialControl enforces CheckAddr on the address actually being connected
// to, after DNS resolution, so that a name that resolved to a public address
// at registration cannot be rebound to an internal one.
func dialControl(env string) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return fmt.Errorf("%w: %v", errForbiddenAddress, err)
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%w: %v", errForbiddenAddress, err)
		}
		return CheckAddr(env, ip)
	}
}

// NewHTTPClient returns the client deliveries use by default: TLS 1.2 or
// newer trusting rootCAs (nil: the system roots; see CertPoolWithPEM), no
// proxy, redirects returned rather than followed (a redirect is a failed
// attempt), an AttemptTimeout per request, and a dialer that refuses every
// address CheckAddr refuses for env at connect time.
func NewHTTPClient(env string, rootCAs *x509.CertPool) *http.Client {
	return newHTTPClient(env, rootCAs, net.DefaultResolver)
}

func newHTTPClient(env string, rootCAs *x509.CertPool, r Resolver) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           guardedDialer(env, r),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   AttemptTimeout,
		ResponseHeaderTimeout: AttemptTimeout,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: rootCAs},
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       AttemptTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// guardedDialer resolves the host with r and connects to the first address
// that answers, each connection checked by CheckAddr in the dialer's
// Control hook: the check sees the address really dialled, after DNS.
func guardedDialer(env string, r Resolver) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: AttemptTimeout, KeepAlive: 30 * time.Second, Control: dialControl(env)}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if err := checkHostName(env, host); err != nil {
			return nil, err
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return d.DialContext(ctx, network, addr)
		}
		ips, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("no address for %s", host)
		}
		var first error
		for _, ip := range ips {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
			if err == nil {
				return c, nil
			}
			if first == nil {
				first = err
			}
		}
		return nil, first
	}
}

// CertPoolWithPEM returns the system roots plus every certificate in pemCerts
// (the server's -webhook-ca file), for NewHTTPClient and Options.RootCAs. It
// returns an error when pemCerts holds no certificate.
func CertPoolWithPEM(pemCerts []byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pemCerts) {
		return nil, errors.New("webhooks: no PEM certificate found in the CA file")
	}
	return pool, nil
}
