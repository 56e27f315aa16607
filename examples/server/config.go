package main

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// config is the parsed command line.
type config struct {
	addr   string
	dbPath string
	memory bool
	// dsn is the PostgreSQL URL the store is on (from -db or
	// DATABASE_URL), empty for bolt and memory; the db* fields tune it.
	dsn                string
	dbPool             int
	dbStatementTimeout time.Duration
	dbRetries          int
	env                string
	fakeClock          bool
	clockStart         time.Time
	bootstrapOut       string
	// keysBeside is set when bootstrapOut is the sandbox's default, the
	// file beside the store (keysFile), rather than -bootstrap-out.
	keysBeside      bool
	issueRootKeys   string
	webhookCA       *x509.CertPool
	cardCreateLimit int
	secretKeyFile   string
	fees            payments.FeeSchedule
	logFormat       string
	metricsAddr     string
	// nodeID and leaseDuration name this server among those on one store
	// and bound how long due work it took stays its own (bank.Options).
	nodeID        string
	leaseDuration time.Duration
	// instance names this server across restarts (stableInstance).
	instance string
	// workspaces enables sandbox workspaces (bank/workspace); TTL and
	// max bound them.
	workspaces    bool
	workspaceTTL  time.Duration
	workspacesMax int

	// TLS and proxies (tls.go, clientaddr.go): tls serves and reloads the
	// -tls-cert/-tls-key pair (nil: plain HTTP); behind a proxy, the
	// trusted ones' X-Forwarded-For names the client (clientAddr).
	tlsCertFile, tlsKeyFile string
	tls                     *certReloader
	behindProxy             bool
	trustedProxies          []netip.Prefix

	// adminAddr serves POST /admin/backup (admin.go); "" is off.
	adminAddr        string
	adminAllowRemote bool

	// rateLimit is the rate per API key and per client address, and
	// authFailLimit the failed authentications per client address
	// (-rate-limit, -auth-fail-limit; httpapi.Limits). Zero: off.
	rateLimit, authFailLimit httpapi.Rate
}

// The production defaults of -rate-limit and -auth-fail-limit (the
// sandbox's are off). 100 a second is Stripe's live-mode default, above
// what one integration needs; a burst of 200 lets a client that was
// quiet for two seconds catch up at once. Ten failed authentications a
// minute, 20 at once, leave room for a deployment whose workers all start
// with a wrong key and retry once, while a guesser gets 14,400 tries a day
// per address against keys of 256 random bits, and no more lookups.
const (
	productionRateLimit     = "100/s,burst=200"
	productionAuthFailLimit = "10/m,burst=20"
)

// usage opens -h: what the server is, then three ways to run it.
const usage = `corebank server serves corebank's REST API (accounts, entities, payments,
webhooks and, in the sandbox, the /sandbox/* simulation routes) over a bbolt
file, memory, or a PostgreSQL database that several servers may share. On a store without a root entity it creates one with a
full-access and a read-only API key and writes them to -bootstrap-out (in
the sandbox, by default, to <db>.root-keys.json beside a bbolt store, mode
0600, and prints a curl line that uses them); on a store that has one,
-issue-root-keys mints new keys. GET /healthz and
/readyz need no key, every request is logged with its X-Request-Id, and
-metrics-addr serves Prometheus metrics on a second listener.

Examples:
  # a throwaway sandbox in memory, keys in bootstrap.json
  server -memory -bootstrap-out bootstrap.json

  # a sandbox whose time moves only through POST /sandbox/clock/advance
  server -db sandbox.db -fake-clock -clock-start 2026-01-01T00:00:00Z -bootstrap-out bootstrap.json

  # production: HTTPS, JSON logs, metrics on another port, the sealing key outside the store's folder
  server -env production -addr :8443 -tls-cert /etc/corebank/tls.crt -tls-key /etc/corebank/tls.key \
    -db /var/lib/corebank/corebank.db -secret-key-file /etc/corebank/secret.key \
    -log-format json -metrics-addr 127.0.0.1:9090

Commands (server COMMAND -h says more):
  restore -from FILE -db PATH    write a backup (POST /admin/backup on -admin-addr) into an empty store
  verify -db PATH                check a store, or a backup file, offline: one line per finding

Flags:
`

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	var (
		c           config
		clockStart  string
		webhookCA   string
		feeSchedule string
	)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&c.dbPath, "db", "corebank.db", "bbolt file; the store survives restarts. A postgres:// or postgresql:// URL selects PostgreSQL instead, which several servers may share (DATABASE_URL is used when -db is not given)")
	fs.BoolVar(&c.memory, "memory", false, "in-memory store instead of bbolt (refused beside -db or the -db-* flags; it overrides DATABASE_URL)")
	fs.StringVar(&c.env, "env", "sandbox", "sandbox or production; /sandbox/* routes exist only in sandbox")
	fs.BoolVar(&c.fakeClock, "fake-clock", false, "sandbox only: time moves only through POST /sandbox/clock/advance (webhook deliveries are still signed with the real time of sending, so receivers verify against their own clock)")
	fs.StringVar(&clockStart, "clock-start", "", "RFC 3339 start time of the fake clock (default now)")
	fs.StringVar(&c.bootstrapOut, "bootstrap-out", "", "file to write the bootstrap JSON (the new root's keys) to; in the sandbox a bbolt store's default is <db>.root-keys.json")
	fs.StringVar(&c.issueRootKeys, "issue-root-keys", "", "issue a new full-access and read-only API key for the root entity and write them, in the bootstrap file's form, to this file (recovers lost bootstrap keys; existing keys keep working)")
	fs.StringVar(&webhookCA, "webhook-ca", "", "PEM file of extra CAs trusted for webhook deliveries")
	fs.IntVar(&c.cardCreateLimit, "card-create-limit", 20, "card creations allowed per entity per rolling hour")
	fs.StringVar(&c.secretKeyFile, "secret-key-file", "", "file holding the 32-byte key that seals secrets at rest (default <db>.key; env COREBANK_SECRET_KEY overrides; -env production needs a file outside the store's folder, or the env; a PostgreSQL store needs one or the env, the same on every server)")
	fs.StringVar(&feeSchedule, "fee-schedule", "", "transfer fees per payment type: type=FIXED, type=Nbps or type=FIXED+Nbps, comma separated, * for every other type (default: no fees)")
	fs.StringVar(&c.logFormat, "log-format", "text", "log lines as text (logfmt) or json; one line per request names its method, route, status, duration, entity and request_id")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "separate listen address serving Prometheus metrics at /metrics (default: none)")
	fs.IntVar(&c.dbPool, "db-pool", 20, "PostgreSQL only: most connections the server opens (each running transaction holds one; at most half run writes at once)")
	fs.DurationVar(&c.dbStatementTimeout, "db-statement-timeout", 0, "PostgreSQL only: statement_timeout of the server's connections, e.g. 5s (default: the database's)")
	fs.IntVar(&c.dbRetries, "db-retries", 30, "PostgreSQL only: times a transaction is retried after a serialization failure or deadlock (0: never)")
	fs.StringVar(&c.nodeID, "node-id", "", "this server's name in the leases it takes on due work (payout checks, webhook attempts) in a store several servers share; logged at start (default: random on each start). A server restarted on the same machine and -addr takes back at once what it had leased under its earlier name")
	fs.BoolVar(&c.workspaces, "workspaces", false, "sandbox only: POST /sandbox/workspaces (no key) creates a whole bank in memory inside this server, reached by its own keys, so each test of a suite in any language gets an isolated bank and clock")
	fs.DurationVar(&c.workspaceTTL, "workspace-ttl", time.Hour, "how long an idle workspace lives (real clock)")
	fs.IntVar(&c.workspacesMax, "workspaces-max", 1000, "most workspaces alive at once; the next create answers 429 with retry_after")
	// Rate limits (see productionRateLimit).
	var rateLimit, authFailLimit string
	fs.StringVar(&rateLimit, "rate-limit", "", "requests allowed per API key and per client address, each counted by this server alone: N/s or N/m with an optional ,burst=B, or off; past it 429 with Retry-After (default: off in the sandbox, "+productionRateLimit+" in production)")
	fs.StringVar(&authFailLimit, "auth-fail-limit", "", "requests with an unknown API key allowed per client address, N/s or N/m with an optional ,burst=B, or off; past it the address's requests with keys that have not worked from it in the last hour get 429 before any lookup (default: off in the sandbox, "+productionAuthFailLimit+" in production)")
	fs.DurationVar(&c.leaseDuration, "lease-duration", storage.DefaultDueLease, "how long due work this server took stays its own: if it dies, another server on the same store takes the work over this long after; must outlast one payout check or webhook attempt")
	// TLS and proxies (tls.go, clientaddr.go).
	fs.StringVar(&c.tlsCertFile, "tls-cert", "", "PEM file of the certificate (chain) to serve HTTPS with (TLS 1.2 and up), with -tls-key; both are reloaded when they change or on SIGHUP, without dropping connections")
	fs.StringVar(&c.tlsKeyFile, "tls-key", "", "PEM file of the private key of -tls-cert")
	fs.BoolVar(&c.behindProxy, "behind-proxy", false, "a proxy in front terminates TLS: lets -env production listen on a non-loopback -addr without -tls-cert, and believes X-Forwarded-For from -trusted-proxies to name the client in logs and limits")
	trustedProxies := fs.String("trusted-proxies", defaultTrustedProxies, "with -behind-proxy: the proxies whose X-Forwarded-For is believed, IP addresses and CIDR prefixes, comma separated")
	// The admin listener (admin.go).
	fs.StringVar(&c.adminAddr, "admin-addr", "", "separate listen address of the admin API, POST /admin/backup (a snapshot of the store, streamed while the server serves); it needs no API key, so it must be a loopback address unless -admin-allow-remote (default: none)")
	fs.BoolVar(&c.adminAllowRemote, "admin-allow-remote", false, "let -admin-addr listen on a non-loopback address, where a firewall or an authenticating proxy must guard it")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	switch c.env {
	case "sandbox", "production":
	default:
		return nil, fmt.Errorf("-env must be sandbox or production, not %q", c.env)
	}
	switch c.logFormat {
	case "text", "json":
	default:
		return nil, fmt.Errorf("-log-format must be text or json, not %q", c.logFormat)
	}
	if c.fakeClock && c.env != "sandbox" {
		return nil, errors.New("-fake-clock is for the sandbox only")
	}
	c.clockStart = time.Now().UTC()
	if clockStart != "" {
		if !c.fakeClock {
			return nil, errors.New("-clock-start needs -fake-clock")
		}
		t, err := time.Parse(time.RFC3339, clockStart)
		if err != nil {
			return nil, fmt.Errorf("-clock-start: %w", err)
		}
		c.clockStart = t.UTC()
	}
	if err := c.checkAdmin(); err != nil {
		return nil, err
	}
	if err := c.parseLimits(fs, rateLimit, authFailLimit); err != nil {
		return nil, err
	}
	if c.leaseDuration <= 0 {
		return nil, errors.New("-lease-duration must be positive")
	}
	c.instance = stableInstance(c.addr)
	if c.cardCreateLimit < 1 {
		return nil, errors.New("-card-create-limit must be at least 1")
	}
	if c.workspaceTTL <= 0 || c.workspacesMax < 1 {
		return nil, errors.New("-workspace-ttl must be positive and -workspaces-max at least 1")
	}
	if webhookCA != "" {
		pem, err := os.ReadFile(webhookCA)
		if err != nil {
			return nil, fmt.Errorf("-webhook-ca: %w", err)
		}
		if c.webhookCA, err = webhooks.CertPoolWithPEM(pem); err != nil {
			return nil, fmt.Errorf("-webhook-ca %s: %w", webhookCA, err)
		}
	}
	fees, err := payments.ParseFeeSchedule(feeSchedule)
	if err != nil {
		return nil, fmt.Errorf("-fee-schedule: %w", err)
	}
	c.fees = fees
	if err := c.checkTransport(fs, *trustedProxies); err != nil {
		return nil, err
	}
	if err := c.pickPostgres(fs); err != nil {
		return nil, err
	}
	if c.secretKeyFile == "" && !c.memory && c.dsn == "" {
		c.secretKeyFile = c.dbPath + ".key"
	}
	if c.bootstrapOut == "" && c.env == "sandbox" && !c.memory && c.dsn == "" {
		// A first run (go run ./examples/server) must leave keys to call
		// it with: the sandbox keeps a new store's beside it.
		c.bootstrapOut, c.keysBeside = keysFile(c.dbPath), true
	}
	return &c, nil
}

// parseLimits reads -rate-limit and -auth-fail-limit; when one is not
// given, the environment's default.
func (c *config) parseLimits(fs *flag.FlagSet, rateLimit, authFailLimit string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []struct {
		name, val, prod string
		dst             *httpapi.Rate
	}{
		{"rate-limit", rateLimit, productionRateLimit, &c.rateLimit},
		{"auth-fail-limit", authFailLimit, productionAuthFailLimit, &c.authFailLimit},
	} {
		if !set[f.name] {
			if c.env != "production" {
				continue
			}
			f.val = f.prod
		}
		r, err := httpapi.ParseRate(f.val)
		if err != nil {
			return fmt.Errorf("-%s %w", f.name, err)
		}
		*f.dst = r
	}
	return nil
}

// limits are the server's httpapi.Limits, nil when every one is off.
func (c *config) limits() *httpapi.Limits {
	if c.rateLimit.Off() && c.authFailLimit.Off() {
		return nil
	}
	return &httpapi.Limits{Key: c.rateLimit, Address: c.rateLimit, FailedAuth: c.authFailLimit}
}

// keysFile is where a sandbox keeps the root keys of the bolt store at
// dbPath (mode 0600) when no -bootstrap-out is given.
func keysFile(dbPath string) string { return dbPath + ".root-keys.json" }

// isPostgresURL reports whether s names a PostgreSQL database.
func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// pickPostgres sets c.dsn from -db, or from DATABASE_URL when -db is not
// given and the store is not -memory, and checks the flags that go with
// it. A PostgreSQL store has no folder for a key file, and every server on
// it must seal with the same key, so the key must be named.
func (c *config) pickPostgres(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := c.storeConflicts(set); err != nil {
		return err
	}
	switch env := os.Getenv("DATABASE_URL"); {
	case isPostgresURL(c.dbPath):
		c.dsn = c.dbPath
	case !set["db"] && !c.memory && env != "":
		if !isPostgresURL(env) {
			return errors.New("DATABASE_URL must be a postgres:// or postgresql:// URL (or give -db)")
		}
		c.dsn = env
	}
	if c.dsn == "" || c.memory {
		c.dsn = ""
		for _, name := range []string{"db-pool", "db-statement-timeout", "db-retries"} {
			if set[name] {
				return fmt.Errorf("-%s needs a PostgreSQL store (-db postgres://... or DATABASE_URL)", name)
			}
		}
		return nil
	}
	switch {
	case c.dbPool < 1:
		return errors.New("-db-pool must be at least 1")
	case c.dbStatementTimeout < 0:
		return errors.New("-db-statement-timeout must not be negative")
	case c.dbRetries < 0:
		return errors.New("-db-retries must not be negative")
	case c.secretKeyFile == "" && os.Getenv("COREBANK_SECRET_KEY") == "":
		return errors.New("a PostgreSQL store needs -secret-key-file or COREBANK_SECRET_KEY: " +
			"every server on the database must seal secrets with the same key")
	}
	return nil
}

// storeConflicts refuses store flags that contradict each other, naming
// both, before anything opens a store; set holds the flags given. The
// pairs: -memory with -db (a bbolt file or a PostgreSQL URL: either names
// a store that -memory would silently not use); -memory with -db-pool,
// -db-statement-timeout or -db-retries (they tune a PostgreSQL store);
// an empty -db; and a -db URL of another scheme (mysql://, file://),
// which would otherwise become a bbolt file of that name. -db beside
// DATABASE_URL, and -memory beside DATABASE_URL, are no contradiction: a
// flag overrides the environment, as documented. The -db-* flags over a
// bbolt store are refused by pickPostgres.
func (c *config) storeConflicts(set map[string]bool) error {
	if set["db"] {
		switch {
		case c.dbPath == "":
			return errors.New("-db must not be empty: give a bbolt file or a postgres:// URL")
		case !isPostgresURL(c.dbPath) && strings.Contains(c.dbPath, "://"):
			scheme, _, _ := strings.Cut(c.dbPath, "://")
			return fmt.Errorf("-db %s://...: only postgres:// and postgresql:// URLs name a database; a bbolt file is a path", scheme)
		}
	}
	if !c.memory {
		return nil
	}
	if set["db"] {
		what := "the bbolt file " + c.dbPath
		if isPostgresURL(c.dbPath) {
			what = "a PostgreSQL database" // the URL may hold a password
		}
		return fmt.Errorf("-memory and -db contradict each other: -memory keeps the store in memory, -db names %s; give one of them", what)
	}
	for _, name := range []string{"db-pool", "db-statement-timeout", "db-retries"} {
		if set[name] {
			return fmt.Errorf("-memory and -%s contradict each other: -%s tunes a PostgreSQL store, -memory keeps the store in memory", name, name)
		}
	}
	return nil
}

// stableInstance is the server's bank.Options.Instance: 16 hex digits of
// a hash of the machine (its /etc/machine-id where there is one, and its
// host name) and the listening address addr. Two servers on one machine
// cannot listen on one address, and servers on several machines differ by
// machine, so no two servers running at once share it; and a server
// restarted on its machine and address has the one it had, so it takes
// its leased due work back at once instead of waiting for the leases to
// end, while its node ID stays new at each start. It is "" (none) when
// addr's port is 0 or absent: an ephemeral port is no identity.
func stableInstance(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return ""
	}
	host, _ := os.Hostname()
	machine, _ := os.ReadFile("/etc/machine-id")
	h := sha256.New()
	for _, part := range []string{strings.TrimSpace(string(machine)), host, addr} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
