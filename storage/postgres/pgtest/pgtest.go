// Package pgtest starts a throwaway PostgreSQL cluster for tests, the way
// net/http/httptest starts a server: initdb into a temporary directory, a
// server listening only on a Unix socket in it, and a fresh database for
// each caller.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db, err := postgres.Open(ctx, pgtest.DSN(t), nil)
//		...
//	}
//
// The cluster starts on the first call to DSN and stops when Main's tests
// end. It is the postmaster's child process with a parent-death signal, so
// it goes away with the test binary even when the binary crashes or is
// killed.
//
// The binaries are looked up on PATH, then under /usr/lib/postgresql/*/bin
// (Debian's postgresql package), newest version first. Without them DSN
// skips the test with one line, or fails it when COREBANK_REQUIRE_TOOLS is
// set (as .ci/run sets it). initdb refuses to run as root, so as root the
// server runs as the postgres user that Debian's package creates.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SkipLine is the line a test skips with when initdb is not found.
const SkipLine = "postgres: initdb not found; install Debian's postgresql package to run these tests"

var (
	mainUsed atomic.Bool
	once     sync.Once
	shared   *cluster
	startErr error
	missing  bool
	dbSeq    atomic.Int64
)

// Main runs the tests of m, stops the cluster if one started, removes its
// directory and exits with the tests' code. Call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain that has more to do after the tests: it
// returns the code instead of exiting.
func Run(m *testing.M) int {
	mainUsed.Store(true)
	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// DSN returns the URL of a new, empty database on the package's cluster,
// starting the cluster on the first call. It skips tb when the PostgreSQL
// binaries are not installed (fails it under COREBANK_REQUIRE_TOOLS), and
// fails it if the cluster cannot start. The database is dropped when tb
// ends; whatever has it open must be closed by then (a t.Cleanup
// registered after DSN runs before DSN's).
func DSN(tb testing.TB) string {
	tb.Helper()
	if !mainUsed.Load() {
		tb.Fatal("pgtest: call pgtest.Main(m) (or Run) from the package's TestMain, so the cluster stops when the tests end")
	}
	once.Do(func() {
		bin, ok := findBin(debianBins)
		if !ok {
			missing = true
			return
		}
		shared, startErr = start(bin)
	})
	if missing {
		skipMissing(tb)
	}
	if startErr != nil {
		tb.Fatalf("pgtest: %v", startErr)
	}
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := shared.exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := shared.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return shared.dsn(name)
}

// skipMissing skips tb for want of the binaries, or fails it under
// COREBANK_REQUIRE_TOOLS.
func skipMissing(tb testing.TB) {
	tb.Helper()
	if os.Getenv("COREBANK_REQUIRE_TOOLS") != "" {
		tb.Fatal(SkipLine + " (COREBANK_REQUIRE_TOOLS is set)")
	}
	tb.Skip(SkipLine)
}

// Cluster is a PostgreSQL cluster of one test's own, for a test that
// stops and starts the server (the cluster DSN uses serves every test of
// the binary, which a restart would fail). Its methods are for the test's
// goroutine.
type Cluster struct {
	c *cluster
}

// NewCluster starts a cluster of tb's own (initdb and a server on a Unix
// socket in a new temporary directory), as DSN starts the shared one, and
// skips tb without the binaries as DSN does. The server stops and the
// directory is removed when tb ends.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	bin, ok := findBin(debianBins)
	if !ok {
		skipMissing(tb)
	}
	c, err := start(bin)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.stop(); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return &Cluster{c: c}
}

// DSN returns the URL of a new, empty database on the cluster, whose
// server must be running. The URL stays valid across Stop and Start.
func (cl *Cluster) DSN(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := cl.c.exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return cl.c.dsn(name)
}

// Stop stops the server as pg_ctl stop -m mode does, and returns once the
// postmaster has exited. mode is "smart" (wait for the clients to
// disconnect), "fast" (roll back their transactions and disconnect them)
// or "immediate" (end every process at once, without a checkpoint, as a
// crash does: the next Start recovers from the write-ahead log).
func (cl *Cluster) Stop(tb testing.TB, mode string) {
	tb.Helper()
	sig, ok := map[string]syscall.Signal{"smart": syscall.SIGTERM, "fast": syscall.SIGINT, "immediate": syscall.SIGQUIT}[mode]
	if !ok {
		tb.Fatalf("pgtest: Stop mode %q, want smart, fast or immediate", mode)
	}
	c := cl.c
	if c.cmd == nil {
		tb.Fatal("pgtest: Stop of a stopped cluster")
	}
	if c.conn != nil {
		_ = c.conn.Close(context.Background())
		c.conn = nil
	}
	// pg_ctl finds the postmaster by its pid file and signals it, as the
	// server's user; without pg_ctl the test sends the signal itself.
	ctl := exec.Command(filepath.Join(c.bin, "pg_ctl"), "stop", "-D", filepath.Join(c.dir, "data"), "-m", mode, "-w", "-t", "60")
	ctl.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if _, err := os.Stat(ctl.Path); err == nil {
		if out, err := ctl.CombinedOutput(); err != nil {
			tb.Fatalf("pgtest: pg_ctl stop -m %s: %v\n%s", mode, err, out)
		}
	} else if err := c.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("pgtest: stop: %v", err)
	}
	select {
	case <-c.exit:
	case <-time.After(time.Minute):
		tb.Fatalf("pgtest: postgres did not exit within a minute of pg_ctl stop -m %s", mode)
	}
	c.cmd = nil
}

// Start starts the stopped server again on its data directory and socket,
// and returns once it accepts connections (after crash recovery, when
// Stop was immediate).
func (cl *Cluster) Start(tb testing.TB) {
	tb.Helper()
	c := cl.c
	if c.cmd != nil {
		tb.Fatal("pgtest: Start of a running cluster")
	}
	if err := c.run(c.bin, filepath.Join(c.dir, "data"), c.cred); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
}

// Command returns a command that runs the PostgreSQL program name (a
// client such as pgbench or psql) with args, as the user the cluster runs
// as and in its directory. The program is the one beside the cluster's
// server binaries, or else the one on PATH. Call it after DSN. It skips tb
// with one line when the program is not installed (fails it under
// COREBANK_REQUIRE_TOOLS).
func Command(tb testing.TB, name string, args ...string) *exec.Cmd {
	tb.Helper()
	if shared == nil {
		tb.Fatal("pgtest: Command before DSN started the cluster")
	}
	path := filepath.Join(shared.bin, name)
	if _, err := os.Stat(path); err != nil {
		if path, err = exec.LookPath(name); err != nil {
			line := fmt.Sprintf("postgres: %s not found; install Debian's postgresql-client package to run this test", name)
			if os.Getenv("COREBANK_REQUIRE_TOOLS") != "" {
				tb.Fatal(line + " (COREBANK_REQUIRE_TOOLS is set)")
			}
			tb.Skip(line)
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = shared.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: shared.cred}
	return cmd
}

// debianBins is where Debian's postgresql package installs the binaries.
const debianBins = "/usr/lib/postgresql/*/bin"

// findBin returns the directory holding initdb and postgres: on PATH, or
// else the newest version matching glob.
func findBin(glob string) (string, bool) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, true
		}
	}
	dirs, _ := filepath.Glob(glob)
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, true
		}
	}
	return "", false
}

// version returns the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

type cluster struct {
	dir  string              // holds data/ and the socket
	bin  string              // holds the server's binaries
	cred *syscall.Credential // the server's user when not the current one
	cmd  *exec.Cmd
	exit chan error // receives the postmaster's exit
	mu   sync.Mutex
	conn *pgx.Conn // to the postgres database, for CREATE and DROP DATABASE
}

// start runs initdb and the server, and waits until it accepts
// connections.
func start(bin string) (*cluster, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	cred, err := credential(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c := &cluster{dir: dir, bin: bin, cred: cred}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := c.run(bin, data, cred); err != nil {
		_ = c.stop()
		return nil, err
	}
	return c, nil
}

// credential returns nil when the current user may run the server, and
// otherwise (root) the postgres user's, after giving it dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Getuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and initdb refuses root: %w (Debian's postgresql package creates the postgres user)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// run starts the postmaster and waits for it to accept connections. The
// postmaster is started from a goroutine that keeps its OS thread locked
// for good: the parent-death signal (SIGQUIT, PostgreSQL's immediate
// shutdown) is sent when the thread that started the child exits, and a
// locked thread exits only with the process.
func (c *cluster) run(bin, data string, cred *syscall.Credential) error {
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", c.dir,
		"-c", "listen_addresses=",
		"-c", "max_connections=300",
		"-c", "log_min_messages=warning",
		// A deadlock is found after deadlock_timeout (1 s by default);
		// the tests make them on purpose, and wait that long for each.
		"-c", "deadlock_timeout=50ms")
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	// Appended to: a Cluster's server may start again.
	logf, err := os.OpenFile(filepath.Join(c.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	c.exit = make(chan error, 1)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := c.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.exit <- c.cmd.Wait()
		logf.Close()
	}()
	if err := <-started; err != nil {
		c.cmd = nil
		return fmt.Errorf("start postgres: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, c.dsn("postgres"))
		cancel()
		if err == nil {
			c.conn = conn
			return nil
		}
		select {
		case werr := <-c.exit:
			c.exit <- werr
			return fmt.Errorf("postgres exited (%v); its log:\n%s", werr, c.log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within a minute: %v; its log:\n%s", err, c.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cluster) log() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
	return string(b)
}

// dsn returns the URL of database name over the cluster's socket.
func (c *cluster) dsn(name string) string {
	return "postgres:///" + name + "?host=" + c.dir + "&user=postgres&sslmode=disable"
}

// exec runs one statement on the postgres database.
func (c *cluster) exec(sql string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.conn.Exec(ctx, sql)
	return err
}

// stop shuts the server down (fast shutdown, then immediate, then kill) and
// removes the directory.
func (c *cluster) stop() error {
	var errs []error
	if c.conn != nil {
		_ = c.conn.Close(context.Background())
	}
	if c.cmd != nil {
		stopped := false
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL} {
			_ = c.cmd.Process.Signal(sig)
			select {
			case <-c.exit:
				stopped = true
			case <-time.After(10 * time.Second):
			}
			if stopped {
				break
			}
		}
		if !stopped {
			errs = append(errs, errors.New("postgres did not stop"))
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
