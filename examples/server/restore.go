package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/snapshot"
)

const restoreUsage = `server restore writes a backup (POST /admin/backup on -admin-addr) into a
new store: a bbolt file, or a PostgreSQL database (-db postgres://...). It
reads the whole backup and checks it first (every frame's CRC, the counts
and the SHA-256 at its end), so a truncated or damaged backup is refused
before anything is written. A store that holds data is refused unless
-force, which empties it first. Stop every server on the store first.

The backup holds secrets sealed as they were stored: start the server on
the restored store with the sealing key of the store it came from (its
key file, -secret-key-file, or COREBANK_SECRET_KEY).

Examples:
  server restore -from corebank-20260105T090000Z.cbsnap -db /var/lib/corebank/restored.db
  server restore -from backup.cbsnap -db postgres://corebank@db.internal/corebank_restored -force

Flags:
`

// restoreConfig is server restore's command line.
type restoreConfig struct {
	from, db string
	force    bool
}

func parseRestoreFlags(args []string, stderr io.Writer) (*restoreConfig, error) {
	fs := flag.NewFlagSet("server restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), restoreUsage)
		fs.PrintDefaults()
	}
	var c restoreConfig
	fs.StringVar(&c.from, "from", "", "the backup file to restore (required)")
	fs.StringVar(&c.db, "db", "", "the store to write it into: a bbolt file (created if absent), or a postgres:// or postgresql:// URL (required)")
	fs.BoolVar(&c.force, "force", false, "empty a store that holds data first, instead of refusing it")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("restore: unexpected arguments: %v", fs.Args())
	case c.from == "":
		return nil, errors.New("restore: -from is required: the backup file to restore")
	case c.db == "":
		return nil, errors.New("restore: -db is required: the bbolt file or postgres:// URL to restore into")
	}
	return &c, nil
}

// runRestore is server restore: check the backup whole, open the store,
// refuse it if it holds data (or empty it under -force), write the
// backup, and say what it wrote.
func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseRestoreFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	f, err := os.Open(c.from)
	if err != nil {
		return fmt.Errorf("restore: -from: %w (nothing was written)", err)
	}
	defer f.Close()
	start := time.Now()
	info, err := snapshot.Verify(ctx, f)
	if err != nil {
		return fmt.Errorf("restore: -from %s is not a whole backup: %w (nothing was written)", c.from, err)
	}
	fmt.Fprintf(stdout, "verified %s in %s: %d pairs in %d buckets, %d bytes, taken %s from %s, sha256 %s\n",
		c.from, since(start), info.Pairs, len(info.Buckets), info.Size, info.Created.Format(time.RFC3339), info.Source, info.SHA256)

	db, name, created, err := openRestoreTarget(ctx, c.db)
	if err != nil {
		return err
	}
	ok, closed := false, false
	defer func() {
		if !closed {
			_ = db.Close()
		}
		if !ok && created {
			removeBolt(c.db) // a file this restore made holds nothing of value
		}
	}()

	empty, err := snapshot.Empty(ctx, db)
	switch {
	case err != nil:
		return fmt.Errorf("restore: -db %s: %w (nothing was written)", name, err)
	case !empty && !c.force:
		return fmt.Errorf("restore: -db %s holds data; restore writes only into an empty store: name a new -db, or give -force to empty this one first (nothing was written)", name)
	case !empty:
		n, err := snapshot.Clear(ctx, db)
		if err != nil {
			return fmt.Errorf("restore: -force: emptying %s: %w (it now holds part of what it held)", name, err)
		}
		fmt.Fprintf(stdout, "-force: emptied %s: deleted %d pairs\n", name, n)
	}

	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("restore: -from: %w", err)
	}
	start = time.Now()
	got, err := snapshot.Read(ctx, f, db)
	if err == nil && got.SHA256 != info.SHA256 {
		err = fmt.Errorf("%s changed while it was read (sha256 %s, then %s)", c.from, info.SHA256, got.SHA256)
	}
	if err == nil {
		// bolt's Close folds the last commits into the bbolt file.
		closed = true
		err = db.Close()
	}
	if err != nil {
		if !created {
			return fmt.Errorf("restore: writing into %s: %w; the store now holds part of the backup: run the restore again with -force", name, err)
		}
		return fmt.Errorf("restore: writing into %s: %w (the file it made is removed)", name, err)
	}
	took := time.Since(start)
	fmt.Fprintf(stdout, "restored %d pairs in %d buckets into %s in %s (%.0f pairs/s)\n",
		got.Pairs, len(got.Buckets), name, since(start), float64(got.Pairs)/max(took.Seconds(), 1e-9))
	for _, b := range got.Buckets {
		fmt.Fprintf(stdout, "  %-40s %d\n", b.Name, b.Pairs)
	}
	fmt.Fprintln(stdout, "secrets are sealed as they were: start the server on it with the sealing key of the store the backup came from "+
		"(its key file, -secret-key-file, or COREBANK_SECRET_KEY)")
	ok = true
	return nil
}

// openRestoreTarget opens the store at db (a bbolt path or a PostgreSQL
// URL) and returns it, its name for messages (a URL without its
// password), and whether this call created the bbolt file.
func openRestoreTarget(ctx context.Context, db string) (storage.Backend, string, bool, error) {
	if isPostgresURL(db) {
		name := redactDSN(db)
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		pg, err := postgres.Open(octx, db, nil)
		if err != nil {
			return nil, "", false, fmt.Errorf("restore: -db %s: %w (nothing was written)", name, err)
		}
		return pg, name, false, nil
	}
	_, err := os.Stat(db)
	created := errors.Is(err, fs.ErrNotExist)
	bdb, err := bolt.Open(db, nil)
	if errors.Is(err, bolt.ErrLocked) {
		return nil, "", false, fmt.Errorf("restore: -db %s is open in another process (a running server?): stop it first (nothing was written)", db)
	}
	if err != nil {
		if created {
			removeBolt(db)
		}
		return nil, "", false, fmt.Errorf("restore: -db: %w (nothing was written)", err)
	}
	return bdb, db, created, nil
}

// redactDSN is a PostgreSQL URL fit for a message: its password, in the
// user part or the query, replaced with xxxxx. One that does not parse is
// named by its scheme alone.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "a " + strings.SplitN(dsn, ":", 2)[0] + ":// URL that does not parse"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// removeBolt removes a bbolt file and its logs.
func removeBolt(path string) {
	for _, p := range []string{path, path + "-wal.0", path + "-wal.1"} {
		_ = os.Remove(p)
	}
}

// since is the time since start, rounded for a person.
func since(start time.Time) string {
	return time.Since(start).Round(time.Millisecond).String()
}
