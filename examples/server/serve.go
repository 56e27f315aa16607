package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/bank/workspace"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/webhooks"
)

// openStore opens the configured backend and the key that seals its secrets.
// A bbolt file whose key file has gone missing is refused: a new key would
// silently make every sealed secret in it unreadable.
func openStore(ctx context.Context, cfg *config) (storage.Backend, []byte, error) {
	if cfg.dsn != "" {
		return openPostgres(ctx, cfg)
	}
	if cfg.memory {
		key, err := loadSecretKey(cfg.secretKeyFile)
		if err != nil {
			return nil, nil, err
		}
		return memory.New(), key, nil
	}
	if err := checkKeyPlace(cfg); err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(cfg.dbPath); err == nil && os.Getenv("COREBANK_SECRET_KEY") == "" {
		if _, err := os.Stat(cfg.secretKeyFile); errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s exists but its secret key file %s does not; restore the key file or set COREBANK_SECRET_KEY", cfg.dbPath, cfg.secretKeyFile)
		}
	}
	key, err := loadSecretKey(cfg.secretKeyFile)
	if err != nil {
		return nil, nil, err
	}
	db, err := bolt.Open(cfg.dbPath, nil)
	if err != nil {
		return nil, nil, err
	}
	return db, key, nil
}

// openPostgres opens the PostgreSQL store and its key. A key file that
// does not exist is created only for an empty store: over a store other
// servers have written, a new key would make their sealed secrets
// unreadable.
func openPostgres(ctx context.Context, cfg *config) (storage.Backend, []byte, error) {
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := postgres.Open(octx, cfg.dsn, &postgres.Options{
		PoolSize:         cfg.dbPool,
		StatementTimeout: cfg.dbStatementTimeout,
		Retries:          cmp.Or(cfg.dbRetries, -1), // the flag's 0 is none, the option's is the default
	})
	if err != nil {
		return nil, nil, err
	}
	if os.Getenv("COREBANK_SECRET_KEY") == "" {
		if _, err := os.Stat(cfg.secretKeyFile); errors.Is(err, os.ErrNotExist) {
			empty, err := db.Empty(octx)
			if err == nil && !empty {
				err = fmt.Errorf("the PostgreSQL store holds data but the secret key file %s does not exist; "+
					"copy the key file of the servers already on this database, or set COREBANK_SECRET_KEY", cfg.secretKeyFile)
			}
			if err != nil {
				db.Close()
				return nil, nil, err
			}
		}
	}
	key, err := loadSecretKey(cfg.secretKeyFile)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, key, nil
}

// serve runs the server until ctx is done. It binds its listeners before
// it opens the store: a taken port fails the start with nothing written
// (no store file, no key file, no root entity, no bootstrap file).
func serve(ctx context.Context, cfg *config, logger *slog.Logger, stdout, stderr io.Writer) error {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("-addr: %w (nothing was written)", err)
	}
	defer ln.Close()
	var (
		m   *metrics
		mln net.Listener
	)
	if cfg.metricsAddr != "" {
		if mln, err = net.Listen("tcp", cfg.metricsAddr); err != nil {
			return fmt.Errorf("-metrics-addr: %w (nothing was written)", err)
		}
		defer mln.Close()
		m = newMetrics()
	}
	aln, err := listenAdmin(cfg) // nil without -admin-addr
	if err != nil {
		return err
	}
	if aln != nil {
		defer aln.Close()
	}

	db, key, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if pg, ok := db.(*postgres.DB); ok && m != nil {
		m.postgres(pg)
	}

	var (
		clk  clock.Clock = clock.New()
		mock *clock.Mock
	)
	if cfg.fakeClock {
		mock = clock.NewMock()
		mock.Set(cfg.clockStart)
		clk = mock
	}

	opts := bank.Options{
		SecretKey: key, Clock: clk, Env: cfg.env, Logger: logger,
		NodeID: cfg.nodeID, Instance: cfg.instance, LeaseDuration: cfg.leaseDuration,
		Payments: payments.Options{Fees: cfg.fees},
		Cards:    cards.Options{CreateLimit: cfg.cardCreateLimit},
		Webhooks: webhooks.Options{RootCAs: cfg.webhookCA},
		// On PostgreSQL every transaction costs round trips, so a keyed
		// request's response is stored after its answer, batched with
		// others', rather than in a transaction of its own (see
		// httpapi.Options.DeferCompletion).
		HTTP: httpapi.Options{LogRequests: true, DeferCompletion: cfg.dsn != ""},
	}
	opts.HTTP.ClientAddr = cfg.clientAddr // clientaddr.go: behind a proxy, X-Forwarded-For
	// checkout_url is absolute: the sandbox checkout page on this server.
	opts.FundingSessions.CheckoutBase = listenURL(cfg.scheme(), ln.Addr())
	// next_action.url too: the sandbox 3DS challenge page; and card
	// payments take their fees from the same schedule (key card-acq).
	opts.Acquiring.ChallengeBase = opts.FundingSessions.CheckoutBase
	opts.Acquiring.Fees = cfg.fees
	store := db
	if m != nil {
		store = storage.WithUpdateHook(db, m.update)
		opts.HTTP.OnRequest = m.request
		opts.Webhooks.OnAttempt = m.delivery
	}
	// Rate limits (-rate-limit, -auth-fail-limit): one set of buckets for
	// the server's bank and its workspaces, counted in this process.
	limits := cfg.limits()
	if limits != nil && m != nil {
		limits.OnLimited = m.limited
	}
	opts.HTTP.Limits = limits
	app, err := bank.New(store, opts)
	if err != nil {
		return err
	}
	if m != nil {
		app.Due.OnLag(m.lag).OnRun(m.dueItem)
	}
	n, err := app.Migrate(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		logger.Info("store migrations run (a new store records them with nothing to move)", "migrations", n)
	}
	if err := bootstrap(ctx, app, cfg, logger, stderr); err != nil {
		return err
	}

	handler := app.Handler
	switch {
	case cfg.workspaces && cfg.env == entities.EnvSandbox:
		handler = serveWorkspaces(ctx, cfg, key, listenURL(cfg.scheme(), ln.Addr()), logger, handler, limits)
	case cfg.workspaces:
		logger.Warn("-workspaces is for the sandbox: ignored in production, where /sandbox/workspaces answers 404")
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if cfg.tls != nil { // tls.go: HTTPS; the pair is reloaded on SIGHUP and when its files change
		srv.TLSConfig = cfg.tls.serverConfig()
		cfg.tls.watch(ctx, logger)
	}
	var msrv *http.Server
	if m != nil {
		msrv = &http.Server{Handler: m.handler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
		go func() { _ = msrv.Serve(mln) }()
		fmt.Fprintf(stdout, "metrics on %s\n", mln.Addr())
		logger.Info("metrics on " + mln.Addr().String() + "/metrics")
		defer msrv.Close()
	}

	if aln != nil {
		asrv := serveAdmin(aln, db, logger) // closed before the store: a backup running is cut
		defer asrv.Close()
		fmt.Fprintf(stdout, "admin on %s\n", aln.Addr())
		logger.Info("admin API on " + aln.Addr().String() + ": POST /admin/backup")
	}

	bg, stopBG := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = app.Run(bg)
	}()

	serveErr := make(chan error, 1)
	go func() { serveErr <- cfg.serveOn(srv, ln) }()
	announceKeys(stdout, cfg, ln.Addr())
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	logger.Info("listening on "+ln.Addr().String(), "env", cfg.env, "tls", cfg.tls != nil, "behind_proxy", cfg.behindProxy, "memory", cfg.memory, "postgres", cfg.dsn != "", "fake_clock", cfg.fakeClock)

	select {
	case err := <-serveErr:
		stopBG()
		wg.Wait()
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	stopBG()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// bootstrap creates the root entity and its keys on an empty store and
// writes them to -bootstrap-out. Over an existing store it does nothing:
// keys are only ever shown once. -issue-root-keys then mints a fresh pair
// for the root, the way to recover keys that were never saved.
//
// The output files' folders are checked before the store changes, so that a
// typo in a path cannot leave a root whose keys were shown to nobody.
func bootstrap(ctx context.Context, app *bank.Bank, cfg *config, logger *slog.Logger, stderr io.Writer) error {
	for _, path := range []string{cfg.bootstrapOut, cfg.issueRootKeys} {
		if err := checkWritable(path); err != nil {
			return err
		}
	}
	res, created, err := app.Entities.Bootstrap(ctx)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	switch {
	case created:
		logger.Info("bootstrapped root entity", "entity_id", res.EntityID, "bootstrap_out", cfg.bootstrapOut)
		if cfg.bootstrapOut != "" {
			if err := writeSecretFile(cfg.bootstrapOut, res); err != nil {
				return fmt.Errorf("write bootstrap file: %w", err)
			}
		} else if cfg.issueRootKeys == "" {
			hint := "restart with -bootstrap-out FILE"
			if !cfg.memory {
				hint = "restart with -issue-root-keys FILE"
			}
			logger.Warn("no -bootstrap-out given: the root API keys were not saved anywhere; to get keys, " + hint)
		}
	case cfg.keysBeside:
		if _, err := os.Stat(cfg.bootstrapOut); err != nil {
			// A store made before keys were kept beside it, or whose file
			// was removed: say how to get keys rather than nothing.
			msg := fmt.Sprintf("the store has a root entity but no keys file beside it (%s): to get keys, restart with -issue-root-keys FILE (existing keys keep working)", cfg.bootstrapOut)
			fmt.Fprintln(stderr, "server: "+msg)
			logger.Warn(msg)
			break
		}
		logger.Info("store already has a root entity; its keys were written beside it when it was created", "file", cfg.bootstrapOut)
	case cfg.bootstrapOut != "":
		// The README's first run and a second one look alike to a
		// newcomer: say plainly why the file they wait for never comes.
		root, err := app.Entities.RootID(ctx)
		if err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		msg := fmt.Sprintf("the store already has a root entity (%s), so -bootstrap-out %s was not written: "+
			"root keys are shown only when the root is created; to get new ones, run with -issue-root-keys FILE "+
			"(existing keys keep working), or start over with a new -db", root, cfg.bootstrapOut)
		fmt.Fprintln(stderr, "server: "+msg)
		logger.Warn(msg, "entity_id", root, "bootstrap_out", cfg.bootstrapOut)
	default:
		logger.Info("store already has a root entity; bootstrap skipped")
	}
	if cfg.issueRootKeys == "" {
		return nil
	}
	keys, err := issueRootKeys(ctx, app)
	if err != nil {
		return fmt.Errorf("-issue-root-keys: %w", err)
	}
	if err := writeSecretFile(cfg.issueRootKeys, keys); err != nil {
		return fmt.Errorf("-issue-root-keys: %w", err)
	}
	logger.Info("issued new root API keys", "entity_id", keys.EntityID, "file", cfg.issueRootKeys)
	return nil
}

// announceKeys prints, in the sandbox, where the root's keys are (the
// bootstrap file, when it exists) and a curl line that calls the server
// with them, so that a first run needs no other step. The key itself is
// never printed or logged: the line reads it from the file.
func announceKeys(w io.Writer, cfg *config, addr net.Addr) {
	if cfg.env != "sandbox" || cfg.bootstrapOut == "" {
		return
	}
	path, err := filepath.Abs(cfg.bootstrapOut)
	if err != nil {
		return
	}
	if _, err := os.Stat(path); err != nil {
		return
	}
	fmt.Fprintf(w, "root API keys in %s\n", path)
	fmt.Fprintf(w, "try: curl -s -H \"Authorization: Bearer $(jq -r .api_key %s)\" %s/accounts\n", shellQuote(path), baseURL(cfg.scheme(), addr))
}

// baseURL is the URL (scheme http or https) a client on this machine
// reaches addr at.
func baseURL(scheme string, addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// issueRootKeys creates a full-access and a read-only key for the root.
func issueRootKeys(ctx context.Context, app *bank.Bank) (*entities.BootstrapResult, error) {
	root, err := app.Entities.RootID(ctx)
	if err != nil {
		return nil, err
	}
	full, err := app.Entities.CreateAPIKey(ctx, corebank.System(), entities.NewAPIKey{EntityID: root})
	if err != nil {
		return nil, err
	}
	ro, err := app.Entities.CreateAPIKey(ctx, corebank.System(), entities.NewAPIKey{EntityID: root, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return &entities.BootstrapResult{EntityID: root, APIKey: full.Secret, ReadOnlyAPIKey: ro.Secret,
		EncryptionPublicKey: full.EncryptionPublicKey}, nil
}

// checkWritable reports whether a file can be created in path's folder.
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".corebank-check-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// writeSecretFile writes v as indented JSON readable by the owner only,
// through a temporary file and a rename, so a crash never leaves half a file.
func writeSecretFile(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".corebank-keys-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(raw, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// listenURL is the URL (scheme http or https) of a listener's address,
// naming localhost for an unspecified host (":8080", "0.0.0.0:8080",
// "[::]:8080") so that a browser on this machine can open it.
func listenURL(scheme string, a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return scheme + "://" + a.String()
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// serveWorkspaces puts sandbox workspaces (bank/workspace) in front of
// own: each workspace is a bank of its own in memory, sealed with the
// server's key, with the server's fees, card limit and webhook CAs, its
// hosted pages under base, counted against the server's rate limits. The
// Manager runs their background work and expires idle ones until ctx ends.
func serveWorkspaces(ctx context.Context, cfg *config, key []byte, base string, logger *slog.Logger, own http.Handler, limits *httpapi.Limits) http.Handler {
	o := workspace.Options{TTL: cfg.workspaceTTL, Max: cfg.workspacesMax, BaseURL: base, Bank: bank.Options{
		SecretKey: key, Logger: logger,
		Payments:  payments.Options{Fees: cfg.fees},
		Acquiring: acquiring.Options{Fees: cfg.fees},
		Cards:     cards.Options{CreateLimit: cfg.cardCreateLimit},
		Webhooks:  webhooks.Options{RootCAs: cfg.webhookCA},
		HTTP:      httpapi.Options{LogRequests: true, ClientAddr: cfg.clientAddr, Limits: limits},
	}}
	m := workspace.New(o)
	go m.Run(ctx)
	logger.Info("sandbox workspaces on: POST /sandbox/workspaces", "ttl", cfg.workspaceTTL, "max", cfg.workspacesMax)
	return m.Handler(own)
}
