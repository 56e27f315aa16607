package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/corebank/corebank/bank/verify"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/snapshot"
)

const verifyUsage = `server verify checks a store offline (bank/verify): every journal entry
balances; each account's balance equals its entries and holds, and its
history replays to it; holds equal the open authorizations, transfers,
inflows and refunds that placed them; every index entry names its record
and every record is indexed; every due item names a live object. It prints
one line per finding (kind, object IDs, what differs) and exits 1 on any;
on a whole store it prints one summary line and exits 0. It writes nothing.

A bbolt file cannot be checked while a server holds it (its lock): stop the
server, or check a copy or a backup file (POST /admin/backup's: -db names
it like a store; it is loaded into memory, its checksums checked, and
checked there). A PostgreSQL store is read in
one REPEATABLE READ transaction, so servers may keep running on it.

Usage:
  server verify -db /var/lib/corebank/corebank.db
  server verify -db postgres://corebank@db/corebank

Flags:
`

// runVerify is the verify subcommand (server verify -db PATH).
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("server verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), verifyUsage)
		fs.PrintDefaults()
	}
	dbPath := fs.String("db", "corebank.db", "the store: a bbolt file, a backup file (POST /admin/backup), or a postgres:// URL (DATABASE_URL is used when -db is not given)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("verify: unexpected arguments: %v", fs.Args())
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "db" })
	if env := os.Getenv("DATABASE_URL"); !set && env != "" {
		*dbPath = env
	}
	db, err := openVerified(ctx, *dbPath)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer db.Close()
	sum, err := verify.Run(ctx, db, func(f storage.Finding) { fmt.Fprintln(stdout, f) })
	if err != nil {
		return fmt.Errorf("verify: reading the store: %w", err)
	}
	checked := fmt.Sprintf("%d accounts, %d entries, %d due items checked", sum.Accounts, sum.Entries, sum.DueItems)
	if sum.Findings > 0 {
		return fmt.Errorf("verify: %d findings (%s)", sum.Findings, checked)
	}
	fmt.Fprintln(stdout, checked+": clean")
	return nil
}

// openVerified opens the store at path for reading: a PostgreSQL URL, a
// backup file (POST /admin/backup's, loaded into memory), or a bbolt file
// that must exist (Open would make a new one) and that no server holds.
func openVerified(ctx context.Context, path string) (storage.Backend, error) {
	if isPostgresURL(path) {
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return postgres.Open(octx, path, &postgres.Options{PoolSize: 2})
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no store at %s: %w", path, err)
	}
	if db, ok, err := openBackup(ctx, path); ok || err != nil {
		return db, err
	}
	db, err := bolt.Open(path, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrLocked) {
		return nil, fmt.Errorf("%s is in use (is a server running on it?); stop it, or verify a copy: %w", path, err)
	}
	return db, err
}

// openBackup loads the backup at path into a memory store, checksums
// checked on the way; ok is false when path is no backup.
func openBackup(ctx context.Context, path string) (db storage.Backend, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	head := make([]byte, 8)
	if n, _ := io.ReadFull(f, head); !snapshot.IsSnapshot(head[:n]) {
		return nil, false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, true, err
	}
	mem := memory.New()
	if _, err := snapshot.Read(ctx, bufio.NewReaderSize(f, 1<<20), mem); err != nil {
		mem.Close()
		return nil, true, fmt.Errorf("backup %s: %w", path, err)
	}
	return mem, true, nil
}
