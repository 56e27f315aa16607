package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// tlsPollInterval is how often the -tls-cert and -tls-key files are
// checked for a change.
const tlsPollInterval = 2 * time.Second

// checkTransport checks the TLS and proxy flags: -tls-cert and -tls-key
// go together and must name a readable certificate and its key;
// -trusted-proxies (the text given) needs -behind-proxy; and with -env
// production a non-loopback -addr needs TLS or -behind-proxy, so that API
// keys never cross a network in clear unless an operator says a proxy in
// front encrypts them.
func (c *config) checkTransport(fs *flag.FlagSet, trustedProxies string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case (c.tlsCertFile == "") != (c.tlsKeyFile == ""):
		return errors.New("-tls-cert and -tls-key go together: give both (the certificate chain and its private key, PEM) or neither")
	case c.tlsCertFile != "":
		r, err := newCertReloader(c.tlsCertFile, c.tlsKeyFile)
		if err != nil {
			return err
		}
		c.tls = r
	}
	if set["trusted-proxies"] && !c.behindProxy {
		return errors.New("-trusted-proxies needs -behind-proxy: without it X-Forwarded-For is never believed")
	}
	var err error
	if c.trustedProxies, err = parseTrustedProxies(trustedProxies); err != nil {
		return err
	}
	if c.env == "production" && c.tls == nil && !c.behindProxy && !loopbackAddr(c.addr) {
		return fmt.Errorf("-env production: -addr %s is not a loopback address, and without TLS API keys would cross the network in clear; "+
			"give -tls-cert and -tls-key, or -behind-proxy when a proxy in front terminates TLS (or listen on 127.0.0.1)", c.addr)
	}
	return nil
}

// loopbackAddr reports whether the listen address addr takes connections
// from this machine only: localhost or a loopback IP. An address that does
// not parse is left to net.Listen to refuse, with its own message.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// scheme is the URL scheme the server answers on: https with -tls-cert.
func (c *config) scheme() string {
	if c.tls != nil {
		return "https"
	}
	return "http"
}

// serveOn serves srv on ln: over TLS (srv.TLSConfig) when the server has
// a certificate, which ServeTLS also offers HTTP/2 over.
func (c *config) serveOn(srv *http.Server, ln net.Listener) error {
	if c.tls != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// certReloader holds the certificate the server presents and replaces it
// when its files change or on SIGHUP. A handshake reads the current one
// (GetCertificate), so a reload affects new connections only: open ones,
// keep-alive included, go on undisturbed.
type certReloader struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]

	mu   sync.Mutex     // one reload at a time; guards seen
	seen [2]os.FileInfo // the files as they were before the last load
}

// newCertReloader loads the pair; an error names the file that cannot be
// read or says that the two do not make a pair.
func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

// load reads the pair and makes it current, or returns why it cannot and
// keeps the one it has. The files are looked at before they are read, so
// a change made while they are read is seen again at the next poll.
func (r *certReloader) load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = r.stat()
	certPEM, err := os.ReadFile(r.certFile)
	if err != nil {
		return fmt.Errorf("-tls-cert: %w", err)
	}
	keyPEM, err := os.ReadFile(r.keyFile)
	if err != nil {
		return fmt.Errorf("-tls-key: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("-tls-cert %s and -tls-key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cur.Store(&pair)
	return nil
}

// stat is the two files as they are now (nil for one that cannot be
// seen).
func (r *certReloader) stat() [2]os.FileInfo {
	var fi [2]os.FileInfo
	for i, name := range []string{r.certFile, r.keyFile} {
		fi[i], _ = os.Stat(name)
	}
	return fi
}

// changed reports whether either file differs from what the last load
// saw: another file in its place, another size or modification time, or
// appearing or going away.
func (r *certReloader) changed() bool {
	now := r.stat()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range now {
		a, b := r.seen[i], now[i]
		if (a == nil) != (b == nil) {
			return true
		}
		if a != nil && (!os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime())) {
			return true
		}
	}
	return false
}

// serverConfig is the server's TLS configuration: TLS 1.2 and up, Go's
// default cipher suites, the current certificate at every handshake.
func (r *certReloader) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return r.cur.Load(), nil
		},
	}
}

// watch reloads the pair on SIGHUP and when the files change (polled
// every tlsPollInterval) until ctx ends. Each attempt is logged: a
// reload names the new certificate; a failed one, the error, and the
// old certificate stays. The SIGHUP handler is installed before watch
// returns, so a SIGHUP sent after the server says it listens never stops
// it.
func (r *certReloader) watch(ctx context.Context, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	r.logCurrent(logger, "tls certificate loaded")
	go func() {
		defer signal.Stop(hup)
		tick := time.NewTicker(tlsPollInterval)
		defer tick.Stop()
		for {
			var why string
			select {
			case <-ctx.Done():
				return
			case <-hup:
				why = "SIGHUP"
			case <-tick.C:
				if !r.changed() {
					continue
				}
				why = "files changed"
			}
			if err := r.load(); err != nil {
				logger.Error("tls certificate reload failed; still serving the previous certificate",
					"reason", why, "error", err.Error())
				continue
			}
			r.logCurrent(logger, "tls certificate reloaded", "reason", why)
		}
	}()
}

// logCurrent logs msg with what names the current certificate: its
// subject, serial number and expiry (never the key), and warns when it
// has expired.
func (r *certReloader) logCurrent(logger *slog.Logger, msg string, args ...any) {
	leaf := r.cur.Load().Leaf // set by tls.X509KeyPair
	if leaf == nil {
		logger.Info(msg, args...)
		return
	}
	args = append(args, "subject", leaf.Subject.String(), "serial", leaf.SerialNumber.String(),
		"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	logger.Info(msg, args...)
	if time.Now().After(leaf.NotAfter) {
		logger.Warn("the tls certificate has expired: clients will refuse it", "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}
