package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// openStore opens the configured backend and the key that seals its secrets.
// A bbolt file whose key file has gone missing is refused: a new key would
// silently make every sealed secret in it unreadable.
func openStore(cfg *config) (storage.Backend, []byte, error) {
	if cfg.memory {
		key, err := loadSecretKey(cfg.secretKeyFile)
		if err != nil {
			return nil, nil, err
		}
		return memory.New(), key, nil
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

// serve runs the server until ctx is done.
func serve(ctx context.Context, cfg *config, logger *slog.Logger, stdout io.Writer) error {
	db, key, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer db.Close()

	var (
		clk  clock.Clock = clock.New()
		mock *clock.Mock
	)
	if cfg.fakeClock {
		mock = clock.NewMock()
		mock.Set(cfg.clockStart)
		clk = mock
	}

	app, err := newApp(db, key, clk, mock, cfg, logger)
	if err != nil {
		return err
	}
	if err := bootstrap(ctx, app, cfg, logger); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           app.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}

	bg, stopBG := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	app.startBackground(bg, &wg, mock == nil)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	logger.Info("listening on "+ln.Addr().String(), "env", cfg.env, "memory", cfg.memory, "fake_clock", cfg.fakeClock)

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
// keys are only ever shown once.
func bootstrap(ctx context.Context, app *app, cfg *config, logger *slog.Logger) error {
	res, created, err := app.entities.Bootstrap(ctx)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if !created {
		logger.Info("store already has a root entity; bootstrap skipped")
		return nil
	}
	logger.Info("bootstrapped root entity", "entity_id", res.EntityID, "bootstrap_out", cfg.bootstrapOut)
	if cfg.bootstrapOut == "" {
		hint := "restart with -bootstrap-out FILE"
		if !cfg.memory {
			hint = "stop the server, remove " + cfg.dbPath + " and start again with -bootstrap-out FILE"
		}
		logger.Warn("no -bootstrap-out given: the root API keys were not saved anywhere; to get keys, " + hint)
		return nil
	}
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfg.bootstrapOut, append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("write bootstrap file: %w", err)
	}
	return nil
}
