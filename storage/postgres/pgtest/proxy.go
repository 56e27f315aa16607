package pgtest

import (
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Proxy returns a DSN equivalent to dsn whose connections go through a TCP
// proxy that delays each direction by delay, so that delay = 500µs puts a
// 1 ms round trip between a client and the server, as on a network between
// hosts. The proxy runs in a process of its own (proxy_process.go), or in
// the test process when that cannot start; it listens on 127.0.0.1 and
// closes, with every connection through it, when tb ends.
//
// Only latency is added, not a limit on throughput: each chunk read from
// one side is stamped with the time it was read and written to the other
// side at that time plus delay, by a writer of its own for each direction,
// so pipelined traffic (several statements sent before their answers come
// back, or several connections at once) is not slowed by more than delay.
// A chunk never goes out before its delay; on an idle machine it goes out
// within some tens of microseconds after (the writers wait on a timerfd),
// while a busy one adds its scheduling delays, so a benchmark should
// measure the round trip it got.
//
// dsn is a postgres:// or postgresql:// URL naming one server, by TCP
// host and port or, as DSN's do, by a Unix socket directory in the host
// parameter (the proxy then dials the socket, .s.PGSQL.<port> in that
// directory, and the returned URL names the proxy by TCP). Proxy fails tb
// for any other form.
func Proxy(tb testing.TB, dsn string, delay time.Duration) string {
	tb.Helper()
	network, addr, u, err := proxyTarget(dsn)
	if err != nil {
		tb.Fatalf("pgtest: Proxy: %v", err)
	}
	if listen, err := startProxyProcess(tb, network, addr, delay); err == nil {
		u.Host = listen
		return u.String()
	} else {
		tb.Logf("pgtest: Proxy: in the test process (%v)", err)
	}
	p, err := newProxy(network, addr, delay)
	if err != nil {
		tb.Fatalf("pgtest: Proxy: %v", err)
	}
	tb.Cleanup(p.close)
	u.Host = p.ln.Addr().String()
	return u.String()
}

// newProxy starts a proxy to addr on 127.0.0.1.
func newProxy(network, addr string, delay time.Duration) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, network: network, addr: addr, delay: delay, early: wakeLatency(delay), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// proxyTarget returns where dsn's server listens, and dsn's URL without
// its host and port parameters.
func proxyTarget(dsn string) (network, addr string, u *url.URL, err error) {
	u, err = url.Parse(dsn)
	if err != nil {
		return "", "", nil, err
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", "", nil, errors.New("want a postgres:// or postgresql:// URL")
	}
	q := u.Query()
	host, port := q.Get("host"), q.Get("port")
	q.Del("host")
	q.Del("port")
	u.RawQuery = q.Encode()
	if host == "" {
		host = u.Hostname()
		if port == "" {
			port = u.Port()
		}
	}
	if port == "" {
		port = "5432"
	}
	switch {
	case strings.Contains(host, ","):
		return "", "", nil, errors.New("want one host, not a list")
	case strings.HasPrefix(host, "/"):
		return "unix", filepath.Join(host, ".s.PGSQL."+port), u, nil
	case host == "":
		return "", "", nil, errors.New("no host: name a TCP host or a socket directory")
	}
	return "tcp", net.JoinHostPort(host, port), u, nil
}

type proxy struct {
	ln      net.Listener
	network string // of the server: tcp or unix
	addr    string
	delay   time.Duration
	early   time.Duration // how much sooner than delay a writer asks to wake
	wg      sync.WaitGroup
	mu      sync.Mutex
	closed  bool
	conns   map[net.Conn]struct{}
}

// accept serves the listener until it closes.
func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial(p.network, p.addr)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			return
		}
		var once sync.Once
		closeBoth := func() {
			once.Do(func() {
				c.Close()
				s.Close()
				p.untrack(c, s)
			})
		}
		var pair sync.WaitGroup
		pair.Add(2)
		p.wg.Add(3)
		go func() { defer p.wg.Done(); defer pair.Done(); p.pipe(s, c, closeBoth) }()
		go func() { defer p.wg.Done(); defer pair.Done(); p.pipe(c, s, closeBoth) }()
		go func() { defer p.wg.Done(); pair.Wait(); closeBoth() }()
	}
}

// track records a connection pair, or closes it and reports false once
// the proxy is closed.
func (p *proxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		s.Close()
		return false
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	return true
}

func (p *proxy) untrack(c, s net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	delete(p.conns, s)
}

// chunk is what one read returned, and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk delay after it was read. The reader
// hands chunks to a writer over a channel, so that it keeps reading while
// earlier chunks wait out their delay; a full channel (a slow dst) stops
// it, as TCP's window would. At src's end, dst's write side is shut once
// the queued chunks are written, so a half-closed connection stays half
// open; on an error both connections close.
func (p *proxy) pipe(dst, src net.Conn, closeBoth func()) {
	q := make(chan chunk, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm := newTimer()
		defer tm.close()
		for ch := range q {
			due := ch.at.Add(p.delay)
			tm.sleepUntil(due.Add(-p.early))
			for time.Now().Before(due) {
				runtime.Gosched()
			}
			if _, err := dst.Write(ch.b); err != nil {
				closeBoth()
				for range q { // let the reader finish
				}
				return
			}
		}
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()}
		}
		if err != nil {
			break
		}
	}
	close(q)
	<-done
}

// timer sleeps to the microsecond. time.Sleep does not: the runtime waits
// for its timers in epoll_wait(2), whose timeout is in milliseconds, so
// time.Sleep(500µs) takes over 1 ms; and nanosleep(2) holds a P for the
// sleep, so a hundred sleeping writers stall the process. A timerfd read
// through the runtime's poller does neither.
type timer struct {
	fd int
	f  *os.File // nil: the timerfd could not be made; time.Sleep then
}

func newTimer() *timer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &timer{fd: -1}
	}
	return &timer{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")} // non-blocking: read through the poller
}

// sleepUntil returns at t, or at once when t has passed.
func (tm *timer) sleepUntil(t time.Time) {
	wait := time.Until(t)
	if wait <= 0 {
		return
	}
	if tm.f == nil {
		time.Sleep(wait)
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(wait.Nanoseconds())}
	if err := unix.TimerfdSettime(tm.fd, 0, &spec, nil); err != nil {
		time.Sleep(wait)
		return
	}
	var expirations [8]byte
	_, _ = tm.f.Read(expirations[:])
}

// wakeLatency returns about how late a timer wakes on this machine at the
// least (the tenth percentile of a few sleeps), at most a quarter of delay
// and 200µs. The writers ask to wake that much sooner and spin out what is
// left, if anything, so that a chunk is never delivered before its delay
// and an idle proxy adds close to delay, not delay plus the kernel's timer
// slack and the runtime's wake-up.
func wakeLatency(delay time.Duration) time.Duration {
	if delay <= 0 {
		return 0
	}
	tm := newTimer()
	defer tm.close()
	late := make([]time.Duration, 21)
	for i := range late {
		at := time.Now().Add(200 * time.Microsecond)
		tm.sleepUntil(at)
		late[i] = time.Since(at)
	}
	slices.Sort(late)
	return min(late[len(late)/10], delay/4, 200*time.Microsecond)
}

func (tm *timer) close() {
	if tm.f != nil {
		tm.f.Close()
	}
}

// close stops the listener and every connection, and waits for their
// goroutines.
func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
