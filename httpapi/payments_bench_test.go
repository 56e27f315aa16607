package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// payBench is an API with one funded USD account and an ACH payment detail
// to pay from it.
type payBench struct {
	e        *env
	acct, pd string
	seq      atomic.Int64
}

func newPayBench(b *testing.B, backend string, opts ...envOpt) *payBench {
	b.Helper()
	var e *env
	switch backend {
	case "memory":
		e = newEnvDB(b, memory.New(), opts...)
	case "bolt":
		db, err := bolt.Open(filepath.Join(b.TempDir(), "db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		e = newEnvDB(b, db, opts...)
	default:
		b.Fatalf("backend %q", backend)
	}
	p := &payBench{e: e}
	p.acct = e.account(e.key, "", "USD")
	e.fund(e.key, p.acct, 1<<50)
	p.pd = e.achDetail(e.key, e.counterparty(e.key, "", "Bench", "Payee"))
	return p
}

// body is a POST /transfers body with a fresh unique_reference.
func (p *payBench) body() []byte {
	n := p.seq.Add(1)
	return []byte(`{"account_id":"` + p.acct + `","payment_detail_id":"` + p.pd +
		`","amount":1,"payment_type":"bank-transfer","narration":"bench","unique_reference":"b-` + strconv.FormatInt(n, 10) + `"}`)
}

func (p *payBench) post(b *testing.B) {
	r := httptest.NewRequest("POST", "/transfers", bytes.NewReader(p.body()))
	r.Header.Set("Authorization", "Bearer "+p.e.key)
	w := httptest.NewRecorder()
	p.e.h.ServeHTTP(w, r)
	if w.Code != 201 {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
}

// BenchmarkTransfers measures POST /transfers through the whole handler
// stack in process (auth, routing, strict decoding, scope, the payments
// transaction with its ledger holds and outbox event, the JSON envelope),
// sequentially and with 16 concurrent callers, on both backends.
func BenchmarkTransfers(b *testing.B) {
	for _, backend := range []string{"memory", "bolt"} {
		b.Run(backend+"/sequential", func(b *testing.B) {
			p := newPayBench(b, backend)
			b.ReportAllocs()
			for b.Loop() {
				p.post(b)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
		})
		b.Run(backend+"/parallel16", func(b *testing.B) {
			p := newPayBench(b, backend)
			b.ReportAllocs()
			// RunParallel starts parallelism*GOMAXPROCS goroutines: 16 callers.
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p.post(b)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "transfers/s")
		})
	}
}

// loopbackCount is how many requests each server gets in
// BenchmarkLoopbackTransfers.
const loopbackCount = 20_000

// loopbackRounds is how many turns loopbackCount is sent in.
const loopbackRounds = 4

// BenchmarkLoopbackTransfers drives real HTTP over loopback: an
// httptest.Server on 127.0.0.1, a client with 8 keep-alive connections
// (MaxConnsPerHost 8) and 16 goroutines sending loopbackCount requests.
// It measures a bare net/http JSON echo handler and POST /transfers on
// memory and on bolt the same way in the same run, and reports each
// req/s and memory's share of the echo rate. The work is bounded: each
// server gets loopbackCount requests once, in loopbackRounds turns,
// whatever b.N is (one run takes seconds, so the framework asks for no
// more), and ns/op means nothing here; read the req/s metrics.
func BenchmarkLoopbackTransfers(b *testing.B) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	})
	mem := newPayBench(b, "memory")
	blt := newPayBench(b, "bolt")
	rate := loopbackRates(b, []loopbackTarget{{"echo", echo, mem}, {"memory", mem.e.h, mem}, {"bolt", blt.e.h, blt}},
		loopbackRounds, false)
	b.ReportMetric(rate["memory"]/rate["echo"], "memory/echo")
}

// BenchmarkLoopbackTransfersLimited is BenchmarkLoopbackTransfers with
// rate limits on (httpapi.Limits) beside the same servers without them,
// in turns, on memory and on bolt: every request from 127.0.0.1 with one
// key, so each takes a token from one address bucket and one key bucket
// (all 16 callers on the same two locks) and passes the failed-auth
// check as a known key. The limits are generous (a million a second per
// key and address, failed authentications at the production default), so
// nothing is refused. It reports each req/s and the limited rate's share
// of the unlimited one (limited/unlimited, 1 when they cost nothing).
func BenchmarkLoopbackTransfersLimited(b *testing.B) {
	lots := httpapi.Rate{Count: 1_000_000, Per: time.Second, Burst: 1_000_000}
	limited := func(o *httpapi.Options) {
		o.Limits = &httpapi.Limits{Key: lots, Address: lots,
			FailedAuth: httpapi.Rate{Count: 10, Per: time.Minute, Burst: 20}}
	}
	var targets []loopbackTarget
	for _, backend := range []string{"memory", "bolt"} {
		plain, lim := newPayBench(b, backend), newPayBench(b, backend, limited)
		targets = append(targets, loopbackTarget{backend, plain.e.h, plain}, loopbackTarget{backend + "_limited", lim.e.h, lim})
	}
	// Shorter turns than BenchmarkLoopbackTransfers', in an order reversed
	// every round, so that the pair compared meets the same machine.
	rate := loopbackRates(b, targets, 20, true)
	b.ReportMetric(rate["memory_limited"]/rate["memory"], "memory_limited/unlimited")
	b.ReportMetric(rate["bolt_limited"]/rate["bolt"], "bolt_limited/unlimited")
}

// loopbackTarget is one server the loopback benchmarks measure: its name
// in the metrics, its handler, and the bench whose key and bodies it gets.
type loopbackTarget struct {
	name string
	h    http.Handler
	p    *payBench
}

// loopbackRates serves each target over loopback and sends each
// loopbackCount requests in rounds turns, the targets taking turns (in
// reversed order every other round when alternate), so that a change in
// the machine's pace during the run (another process, the frequency)
// weighs on each of them alike rather than on whichever ran then. It
// reports each target's req/s and returns the rates by name.
func loopbackRates(b *testing.B, targets []loopbackTarget, rounds int, alternate bool) map[string]float64 {
	b.Helper()
	urls := make([]string, len(targets))
	for i, t := range targets {
		srv := httptest.NewServer(t.h)
		b.Cleanup(srv.Close)
		urls[i] = srv.URL + "/transfers"
	}
	reqs := make([]int, len(targets))
	durs := make([]time.Duration, len(targets))
	b.ResetTimer()
	for round := range rounds {
		for j := range targets {
			i := j
			if alternate && round%2 == 1 {
				i = len(targets) - 1 - j
			}
			d, err := loopback(urls[i], targets[i].p, loopbackCount/rounds)
			if err != nil {
				b.Fatalf("%s: %v", targets[i].name, err)
			}
			reqs[i] += loopbackCount / rounds
			durs[i] += d
		}
	}
	rate := map[string]float64{}
	for i, t := range targets {
		rate[t.name] = float64(reqs[i]) / durs[i].Seconds()
		b.ReportMetric(rate[t.name], t.name+"_req/s")
	}
	return rate
}

// loopback sends n POST /transfers bodies to url over 8 keep-alive
// connections from 16 goroutines and returns the wall time.
func loopback(url string, p *payBench, n int) (time.Duration, error) {
	tr := &http.Transport{MaxConnsPerHost: 8, MaxIdleConnsPerHost: 8, MaxIdleConns: 8, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	auth := "Bearer " + p.e.key
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				req, err := http.NewRequest("POST", url, bytes.NewReader(p.body()))
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				req.Header.Set("Authorization", auth)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 201 {
					firstErr.CompareAndSwap(nil, fmt.Errorf("status %d", resp.StatusCode))
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return d, err
	}
	return d, nil
}
