package pgtest_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestProxy runs the proxy in front of an echo server, by TCP and by a
// Unix socket in the form DSN's URLs name one: a round trip takes at
// least twice the delay, bytes come back intact, and pipelined writes are
// not each held up by the delay in turn.
func TestProxy(t *testing.T) {
	tcp := echo(t, "tcp", "127.0.0.1:0")
	dir, err := os.MkdirTemp("", "pgx") // short: a socket's path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	echo(t, "unix", filepath.Join(dir, ".s.PGSQL.5433"))
	for _, tc := range []struct{ name, dsn string }{
		{"TCP", "postgres://postgres@" + tcp + "/bench?sslmode=disable"},
		{"Unix", "postgres:///bench?host=" + dir + "&port=5433&user=postgres&sslmode=disable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const delay = 20 * time.Millisecond
			proxied := pgtest.Proxy(t, tc.dsn, delay)
			u, err := url.Parse(proxied)
			if err != nil {
				t.Fatal(err)
			}
			if host := u.Hostname(); host != "127.0.0.1" || u.Path != "/bench" || u.Query().Get("sslmode") != "disable" ||
				u.Query().Has("host") || u.Query().Has("port") {
				t.Fatalf("Proxy(%q) = %q, want the database and parameters of the DSN on 127.0.0.1", tc.dsn, proxied)
			}
			c, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			start := time.Now()
			if _, err := c.Write([]byte{1}); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			if rtt := time.Since(start); rtt < 2*delay {
				t.Errorf("round trip %v, want at least %v", rtt, 2*delay)
			}

			sent := make([]byte, 1<<20)
			for i := range sent {
				sent[i] = byte(rand.IntN(256))
			}
			go func() { _, _ = c.Write(sent) }()
			got := make([]byte, len(sent))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, sent) {
				t.Error("the bytes came back changed")
			}
		})
	}

	// Twenty writes 10 ms apart through a 100 ms proxy: delivered in
	// turn, each waiting out the delay after the one before, they would
	// take at least 2 s each way; pipelined, about 0.4 s in all. The bound
	// leaves room for a slow machine.
	t.Run("Pipelined", func(t *testing.T) {
		const delay, n = 100 * time.Millisecond, 20
		u, _ := url.Parse(pgtest.Proxy(t, "postgres://"+tcp+"/bench", delay))
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		go func() {
			for range n {
				if _, err := c.Write([]byte{7}); err != nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		t.Logf("%d pipelined writes through a %v proxy came back in %v", n, delay, took)
		if took < 2*delay || took > n*delay*3/4 {
			t.Errorf("%d pipelined writes came back in %v, want between %v and %v", n, took, 2*delay, n*delay*3/4)
		}
	})
}

// echo serves an echo server on addr until t ends, and returns its
// address.
func echo(t *testing.T, network, addr string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}
