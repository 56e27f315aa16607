package main

import (
	"io"
	"net/http/httptest"
	"testing"
)

// TestClientAddr checks who clientAddr names for each peer, header and
// -trusted-proxies: the rightmost untrusted X-Forwarded-For address when
// the peer is a trusted proxy, else the peer.
func TestClientAddr(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string // flags besides -db
		peer    string   // RemoteAddr
		xff     []string // X-Forwarded-For header lines
		want    string
		wantErr string
	}{
		{name: "NoProxyPeer", peer: "203.0.113.9:5555", want: "203.0.113.9"},
		{name: "NoProxyIgnoresHeader", peer: "127.0.0.1:5555", xff: []string{"198.51.100.1"}, want: "127.0.0.1"},
		{name: "TrustedPeer", args: []string{"-behind-proxy"}, peer: "127.0.0.1:5555", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "UntrustedPeerIgnoresHeader", args: []string{"-behind-proxy"}, peer: "192.0.2.50:5555", xff: []string{"198.51.100.1"}, want: "192.0.2.50"},
		{name: "RightmostUntrusted", args: []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/8,127.0.0.1"},
			peer: "127.0.0.1:1", xff: []string{"6.6.6.6, 198.51.100.1, 10.1.2.3"}, want: "198.51.100.1"},
		{name: "SpoofedLeftIgnored", args: []string{"-behind-proxy"}, peer: "127.0.0.1:1",
			xff: []string{"127.0.0.1, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "SeveralHeaderLines", args: []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/8,127.0.0.1"},
			peer: "127.0.0.1:1", xff: []string{"198.51.100.1", "10.0.0.7"}, want: "198.51.100.1"},
		{name: "AllTrustedLeftmost", args: []string{"-behind-proxy"}, peer: "127.0.0.1:1", xff: []string{"127.0.0.5, 127.0.0.6"}, want: "127.0.0.5"},
		{name: "NoHeader", args: []string{"-behind-proxy"}, peer: "127.0.0.1:1", want: "127.0.0.1"},
		{name: "EmptyEntriesSkipped", args: []string{"-behind-proxy"}, peer: "127.0.0.1:1", xff: []string{" , 198.51.100.1 ,, "}, want: "198.51.100.1"},
		{name: "GarbageStopsAtLastHop", args: []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/8,127.0.0.1"},
			peer: "127.0.0.1:1", xff: []string{"198.51.100.1, unknown, 10.0.0.7"}, want: "10.0.0.7"},
		{name: "GarbageOnly", args: []string{"-behind-proxy"}, peer: "127.0.0.1:1", xff: []string{"<script>"}, want: "127.0.0.1"},
		{name: "EntryWithPort", args: []string{"-behind-proxy"}, peer: "127.0.0.1:1", xff: []string{"198.51.100.1:4711"}, want: "198.51.100.1"},
		{name: "IPv6Entries", args: []string{"-behind-proxy"}, peer: "[::1]:1", xff: []string{"[2001:db8::1]:80, 2001:DB8:0:0::2"}, want: "2001:db8::2"},
		{name: "IPv6Bracketed", args: []string{"-behind-proxy"}, peer: "[::1]:1", xff: []string{"[2001:db8::1]"}, want: "2001:db8::1"},
		{name: "MappedPeerAndEntry", args: []string{"-behind-proxy"}, peer: "[::ffff:127.0.0.1]:1", xff: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1"},
		{name: "ZoneDropped", peer: "[fe80::1%eth0]:1", want: "fe80::1"},
		{name: "TrustedSingleIPv6", args: []string{"-behind-proxy", "-trusted-proxies", "2001:db8::5"}, peer: "[2001:db8::5]:1", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "DefaultNotTrustingOthers", args: []string{"-behind-proxy"}, peer: "10.0.0.1:1", xff: []string{"198.51.100.1"}, want: "10.0.0.1"},
		{name: "ErrTrustedWithoutBehindProxy", args: []string{"-trusted-proxies", "10.0.0.0/8"}, wantErr: "-trusted-proxies needs -behind-proxy"},
		{name: "ErrTrustedNotAnAddress", args: []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/8,proxy.internal"}, wantErr: `-trusted-proxies: "proxy.internal" is neither`},
		{name: "ErrTrustedBadPrefix", args: []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/33"}, wantErr: `-trusted-proxies: "10.0.0.0/33"`},
		{name: "ErrTrustedEmpty", args: []string{"-behind-proxy", "-trusted-proxies", " , "}, wantErr: "-trusted-proxies names no proxy"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := parsed(t, append([]string{"-db", "x.db"}, tt.args...), tt.wantErr)
			if !ok {
				return
			}
			r := httptest.NewRequest("GET", "/healthz", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := c.clientAddr(r); got != tt.want {
				t.Errorf("clientAddr = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLoopbackAddr checks which -addr values production lets serve
// plain HTTP.
func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.1.2.3:0": true, "[::1]:8080": true, "localhost:8080": true,
		"LOCALHOST:1": true, "[::ffff:127.0.0.1]:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "10.0.0.1:8080": false,
		"api.example.com:443": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

// BenchmarkClientAddr measures naming the client of one request: the
// direct peer, and behind a trusted proxy through a three-hop
// X-Forwarded-For (what a per-address limit pays per request).
func BenchmarkClientAddr(b *testing.B) {
	for _, bc := range []struct {
		name string
		args []string
		xff  string
	}{
		{"Peer", nil, ""},
		{"BehindProxy", []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/8,127.0.0.1"}, "198.51.100.1, 10.0.0.2, 10.0.0.3"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := parseFlags(append([]string{"-db", "x.db"}, bc.args...), io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/healthz", nil)
			r.RemoteAddr = "127.0.0.1:40000"
			if bc.xff != "" {
				r.Header.Set("X-Forwarded-For", bc.xff)
			}
			b.ReportAllocs()
			for b.Loop() {
				if c.clientAddr(r) == "" {
					b.Fatal("no client")
				}
			}
		})
	}
}
