package main

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// defaultTrustedProxies is -trusted-proxies' default: a proxy on this
// machine only.
const defaultTrustedProxies = "127.0.0.0/8,::1"

// clientAddr names the client of r: the one answer, in the whole server,
// to "who is calling", for the request log line (httpapi
// Options.ClientAddr) and for anything counted per client address (rate
// limits).
//
// Without -behind-proxy it is the direct peer's IP: X-Forwarded-For is
// ignored, since anyone can send it. With -behind-proxy, when the peer is
// one of -trusted-proxies, the X-Forwarded-For entries (every header line,
// in order) are read from the right, each appended by the hop before; the
// client is the first of them that is not itself a trusted proxy (the
// rightmost untrusted address), or the leftmost when all are trusted. An
// entry that is not an IP address (with or without a port) ends the walk
// at the hop that wrote it, so a forged or garbled header never names an
// address a trusted proxy did not see. When the peer is not trusted, the
// header is ignored and the peer is the client.
//
// The result is canonical, so one client always gives one string: an IP
// as netip.Addr.String writes it (IPv4 dotted even when it came
// IPv4-mapped, IPv6 compressed), without port or zone. Only a RemoteAddr
// that is not IP:port (never the case from net/http's server) is returned
// as it is.
func (c *config) clientAddr(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			return host
		}
		return r.RemoteAddr
	}
	client := canonicalAddr(peer.Addr())
	if !c.behindProxy || !c.trustedProxy(client) {
		return client.String()
	}
	values := r.Header["X-Forwarded-For"]
	for i := len(values) - 1; i >= 0; i-- {
		for v := values[i]; v != ""; {
			j := strings.LastIndexByte(v, ',')
			entry := strings.TrimSpace(v[j+1:])
			v = v[:max(j, 0)]
			if entry == "" {
				continue
			}
			a, ok := parseForwardedAddr(entry)
			if !ok {
				return client.String()
			}
			client = a
			if !c.trustedProxy(a) {
				return client.String()
			}
		}
	}
	return client.String()
}

// trustedProxy reports whether a (canonical) is in -trusted-proxies.
func (c *config) trustedProxy(a netip.Addr) bool {
	for _, p := range c.trustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseForwardedAddr parses one X-Forwarded-For entry: an IP address,
// an IP:port, or a bracketed IPv6 address with or without a port.
func parseForwardedAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return canonicalAddr(a), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return canonicalAddr(ap.Addr()), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return canonicalAddr(a), true
		}
	}
	return netip.Addr{}, false
}

// canonicalAddr is a without zone, and IPv4 when it is IPv4-mapped IPv6.
func canonicalAddr(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

// parseTrustedProxies parses -trusted-proxies: IP addresses and CIDR
// prefixes, comma separated.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if a, err := netip.ParseAddr(part); err == nil {
			a = canonicalAddr(a)
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("-trusted-proxies: %q is neither an IP address nor a CIDR prefix (like 10.0.0.0/8 or fd00::/8)", part)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-trusted-proxies names no proxy: give the addresses or CIDR prefixes of the proxies in front (default %s)", defaultTrustedProxies)
	}
	return out, nil
}
