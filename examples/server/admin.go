package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/snapshot"
)

// The admin listener (-admin-addr) serves operators, not API clients:
// POST /admin/backup answers a snapshot of the store (storage/snapshot),
// read in one View while the API goes on serving and written to a
// temporary file first, so that the View ends however slowly the client
// reads. It asks for no API key, so it is off
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

// Headers of a backup's answer: what it holds.
const (
	headerPairs  = "Corebank-Snapshot-Pairs"
	headerSHA256 = "Corebank-Snapshot-Sha256"
)

// backup writes a snapshot of the store, read in one View, to a
// temporary file (in TMPDIR, unlinked at once, so nothing stays behind),
// then answers it with its length, pair count and checksum. The View
// lasts as long as the local write, never as long as the client takes to
// read: on bolt a read transaction held open stalls every commit once the
// file must grow past bbolt's memory map (a remap waits for readers, and
// new readers wait for it), on PostgreSQL it holds back vacuum, and on
// memory it keeps old versions alive. An error before the answer starts
// is a 503 with Retry-After; once it streams, a failure cuts the
// connection, and the client has fewer bytes than Content-Length.
func (a *admin) backup(w http.ResponseWriter, r *http.Request) {
	if !a.backingUp.CompareAndSwap(false, true) {
		w.Header().Set("Retry-After", "10")
		adminError(w, http.StatusConflict, "conflict", "a backup is already running; one runs at a time")
		return
	}
	defer a.backingUp.Store(false)
	start := time.Now()
	unavailable := func(msg string, err error) {
		a.logger.Error("backup failed: "+msg, "err", err, "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "5")
		adminError(w, http.StatusServiceUnavailable, "unavailable", msg+": try again")
	}
	spool, err := os.CreateTemp("", "corebank-backup-*.cbsnap")
	if err != nil {
		unavailable("no temporary file to write the backup to (TMPDIR)", err)
		return
	}
	_ = os.Remove(spool.Name())
	defer spool.Close()
	info, err := snapshot.Write(r.Context(), a.db, spool)
	if err == nil {
		_, err = spool.Seek(0, io.SeekStart)
	}
	switch {
	case r.Context().Err() != nil:
		a.logger.Warn("backup abandoned: the client went away", "remote", r.RemoteAddr)
		return
	case err != nil:
		unavailable("the store could not be read, or the backup not written to TMPDIR", err)
		return
	}
	read := time.Since(start)
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="corebank-%s.cbsnap"`, info.Created.Format("20060102T150405Z")))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(headerPairs, strconv.FormatInt(info.Pairs, 10))
	h.Set(headerSHA256, info.SHA256)
	n, err := io.Copy(w, spool)
	if err != nil || n != info.Size {
		a.logger.Warn("backup not delivered whole", "err", err, "bytes", n, "of", info.Size, "remote", r.RemoteAddr)
		return
	}
	a.logger.Info("backup written", "pairs", info.Pairs, "buckets", len(info.Buckets), "bytes", info.Size, "sha256", info.SHA256,
		"read", read.Round(time.Millisecond).String(), "took", time.Since(start).Round(time.Millisecond).String(), "remote", r.RemoteAddr)
}
