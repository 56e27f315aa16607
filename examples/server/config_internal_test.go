package main

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestPostgresFlags checks how -db, DATABASE_URL and -memory pick the
// store, and the flags that tune a PostgreSQL one.
func TestPostgresFlags(t *testing.T) {
	const url = "postgres://corebank@db.internal/corebank"
	for _, tt := range []struct {
		name    string
		env     string // DATABASE_URL
		args    []string
		dsn     string
		wantErr string
	}{
		{name: "BoltByDefault"},
		{name: "DbURL", args: []string{"-db", url, "-secret-key-file", "k"}, dsn: url},
		{name: "DbPostgresqlURL", args: []string{"-db", "postgresql://h/db", "-secret-key-file", "k"}, dsn: "postgresql://h/db"},
		{name: "DatabaseURL", env: url, args: []string{"-secret-key-file", "k"}, dsn: url},
		{name: "DbFileWinsOverDatabaseURL", env: url, args: []string{"-db", "x.db"}},
		{name: "MemoryIgnoresDatabaseURL", env: url, args: []string{"-memory"}},
		{name: "Tuned", args: []string{"-db", url, "-secret-key-file", "k", "-db-pool", "8", "-db-statement-timeout", "3s", "-db-retries", "0"}, dsn: url},
		{name: "ErrNoKey", args: []string{"-db", url}, wantErr: "needs -secret-key-file or COREBANK_SECRET_KEY"},
		{name: "ErrDatabaseURLNotPostgres", env: "mysql://h/db", wantErr: "DATABASE_URL must be"},
		{name: "ErrPoolWithoutPostgres", args: []string{"-db-pool", "8"}, wantErr: "-db-pool needs a PostgreSQL store"},
		{name: "ErrRetriesWithMemory", args: []string{"-memory", "-db-retries", "3"}, wantErr: "-memory and -db-retries contradict each other"},
		{name: "ErrPoolZero", args: []string{"-db", url, "-secret-key-file", "k", "-db-pool", "0"}, wantErr: "-db-pool must be at least 1"},
		{name: "ErrNegativeRetries", args: []string{"-db", url, "-secret-key-file", "k", "-db-retries", "-1"}, wantErr: "-db-retries must not be negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", tt.env)
			t.Setenv("COREBANK_SECRET_KEY", "")
			c, ok := parsed(t, tt.args, tt.wantErr)
			if !ok {
				return
			}
			if c.dsn != tt.dsn {
				t.Errorf("dsn = %q, want %q", c.dsn, tt.dsn)
			}
			if tt.name == "Tuned" && (c.dbPool != 8 || c.dbStatementTimeout != 3*time.Second || c.dbRetries != 0) {
				t.Errorf("pool %d, timeout %s, retries %d; want 8, 3s, 0", c.dbPool, c.dbStatementTimeout, c.dbRetries)
			}
			if tt.dsn != "" && c.secretKeyFile != "k" {
				t.Errorf("secret key file = %q, want the one given", c.secretKeyFile)
			}
		})
	}
}

// TestInstance: a server is an instance of its machine and -addr, the same
// on every start, so that a restart takes back its leased due work;
// another address is another instance; an ephemeral port is none; and
// -node-id stays random per start unless given.
func TestInstance(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	parse := func(args ...string) *config {
		t.Helper()
		c, err := parseFlags(args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first, again := parse(), parse()
	if len(first.instance) != 16 || first.instance != again.instance {
		t.Errorf("default -addr: instances %q then %q, want the same 16 hex digits", first.instance, again.instance)
	}
	if first.nodeID != "" {
		t.Errorf("default -node-id %q, want none (bank.New picks a random one)", first.nodeID)
	}
	if other := parse("-addr", "127.0.0.1:8081").instance; other == first.instance || len(other) != 16 {
		t.Errorf("-addr 127.0.0.1:8081: instance %q (8080's is %q)", other, first.instance)
	}
	if got := parse("-addr", "127.0.0.1:0").instance; got != "" {
		t.Errorf("-addr 127.0.0.1:0: instance %q, want none", got)
	}
	if got := parse("-node-id", "n1").nodeID; got != "n1" {
		t.Errorf("-node-id n1: node ID %q", got)
	}
}

// TestStoreFlagConflicts: store flags that contradict each other are
// refused with an error naming both (in either order, and without the
// password of a URL), and parseFlags writes nothing. A flag beside
// DATABASE_URL is no contradiction: the flag wins.
func TestStoreFlagConflicts(t *testing.T) {
	const pgURL = "postgres://corebank:hunter2@db.internal/corebank"
	for _, tt := range []struct {
		name    string
		env     string // DATABASE_URL
		args    []string
		wantErr string // "" for none
		memory  bool
		dsn     string
	}{
		{name: "MemoryAndPostgresURL", args: []string{"-memory", "-db", pgURL, "-secret-key-file", "k"},
			wantErr: "-memory and -db contradict each other: -memory keeps the store in memory, -db names a PostgreSQL database"},
		{name: "PostgresURLAndMemory", args: []string{"-db", "postgresql://h/db", "-memory"},
			wantErr: "-memory and -db contradict each other"},
		{name: "MemoryAndFile", args: []string{"-memory", "-db", "x.db"},
			wantErr: "-memory and -db contradict each other: -memory keeps the store in memory, -db names the bbolt file x.db"},
		{name: "MemoryAndDefaultFileGiven", args: []string{"-db", "corebank.db", "-memory"},
			wantErr: "-db names the bbolt file corebank.db"},
		{name: "MemoryAndPool", args: []string{"-memory", "-db-pool", "4"},
			wantErr: "-memory and -db-pool contradict each other"},
		{name: "MemoryAndStatementTimeout", args: []string{"-db-statement-timeout", "2s", "-memory"},
			wantErr: "-memory and -db-statement-timeout contradict each other"},
		{name: "MemoryAndRetries", args: []string{"-memory", "-db-retries", "0"},
			wantErr: "-memory and -db-retries contradict each other"},
		{name: "MemoryPoolAndDatabaseURL", env: pgURL, args: []string{"-memory", "-db-pool", "4"},
			wantErr: "-memory and -db-pool contradict each other"},
		{name: "PoolWithBolt", args: []string{"-db", "x.db", "-db-pool", "4"},
			wantErr: "-db-pool needs a PostgreSQL store"},
		{name: "EmptyDb", args: []string{"-db", ""}, wantErr: "-db must not be empty"},
		{name: "OtherScheme", args: []string{"-db", "mysql://corebank:hunter2@h/db"},
			wantErr: "-db mysql://...: only postgres:// and postgresql:// URLs name a database"},

		{name: "MemoryOverDatabaseURL", env: pgURL, args: []string{"-memory"}, memory: true},
		{name: "FileOverDatabaseURL", env: pgURL, args: []string{"-db", "x.db"}},
		{name: "MemoryAlone", args: []string{"-memory"}, memory: true},
		{name: "PostgresAlone", args: []string{"-db", pgURL, "-secret-key-file", "k", "-db-pool", "4"}, dsn: pgURL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", tt.env)
			t.Setenv("COREBANK_SECRET_KEY", "")
			dir := t.TempDir()
			t.Chdir(dir)
			c, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error shows the URL's password: %v", err)
				}
			} else {
				if err != nil {
					t.Fatalf("parseFlags(%q): %v", tt.args, err)
				}
				if c.memory != tt.memory || c.dsn != tt.dsn {
					t.Errorf("memory %v, dsn %q; want %v, %q", c.memory, c.dsn, tt.memory, tt.dsn)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("parseFlags wrote %d files in the working directory", len(ents))
			}
		})
	}
}

// parsed runs parseFlags on args and checks its error: one containing
// wantErr, and then ok is false, or none when wantErr is "".
func parsed(t *testing.T, args []string, wantErr string) (c *config, ok bool) {
	t.Helper()
	c, err := parseFlags(args, io.Discard)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("parseFlags(%q) = %v, want an error containing %q", args, err, wantErr)
		}
		return nil, false
	}
	if err != nil {
		t.Fatalf("parseFlags(%q): %v", args, err)
	}
	return c, true
}
