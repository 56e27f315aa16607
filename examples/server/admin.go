package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/snapshot"
)

// The admin listener (-admin-addr) serves operators, not API clients:
// POST /admin/backup streams a snapshot of the store (storage/snapshot)
// while the API goes on serving. It asks for no API key, so it is off
// unless -admin-addr is given, and it listens only on a loopback address
// unless -admin-allow-remote says that something else (a firewall, an
// authenticating proxy) guards it. Off by default rather than on a fixed
// loopback port: a backup endpoint without a key is a surface an operator
// should ask for, and a fixed port would make the second server on a
// machine (a second node, a test) fail to start, as -metrics-addr would.

// checkAdmin checks -admin-addr and -admin-allow-remote: an address with
// no host or a non-loopback IP needs -admin-allow-remote. A host name is
// checked once it is bound (listenAdmin).
func (c *config) checkAdmin() error {
	if c.adminAddr == "" {
		if c.adminAllowRemote {
			return errors.New("-admin-allow-remote needs -admin-addr")
		}
		return nil
	}
	host, port, err := net.SplitHostPort(c.adminAddr)
	if err != nil {
		return fmt.Errorf("-admin-addr %q: want host:port, such as 127.0.0.1:9091", c.adminAddr)
	}
	if c.adminAllowRemote {
		return nil
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && !ip.IsLoopback() {
		return notLoopback(c.adminAddr, port)
	}
	return nil
}

// notLoopback is the refusal of an admin address beyond this machine.
func notLoopback(addr, port string) error {
	return fmt.Errorf("-admin-addr %s would listen beyond this machine, and the admin API (backups of the whole store) needs no API key: "+
		"give a loopback address such as 127.0.0.1:%s, or add -admin-allow-remote if a firewall or an authenticating proxy guards it (nothing was written)", addr, port)
}

// listenAdmin binds -admin-addr, or returns nil when it is not given.
// Without -admin-allow-remote, a host name that resolved beyond loopback
// is refused.
func listenAdmin(cfg *config) (net.Listener, error) {
	if cfg.adminAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.adminAddr)
	if err != nil {
		return nil, fmt.Errorf("-admin-addr: %w (nothing was written)", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !cfg.adminAllowRemote && (!ok || !tcp.IP.IsLoopback()) {
		ln.Close()
		_, port, _ := net.SplitHostPort(cfg.adminAddr)
		return nil, notLoopback(cfg.adminAddr+" ("+ln.Addr().String()+")", port)
	}
	return ln, nil
}

// admin is the admin listener's handler.
type admin struct {
	db     storage.Backend
	logger *slog.Logger
	// backingUp is set while a backup streams: one at a time, since each
	// holds a read transaction open for its whole length.
	backingUp atomic.Bool
}

// serveAdmin serves the admin API on ln until the returned server is
// closed. It has no write timeout: a backup of a large store takes as
// long as the client takes to read it.
func serveAdmin(ln net.Listener, db storage.Backend, logger *slog.Logger) *http.Server {
	a := &admin{db: db, logger: logger}
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(ln) }()
	return srv
}

// ServeHTTP routes the admin API: POST /admin/backup; anything else is a
// JSON 404 or 405 in the API's error form.
func (a *admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != "/admin/backup":
		adminError(w, http.StatusNotFound, "not_found", "the admin API has POST /admin/backup only")
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		adminError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST /admin/backup")
	default:
		a.backup(w, r)
	}
}

// adminError writes the API's error body.
func adminError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "code": code, "message": msg})
}

// Trailers of a backup's response, once it is whole.
const (
	trailerPairs  = "Corebank-Snapshot-Pairs"
	trailerSHA256 = "Corebank-Snapshot-Sha256"
)

// backup streams a snapshot of the store, read in one View, as the
// response body. An error before the first byte answers 503 with
// Retry-After; one after it cuts the connection, so that the client sees
// a failed transfer (and the partial file lacks its trailer, which every
// reader refuses).
func (a *admin) backup(w http.ResponseWriter, r *http.Request) {
	if !a.backingUp.CompareAndSwap(false, true) {
		w.Header().Set("Retry-After", "10")
		adminError(w, http.StatusConflict, "conflict", "a backup is already running; one runs at a time")
		return
	}
	defer a.backingUp.Store(false)
	start := time.Now()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="corebank-%s.cbsnap"`, start.UTC().Format("20060102T150405Z")))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Trailer", trailerPairs+", "+trailerSHA256)
	cw := &countingWriter{w: w}
	info, err := snapshot.Write(r.Context(), a.db, cw)
	switch {
	case err == nil:
		h.Set(trailerPairs, strconv.FormatInt(info.Pairs, 10))
		h.Set(trailerSHA256, info.SHA256)
		a.logger.Info("backup written", "pairs", info.Pairs, "buckets", len(info.Buckets), "bytes", info.Size,
			"sha256", info.SHA256, "took", time.Since(start).Round(time.Millisecond).String(), "remote", r.RemoteAddr)
	case r.Context().Err() != nil:
		a.logger.Warn("backup abandoned: the client went away", "bytes", cw.n, "remote", r.RemoteAddr)
	case cw.n == 0:
		a.logger.Error("backup failed before its first byte", "err", err, "remote", r.RemoteAddr)
		h.Del("Trailer")
		h.Del("Content-Disposition")
		h.Set("Retry-After", "5")
		adminError(w, http.StatusServiceUnavailable, "unavailable", "the store could not be read: try again")
	default:
		a.logger.Error("backup failed part way: connection cut", "err", err, "bytes", cw.n, "remote", r.RemoteAddr)
		panic(http.ErrAbortHandler)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
