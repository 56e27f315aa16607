// Command server runs corebank's REST API over a bbolt file, memory, or a
// PostgreSQL database that several servers may share.
//
// Flags are documented in the project's CONTRACT and in the README; run
// with -h to list them. On a store without a root entity the server creates
// one, with a full-access and a read-only API key, and writes them to
// -bootstrap-out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run runs the subcommand args name (commands.go), or else starts the
// server and blocks until SIGINT or SIGTERM, then drains in-flight
// requests and closes the store.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if cmd, ok := commands[args[0]]; ok { // commands.go
			return cmd(ctx, args[1:], stdout, stderr)
		}
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if cfg.logFormat == "json" {
		h = slog.NewJSONHandler(stderr, nil)
	}
	logger := slog.New(h)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, cfg, logger, stdout, stderr)
}
