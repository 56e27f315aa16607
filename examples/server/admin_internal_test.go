package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/snapshot"
)

// TestAdminFlags: -admin-addr is off by default, takes a loopback address,
// and refuses one beyond this machine unless -admin-allow-remote.
func TestAdminFlags(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		addr    string
		wantErr string
	}{
		{name: "OffByDefault"},
		{name: "Loopback", args: []string{"-admin-addr", "127.0.0.1:9091"}, addr: "127.0.0.1:9091"},
		{name: "LoopbackV6", args: []string{"-admin-addr", "[::1]:9091"}, addr: "[::1]:9091"},
		{name: "Localhost", args: []string{"-admin-addr", "localhost:9091"}, addr: "localhost:9091"},
		{name: "RemoteAllowed", args: []string{"-admin-addr", "0.0.0.0:9091", "-admin-allow-remote"}, addr: "0.0.0.0:9091"},
		{name: "ErrNoHost", args: []string{"-admin-addr", ":9091"}, wantErr: "-admin-addr :9091 would listen beyond this machine"},
		{name: "ErrUnspecified", args: []string{"-admin-addr", "0.0.0.0:9091"}, wantErr: "give a loopback address such as 127.0.0.1:9091, or add -admin-allow-remote"},
		{name: "ErrPublicIP", args: []string{"-admin-addr", "192.0.2.7:9091"}, wantErr: "-admin-addr 192.0.2.7:9091 would listen beyond"},
		{name: "ErrNoPort", args: []string{"-admin-addr", "127.0.0.1"}, wantErr: "want host:port"},
		{name: "ErrAllowRemoteAlone", args: []string{"-admin-allow-remote"}, wantErr: "-admin-allow-remote needs -admin-addr"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", "")
			c, ok := parsed(t, append([]string{"-memory"}, tt.args...), tt.wantErr)
			if !ok {
				return
			}
			if c.adminAddr != tt.addr {
				t.Errorf("adminAddr = %q, want %q", c.adminAddr, tt.addr)
			}
		})
	}
}

// TestListenAdmin: a host name is checked once bound; localhost binds
// loopback.
func TestListenAdmin(t *testing.T) {
	ln, err := listenAdmin(&config{adminAddr: "localhost:0"})
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if ln, err := listenAdmin(&config{}); ln != nil || err != nil {
		t.Errorf("listenAdmin without -admin-addr = %v, %v", ln, err)
	}
}

// gated is a store whose Views wait for release, or fail with err, or
// whose Tx fails its Scans of bucket failing.
type gated struct {
	storage.Backend
	entered, release chan struct{}
	err              error
	failing          storage.Bucket
}

func (g *gated) View(ctx context.Context, fn func(storage.Tx) error) error {
	if g.err != nil {
		return g.err
	}
	if g.entered != nil {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.Backend.View(ctx, func(tx storage.Tx) error { return fn(&failingTx{tx.(lister), g.failing}) })
}

type lister interface {
	storage.Tx
	storage.BucketLister
}

type failingTx struct {
	lister
	bucket storage.Bucket
}

var errDisk = errors.New("disk on fire")

func (t *failingTx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(k, v []byte) error) error {
	if b == t.bucket && o.Limit == 0 {
		return errDisk
	}
	return t.lister.Scan(b, o, fn)
}

// filled is a memory store with two buckets of 5,000 pairs, a snapshot
// of some 150 KB.
func filled(t *testing.T) storage.Backend {
	t.Helper()
	db := memory.New()
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		for i := range 10_000 {
			b := storage.Bucket("a")
			if i%2 == 1 {
				b = "b"
			}
			if err := tx.Put(b, storage.AppendUint64(nil, uint64(i)), bytes.Repeat([]byte{'v'}, 10)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

type adminAnswer struct {
	Status int
	Code   string
	Allow  string
	Retry  string
}

func adminAsk(t *testing.T, url, method string) (adminAnswer, []byte, http.Header, error) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return adminAnswer{}, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	a := adminAnswer{Status: resp.StatusCode, Allow: resp.Header.Get("Allow"), Retry: resp.Header.Get("Retry-After")}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var e struct{ Code string }
		_ = json.Unmarshal(body, &e)
		a.Code = e.Code
	}
	return a, body, resp.Header, err
}

// TestAdminBackup: POST /admin/backup streams a whole snapshot with its
// length and checksum in its headers; other methods and paths get the API's JSON
// errors; a second backup while one runs gets 409; a store that cannot be
// read, or fails part way, gets 503 with Retry-After.
func TestAdminBackup(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	serve := func(db storage.Backend) string {
		srv := httptest.NewServer(&admin{db: db, logger: logger})
		t.Cleanup(srv.Close)
		return srv.URL
	}
	t.Run("OK", func(t *testing.T) {
		url := serve(filled(t))
		a, body, header, err := adminAsk(t, url+"/admin/backup", "POST")
		if err != nil || a.Status != 200 {
			t.Fatalf("POST /admin/backup = %+v, %v", a, err)
		}
		info, err := snapshot.Verify(context.Background(), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if info.Pairs != 10_000 || header.Get("Corebank-Snapshot-Sha256") != info.SHA256 || header.Get("Corebank-Snapshot-Pairs") != "10000" ||
			header.Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Errorf("info %+v, header %v", info, header)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		url := serve(filled(t))
		for _, tt := range []struct {
			method, path string
			want         adminAnswer
		}{
			{"GET", "/admin/backup", adminAnswer{Status: 405, Code: "method_not_allowed", Allow: "POST"}},
			{"PUT", "/admin/backup", adminAnswer{Status: 405, Code: "method_not_allowed", Allow: "POST"}},
			{"POST", "/admin/backups", adminAnswer{Status: 404, Code: "not_found"}},
			{"GET", "/", adminAnswer{Status: 404, Code: "not_found"}},
			{"POST", "/accounts", adminAnswer{Status: 404, Code: "not_found"}},
		} {
			got, _, _, err := adminAsk(t, url+tt.path, tt.method)
			if diff := cmp.Diff(tt.want, got); diff != "" || err != nil {
				t.Errorf("%s %s: %v (-want +got):\n%s", tt.method, tt.path, err, diff)
			}
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		g := &gated{Backend: filled(t), entered: make(chan struct{}), release: make(chan struct{})}
		url := serve(g)
		first := make(chan adminAnswer, 1)
		go func() {
			a, _, _, _ := adminAsk(t, url+"/admin/backup", "POST")
			first <- a
		}()
		<-g.entered
		got, _, _, err := adminAsk(t, url+"/admin/backup", "POST")
		if diff := cmp.Diff(adminAnswer{Status: 409, Code: "conflict", Retry: "10"}, got); diff != "" || err != nil {
			t.Errorf("a second backup: %v (-want +got):\n%s", err, diff)
		}
		close(g.release)
		if a := <-first; a.Status != 200 {
			t.Errorf("the first backup = %+v", a)
		}
		g.entered = nil
		if a, _, _, _ := adminAsk(t, url+"/admin/backup", "POST"); a.Status != 200 {
			t.Errorf("a backup after the first = %+v", a)
		}
	})
	t.Run("ErrUnavailable", func(t *testing.T) {
		url := serve(&gated{Backend: filled(t), err: storage.ErrClosed})
		got, _, _, err := adminAsk(t, url+"/admin/backup", "POST")
		if diff := cmp.Diff(adminAnswer{Status: 503, Code: "unavailable", Retry: "5"}, got); diff != "" || err != nil {
			t.Errorf("%v (-want +got):\n%s", err, diff)
		}
	})
	t.Run("ErrPartWay", func(t *testing.T) {
		// The store fails after a bucket's worth of snapshot: nothing has
		// been sent yet, since the snapshot is written whole first.
		url := serve(&gated{Backend: filled(t), failing: "b"})
		got, _, _, err := adminAsk(t, url+"/admin/backup", "POST")
		if diff := cmp.Diff(adminAnswer{Status: 503, Code: "unavailable", Retry: "5"}, got); diff != "" || err != nil {
			t.Errorf("%v (-want +got):\n%s", err, diff)
		}
	})
}

// TestRedactDSN: no password reaches restore's messages.
func TestRedactDSN(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://corebank@db.internal/corebank", "postgres://corebank@db.internal/corebank"},
		{"postgres://corebank:hunter2@db.internal/corebank", "postgres://corebank:xxxxx@db.internal/corebank"},
		{"postgresql:///corebank?host=/run/pg&password=hunter2&user=corebank", "postgresql:///corebank?host=%2Frun%2Fpg&password=xxxxx&user=corebank"},
		{"postgres://corebank:hunter2@db.internal:bad/x", "a postgres:// URL that does not parse"},
	} {
		if got := redactDSN(tt.in); got != tt.want || strings.Contains(got, "hunter2") {
			t.Errorf("redactDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestBackupSlowClient: a client that does not read its backup holds no
// transaction open. On bolt a read transaction held across a checkpoint
// that must grow the file past bbolt's memory map stalls every commit
// (the remap waits for readers, new readers wait for it), so the store
// here maps 1 MiB at first, and commits that grow it far past that must
// go on while the backup's answer sits unread.
func TestBackupSlowClient(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB through bolt")
	}
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), &bolt.Options{InitialMmapSize: 1 << 20, CheckpointSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := bytes.Repeat([]byte{'v'}, 1000)
	put := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i += 500 {
			err := db.Update(ctx, func(tx storage.Tx) error {
				for j := i; j < i+500; j++ {
					if err := tx.Put("b", storage.AppendUint64(nil, uint64(j)), val); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 20_000) // a 20 MB snapshot, more than the sockets buffer
	srv := httptest.NewServer(&admin{db: db, logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/admin/backup", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /admin/backup = %d", resp.StatusCode)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		put(20_000, 20_000) // the file grows to 40 MB and more
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("commits stalled while a backup's answer was unread")
	}
	info, err := snapshot.Verify(ctx, resp.Body)
	if err != nil || info.Pairs != 20_000 {
		t.Fatalf("the backup read late = %+v, %v", info, err)
	}
}
