package main_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/postgres/pgtest"
	"github.com/corebank/corebank/storage/snapshot"
)

var backupPreload = flag.Int("backup.preload", 2000, "TestBackupUnderLoad: transfers posted before the load the backup runs under (50000 for the figure the README quotes)")

// adminAddr is the address a server started with -admin-addr printed.
func adminAddr(t *testing.T, p *proc) string {
	t.Helper()
	for _, line := range strings.Split(p.out.String(), "\n") {
		if addr, ok := strings.CutPrefix(line, "admin on "); ok {
			return addr
		}
	}
	t.Fatalf("the server printed no admin address:\n%s", p.out)
	return ""
}

// backup posts /admin/backup on addr and writes the body to path; it
// returns the body's size.
func backup(t *testing.T, addr, path string) int64 {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/admin/backup", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /admin/backup = %d %s", resp.StatusCode, body)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(f, resp.Body)
	if err != nil {
		t.Fatalf("reading the backup: %v", err)
	}
	return n
}

// restore runs server restore with args and returns its output and
// whether it succeeded.
func restore(t *testing.T, bin string, args ...string) (string, bool) {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"restore"}, args...)...).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// ack is one transfer the server answered 201 for.
type ack struct {
	id   string
	pair int
	at   time.Time // when the answer arrived
	took time.Duration
}

// TestBackupUnderLoad takes a backup of a bolt store over POST
// /admin/backup while 8 clients post transfers, restores it into a new
// bolt file with server restore, starts a server on that with the same
// sealing key, and checks that every transfer answered 201 before the
// backup was asked for is there, and that the money adds up: each source
// holds its funding less one cent per transfer of it in the restored
// store, and, once they settle, each destination one cent per transfer.
// It logs how the writers fared during the backup against the seconds
// before it: acknowledgements per second, latency, the longest time
// without one. With -backup.preload=50000 the store holds that many
// transfers before the load starts.
func TestBackupUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	boot := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, bin, "-db", filepath.Join(dir, "src.db"), "-secret-key-file", keyFile, "-bootstrap-out", boot,
		"-admin-addr", "127.0.0.1:0", "-lease-duration", "3s")
	defer stop(t, p)
	admin := adminAddr(t, p)
	key, _ := readBootstrap(t, boot)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	c := &client{base: "http://" + p.addr, key: key, http: hc}
	const writers = 8
	pairs := fundedPairs(t, c, writers)

	var (
		mu    sync.Mutex
		acks  []ack
		stopW atomic.Bool
		wg    sync.WaitGroup
		fails atomic.Int64
	)
	post := func(w, n int, run string) {
		ref := fmt.Sprintf("%s-%d-%d", run, w, n)
		t0 := time.Now()
		a, err := c.send("POST", "/transfers", "", map[string]any{"account_id": pairs[w].from, "payment_detail_id": pairs[w].detail,
			"amount": 1, "currency": "USD", "payment_type": "book-transfer", "narration": "backup load", "unique_reference": ref})
		if err != nil || a.status != 201 {
			if fails.Add(1) <= 5 {
				t.Errorf("POST /transfers = %d %v %v", a.status, a.body, err)
			}
			return
		}
		now := time.Now()
		mu.Lock()
		acks = append(acks, ack{id: dataField(a.body, "id").(string), pair: w, at: now, took: now.Sub(t0)})
		mu.Unlock()
	}
	if *backupPreload > 0 {
		start := time.Now()
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := w; n < *backupPreload; n += writers {
					post(w, n, "pre")
				}
			}()
		}
		wg.Wait()
		t.Logf("preload: %d transfers in %s", *backupPreload, time.Since(start).Round(time.Millisecond))
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stopW.Load(); n++ {
				post(w, n, "load")
			}
		}()
	}
	const before = 2 * time.Second
	time.Sleep(before)
	cut := time.Now() // transfers answered before this must be in the backup
	path := filepath.Join(dir, "backup.cbsnap")
	size := backup(t, admin, path)
	end := time.Now()
	time.Sleep(500 * time.Millisecond)
	stopW.Store(true)
	wg.Wait()
	if fails.Load() > 0 {
		t.Fatalf("%d transfers failed", fails.Load())
	}

	// How the writers fared during the backup, against the seconds before.
	took := end.Sub(cut)
	window := func(from, to time.Time) (n int, rate float64, p50, p99, worst, gap time.Duration) {
		var lat []time.Duration
		last := from
		for _, a := range acks {
			if a.at.Before(from) || !a.at.Before(to) {
				continue
			}
			lat = append(lat, a.took)
			gap = max(gap, a.at.Sub(last))
			last = a.at
		}
		gap = max(gap, to.Sub(last))
		slices.Sort(lat)
		if n = len(lat); n > 0 {
			p50, p99, worst = lat[n/2], lat[min(n-1, n*99/100)], lat[n-1]
		}
		return n, float64(n) / to.Sub(from).Seconds(), p50, p99, worst, gap
	}
	slices.SortFunc(acks, func(a, b ack) int { return a.at.Compare(b.at) })
	bn, brate, bp50, bp99, bmax, bgap := window(cut.Add(-before), cut)
	dn, drate, dp50, dp99, dmax, dgap := window(cut, end)
	info, err := snapshot.Verify(context.Background(), mustOpen(t, path))
	if err != nil {
		t.Fatalf("the backup: %v", err)
	}
	t.Logf("backup of %d pairs, %d bytes, in %s (%.1f MB/s)", info.Pairs, size, took.Round(time.Millisecond), float64(size)/took.Seconds()/1e6)
	t.Logf("writers in the %s before: %d acks, %.0f/s, p50 %s, p99 %s, max %s, longest without an ack %s", before, bn, brate, ms(bp50), ms(bp99), ms(bmax), ms(bgap))
	t.Logf("writers during the backup: %d acks, %.0f/s, p50 %s, p99 %s, max %s, longest without an ack %s", dn, drate, ms(dp50), ms(dp99), ms(dmax), ms(dgap))
	if dn == 0 {
		t.Error("no transfer was acknowledged while the backup ran")
	}
	if took > time.Second && (drate < brate/4 || dgap > took/2) {
		t.Errorf("the writers stalled during the backup: %.0f/s against %.0f/s before, %s without an ack in a %s backup", drate, brate, ms(dgap), took)
	}
	stop(t, p)

	restored := filepath.Join(dir, "restored.db")
	out, ok := restore(t, bin, "-from", path, "-db", restored)
	if !ok || !strings.Contains(out, fmt.Sprintf("restored %d pairs", info.Pairs)) {
		t.Fatalf("server restore:\n%s", out)
	}
	t.Logf("server restore: %s", strings.SplitN(out, "\n", 3)[1])
	// The backup, and the store restored from it, are whole: server verify
	// finds nothing in either (the store before a server opens it).
	for _, db := range []string{path, restored} {
		out, err := exec.Command(bin, "verify", "-db", db).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "checked: clean") {
			t.Fatalf("server verify -db %s: %v\n%s", db, err, out)
		}
		t.Logf("server verify -db %s: %s", filepath.Base(db), strings.TrimSpace(string(out)))
	}
	p2 := startServer(t, bin, "-db", restored, "-secret-key-file", keyFile)
	defer stop(t, p2)
	c.base = "http://" + p2.addr

	// Every transfer acknowledged before the backup is there.
	have := make([]map[string]bool, writers)
	for w, pr := range pairs {
		have[w] = map[string]bool{}
		for _, id := range listTransfers(t, c, pr.from) {
			have[w][id] = true
		}
	}
	var beforeCut, during int
	for _, a := range acks {
		switch {
		case a.at.Before(cut):
			beforeCut++
			if !have[a.pair][a.id] {
				t.Errorf("transfer %s, acknowledged %s before the backup began, is not in the restored store", a.id, cut.Sub(a.at))
			}
		case have[a.pair][a.id]:
			during++
		}
	}
	var total int
	for _, h := range have {
		total += len(h)
	}
	t.Logf("restored store: %d transfers: all %d acknowledged before the backup, %d of those acknowledged during it", total, beforeCut, during)

	// The money adds up, before and after settlement.
	deadline := time.Now().Add(90 * time.Second)
	for {
		bals, err := readBalances(c)
		if err != nil {
			t.Fatal(err)
		}
		settled := true
		for w, pr := range pairs {
			n := int64(len(have[w]))
			src, dst := bals[pr.from], bals[pr.to]
			if src.current != pairFunding-n || src.available != src.current {
				t.Fatalf("source %d holds current %d, available %d; want %d: its funding less its %d restored transfers", w, src.current, src.available, pairFunding-n, n)
			}
			if dst.current > n || dst.available != dst.current {
				t.Fatalf("destination %d holds current %d, available %d; more than its %d restored transfers", w, dst.current, dst.available, n)
			}
			settled = settled && dst.current == n
		}
		if settled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restored transfers did not settle in 90 s:\n%s", p2.logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mustOpen opens path for reading, closed when the test ends.
func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// listTransfers returns the IDs of every transfer of account, page by
// page.
func listTransfers(t *testing.T, c *client, account string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		path := "/transfers?limit=100&account_id=" + url.QueryEscape(account)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		a, err := c.send("GET", path, "", nil)
		if err != nil || a.status != 200 {
			t.Fatalf("GET %s = %d %v %v", path, a.status, a.body, err)
		}
		data, _ := a.body["data"].([]any)
		for _, v := range data {
			tr, _ := v.(map[string]any)
			ids = append(ids, tr["id"].(string))
		}
		meta, _ := a.body["meta"].(map[string]any)
		pg, _ := meta["pagination"].(map[string]any)
		next, _ := pg["next_cursor"].(string)
		if more, _ := pg["has_next"].(bool); !more || next == "" {
			return ids
		}
		cursor = next
	}
}

// storeDump reads every pair of the bolt file at path (which no process
// holds) in one View.
func storeDump(t *testing.T, path string) []byte {
	t.Helper()
	db, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var buf bytes.Buffer
	if _, err := snapshot.Scan(context.Background(), snapshotOf(t, db), func(b storage.Bucket, k, v []byte) error {
		fmt.Fprintf(&buf, "%s %x %x\n", b, k, v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// snapshotOf is a snapshot of db, in memory.
func snapshotOf(t *testing.T, db storage.Backend) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	if _, err := snapshot.Write(context.Background(), db, &buf); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// TestRestoreRefusals: server restore refuses, naming the problem and
// changing nothing, a truncated backup, a backup with a flipped byte, a
// file that is not a backup, a store that holds data (without -force; a
// damaged backup even with it), a store a running server holds, and
// missing flags; with -force it replaces what the store held.
func TestRestoreRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	boot := filepath.Join(dir, "bootstrap.json")
	srcDB := filepath.Join(dir, "src.db")
	p := startServer(t, bin, "-db", srcDB, "-secret-key-file", keyFile, "-bootstrap-out", boot, "-admin-addr", "127.0.0.1:0")
	defer stop(t, p)
	key, _ := readBootstrap(t, boot)
	c := &client{base: "http://" + p.addr, key: key, http: &http.Client{Timeout: 10 * time.Second}}
	fundedPairs(t, c, 2)
	good := filepath.Join(dir, "good.cbsnap")
	backup(t, adminAddr(t, p), good)
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	flipped := bytes.Clone(raw)
	flipped[len(flipped)/2] ^= 0x04
	truncated := write("truncated.cbsnap", raw[:len(raw)-100])
	damaged := write("flipped.cbsnap", flipped)

	// A store that holds data: another server's, stopped.
	full := filepath.Join(dir, "full.db")
	other := startServer(t, bin, "-db", full, "-secret-key-file", filepath.Join(dir, "other.key"), "-bootstrap-out", filepath.Join(dir, "other.json"))
	stop(t, other)
	fullBefore := storeDump(t, full)
	fresh := func() string { return filepath.Join(t.TempDir(), "new.db") }

	for _, tt := range []struct {
		name string
		args []string
		want string // in the output
		db   string // a store that must be unchanged (full) or absent
	}{
		{"ErrTruncated", []string{"-from", truncated, "-db", fresh()}, "truncated", ""},
		{"ErrFlipped", []string{"-from", damaged, "-db", fresh()}, "fails its CRC", ""},
		{"ErrNotABackup", []string{"-from", boot, "-db", fresh()}, "not a corebank snapshot", ""},
		{"ErrStoreFile", []string{"-from", full, "-db", fresh()}, "not a corebank snapshot", ""},
		{"ErrNoFile", []string{"-from", filepath.Join(dir, "absent"), "-db", fresh()}, "-from: open", ""},
		{"ErrHoldsData", []string{"-from", good, "-db", full}, "holds data; restore writes only into an empty store", full},
		{"ErrDamagedWithForce", []string{"-from", damaged, "-db", full, "-force"}, "fails its CRC", full},
		{"ErrTruncatedWithForce", []string{"-from", truncated, "-db", full, "-force"}, "truncated", full},
		{"ErrInUse", []string{"-from", good, "-db", srcDB}, "is open in another process", ""},
		{"ErrNoFrom", []string{"-db", fresh()}, "-from is required", ""},
		{"ErrNoDB", []string{"-from", good}, "-db is required", ""},
		{"ErrExtraArgs", []string{"-from", good, "-db", fresh(), "now"}, "unexpected arguments", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := restore(t, bin, tt.args...)
			if ok || !strings.Contains(out, tt.want) {
				t.Fatalf("server restore %q succeeded (%v) or does not say %q:\n%s", tt.args, ok, tt.want, out)
			}
			if strings.Contains(out, "-from") && !strings.Contains(out, "required") && !strings.Contains(out, "nothing was written") {
				t.Errorf("the refusal does not say that nothing was written:\n%s", out)
			}
			if tt.db == full {
				if diff := cmp.Diff(string(fullBefore), string(storeDump(t, full))); diff != "" {
					t.Errorf("the refused restore changed the store (-before +after):\n%s", diff)
				}
			}
			for i, a := range tt.args {
				if a == "-db" && tt.db == "" && strings.HasSuffix(tt.args[i+1], "new.db") {
					if _, err := os.Stat(tt.args[i+1]); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("the refused restore left %s: %v", tt.args[i+1], err)
					}
				}
			}
		})
	}

	t.Run("Force", func(t *testing.T) {
		out, ok := restore(t, bin, "-from", good, "-db", full, "-force")
		if !ok || !strings.Contains(out, "-force: emptied") || !strings.Contains(out, "restored") {
			t.Fatalf("server restore -force:\n%s", out)
		}
		want, err := snapshot.Verify(context.Background(), bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, err := snapshot.Scan(context.Background(), bytes.NewReader(raw), func(b storage.Bucket, k, v []byte) error {
			fmt.Fprintf(&got, "%s %x %x\n", b, k, v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got.String(), string(storeDump(t, full))); diff != "" {
			t.Errorf("after -force the store is not the backup's %d pairs (-backup +store):\n%s", want.Pairs, diff)
		}
		// The restored store serves with the source's key and API key.
		p3 := startServer(t, bin, "-db", full, "-secret-key-file", keyFile)
		defer stop(t, p3)
		c3 := &client{base: "http://" + p3.addr, key: key, http: c.http}
		if status, body, err := c3.do("GET", "/accounts", nil); err != nil || status != 200 || len(body["data"].([]any)) != 4 {
			t.Errorf("GET /accounts on the restored store = %d %v %v", status, body, err)
		}
	})
}

// bankState is what a test compares between a store and its copy: every
// account's balance, and every transfer of the given accounts.
type bankState struct {
	Balances  map[string]accountBalance
	Transfers map[string][]string
}

func readState(t *testing.T, c *client, accounts []string) bankState {
	t.Helper()
	bals, err := readBalances(c)
	if err != nil {
		t.Fatal(err)
	}
	s := bankState{Balances: bals, Transfers: map[string][]string{}}
	for _, a := range accounts {
		ids := listTransfers(t, c, a)
		slices.Sort(ids)
		s.Transfers[a] = ids
	}
	return s
}

// TestBackupPostgres: a server on PostgreSQL backs up over POST
// /admin/backup like any other, and server restore writes the backup
// into a bolt file and into a new PostgreSQL database alike; and a
// pg_dump of its tables (as the README says), loaded into a new one with pg_restore, opens
// with the server. Each copy serves the same balances and transfers with
// the same sealing key and API key. It skips with one line without
// PostgreSQL (pg_dump and pg_restore included), unless
// COREBANK_REQUIRE_TOOLS is set.
func TestBackupPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	dsn := pgtest.DSN(t)
	bin := buildServer(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	boot := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, bin, "-db", dsn, "-secret-key-file", keyFile, "-bootstrap-out", boot, "-admin-addr", "127.0.0.1:0", "-db-pool", "4")
	defer stop(t, p)
	key, _ := readBootstrap(t, boot)
	c := &client{base: "http://" + p.addr, key: key, http: &http.Client{Timeout: 10 * time.Second}}
	pairs := fundedPairs(t, c, 2)
	var sources []string
	for i, pr := range pairs {
		sources = append(sources, pr.from)
		for n := range 3 {
			ref := fmt.Sprintf("pg-%d-%d", i, n)
			if a, err := c.send("POST", "/transfers", "", map[string]any{"account_id": pr.from, "payment_detail_id": pr.detail,
				"amount": 1, "currency": "USD", "payment_type": "book-transfer", "narration": "pg", "unique_reference": ref}); err != nil || a.status != 201 {
				t.Fatalf("POST /transfers = %d %v %v", a.status, a.body, err)
			}
		}
	}
	// Wait until the transfers settle, so that the copies are of a store
	// at rest.
	var want bankState
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		want = readState(t, c, sources)
		if want.Balances[pairs[0].to].current == 3 && want.Balances[pairs[1].to].current == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the transfers did not settle: %+v", want.Balances)
		}
	}
	if len(want.Balances) != 4 || len(want.Transfers[sources[0]]) != 3 || len(want.Transfers[sources[1]]) != 3 {
		t.Fatalf("the source holds %+v; want 4 accounts and 3 transfers from each source", want)
	}
	path := filepath.Join(dir, "pg.cbsnap")
	backup(t, adminAddr(t, p), path)

	// pg_dump, while the server runs, into a new database.
	dump := filepath.Join(dir, "pg.dump")
	f, err := os.Create(dump)
	if err != nil {
		t.Fatal(err)
	}
	cmd := pgtest.Command(t, "pg_dump", "-Fc", "-t", "corebank_kv*", "-d", dsn) // as the README says
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, &stderr)
	}
	f.Close()
	stop(t, p)
	dumped := pgtest.DSN(t)
	cmd = pgtest.Command(t, "pg_restore", "--no-owner", "-d", dumped)
	cmd.Stdin, cmd.Stderr = mustOpen(t, dump), &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, &stderr)
	}

	restoredPG := pgtest.DSN(t)
	for _, tt := range []struct{ name, db string }{
		{"RestoreIntoBolt", filepath.Join(dir, "restored.db")},
		{"RestoreIntoPostgres", restoredPG},
		{"PgDumpAndRestore", dumped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.db != dumped {
				if out, ok := restore(t, bin, "-from", path, "-db", tt.db); !ok {
					t.Fatalf("server restore:\n%s", out)
				}
			}
			args := []string{"-db", tt.db, "-secret-key-file", keyFile}
			if isPG := strings.HasPrefix(tt.db, "postgres"); isPG {
				args = append(args, "-db-pool", "4")
			}
			q := startServer(t, bin, args...)
			defer stop(t, q)
			c := &client{base: "http://" + q.addr, key: key, http: c.http}
			if diff := cmp.Diff(want, readState(t, c, sources), cmp.AllowUnexported(accountBalance{})); diff != "" {
				t.Errorf("the copy differs (-source +copy):\n%s", diff)
			}
		})
	}
	// A second restore into the database restored into is refused.
	if out, ok := restore(t, bin, "-from", path, "-db", restoredPG); ok || !strings.Contains(out, "holds data") {
		t.Errorf("a restore into a PostgreSQL store holding data:\n%s", out)
	}
}

// TestReadmeBackup runs the shell blocks of the README's "Backup and
// restore" as written, with the ports moved to free ones, and checks that
// the restored server answers the source's root key. It needs bash, curl
// and jq; without them it skips with one line, unless
// COREBANK_REQUIRE_TOOLS is set.
func TestReadmeBackup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's backup blocks against the server binary; run without -short")
	}
	if tool := missingTool(t, "bash", "curl", "jq"); tool != "" {
		t.Skipf("the README's backup blocks need bash, curl and jq (apt-get install curl jq): %s not found", tool)
	}
	t.Parallel()
	bin := buildServer(t)
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n### Backup and restore\n")
	if !ok {
		t.Fatal(`README.md has no "### Backup and restore" section`)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	var blocks strings.Builder
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "```sh\n")
		if !ok {
			break
		}
		block, after, _ := strings.Cut(after, "```")
		blocks.WriteString(block)
		rest = after
	}
	script := blocks.String()
	if !strings.Contains(script, "restore -from") {
		t.Fatalf("the README's backup blocks do not restore:\n%s", script)
	}
	script = strings.ReplaceAll(script, "127.0.0.1:9091", freeAddr(t)) // runReadmeBlocks moves 127.0.0.1:8080
	restored := freeAddr(t)
	script = strings.ReplaceAll(script, "127.0.0.1:8081", restored)
	checks := `
for i in $(seq 50); do grep -q '^listening on' restored.log && break; sleep 0.2; done
grep -q '^listening on' restored.log || { echo "README check: the restored server did not start:"; cat restored.log; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(jq -r .api_key corebank.db.root-keys.json)" http://` + restored + `/accounts)
[ "$code" = 200 ] || { echo "README check: the restored server answers the source's key with $code"; exit 1; }
echo README-OK
`
	out, err := runReadmeBlocks(t, bin, t.TempDir(), script, checks)
	if err != nil || !strings.Contains(out, "backed up") || !strings.Contains(out, "restored ") || !strings.Contains(out, "README-OK") {
		t.Fatalf("README backup blocks: %v\n%s", err, out)
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestAdminAddrRefused: a server whose -admin-addr is taken, or beyond
// loopback without -admin-allow-remote, fails to start, naming the flag,
// before it writes anything.
func TestAdminAddrRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tt := range []struct{ name, addr, want string }{
		{"ErrTaken", taken.Addr().String(), "address already in use"},
		{"ErrEveryInterface", "0.0.0.0:0", "would listen beyond this machine"},
		{"ErrNoHost", ":0", "add -admin-allow-remote"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out, err := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "corebank.db"), "-admin-addr", tt.addr).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "-admin-addr") || !strings.Contains(string(out), tt.want) ||
				!strings.Contains(string(out), "nothing was written") {
				t.Fatalf("server -admin-addr %s = %v, want a refusal saying %q:\n%s", tt.addr, err, tt.want, out)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Errorf("the refused server wrote %s", ents[0].Name())
			}
		})
	}
}
