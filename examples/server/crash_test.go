package main_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	crashCycles   = flag.Int("crash.cycles", 15, "TestCrashExactlyOnce: how many times the server is killed (.ci/run: 50)")
	crashSeed     = flag.Uint64("crash.seed", 0, "TestCrashExactlyOnce: seed of the clients and the kill moments (0: from the time)")
	crashDowntime = flag.Duration("crash.downtime", 0, "TestCrashExactlyOnce: when set, the server runs on -fake-clock and each restart starts this much later, as after an outage that long (0: the real clock)")
)

// Crash test parameters: clients sending at once, and how long each
// process lives before SIGKILL (uniform in [crashMinLife, crashMaxLife)).
const (
	crashClients = 6
	crashMinLife = 5 * time.Millisecond
	crashMaxLife = 120 * time.Millisecond
	// crashPause bounds a client's random pause between keys.
	crashPause = 4 * time.Millisecond
	// crashBusyLimit bounds how long a key may answer 409 "in flight" to
	// an attempt of this process's own lifetime (one the client gave up
	// waiting for) before the test gives the key up.
	crashBusyLimit = 10 * time.Second
)

// TestCrashExactlyOnce runs the server binary on a bolt file while
// concurrent clients POST inflows, accounts and payment details, each with
// a fresh Idempotency-Key, and SIGKILLs it at random moments
// (-crash.cycles times). After each restart on the same file, every request
// that got no answer is sent again, same key and same body, until it is
// answered; and each client sends again the last key it saw answered before
// the kill. Then it checks through the API that every key had exactly one
// effect: each inflow is credited once (counted by its narration, which is
// the key, in the account's statements, and the balance is the sum of the
// keys' amounts), each account and payment detail exists once (counted by
// its display_name or meta.crash_key), and every answer to the same key
// names the same object.
//
// A 409 "in flight" answer is allowed only for a key whose earlier attempt
// reached the same process and went unanswered (the client stopped
// waiting): a key is never in flight in a process it did not reach.
// With -crash.downtime the server runs on its fake clock and every restart
// comes that much later, which models outages longer than any timeout an
// in-flight key may have.
func TestCrashExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("SIGKILLs the server binary -crash.cycles times (about 6 s); run without -short")
	}
	t.Parallel()
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -crash.seed=%d)", seed, seed)
	start := time.Now()
	r := newCrashRun(t, seed)
	defer r.abort()
	r.setup()
	var wg sync.WaitGroup
	for i := range crashClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.client(i)
		}()
	}
	r.kill(*crashCycles)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("clients still sending 60 s after the last restart\n%s", r.proc.logs)
	}
	r.verify()
	t.Logf("%d kills in %v: %s", *crashCycles, time.Since(start).Round(time.Millisecond), r.summary())
}

// crashLife is one process lifetime of the server.
type crashLife struct {
	gen    int
	c      *client
	killed atomic.Bool   // set just before SIGKILL
	next   chan struct{} // closed once the following lifetime serves
}

// crashReq is one Idempotency-Key and its request, owned by the client
// goroutine that sends it until the run ends.
type crashReq struct {
	key, path string
	body      map[string]any
	amount    int64 // inflows
	account   int   // index of the client's account (inflows)

	unanswered []int // lifetimes in which an attempt got no answer
	answered   bool
	first      answer // the first answer seen
	firstGen   int
	id         string // the object the first answer names
	lostKey    string // why the key was given up unanswered, or ""
	replays    int    // answers to the key after the first
}

func (q *crashReq) String() string {
	s := fmt.Sprintf("POST %s key %s", q.path, q.key)
	if q.amount != 0 {
		s += fmt.Sprintf(" (amount %d)", q.amount)
	}
	return s
}

// history says what the test saw of q, for failure messages.
func (q *crashReq) history() string {
	var b strings.Builder
	if len(q.unanswered) > 0 {
		fmt.Fprintf(&b, "unanswered in lifetimes %v; ", q.unanswered)
	}
	switch {
	case q.answered:
		fmt.Fprintf(&b, "first answered %d (replayed %v) in lifetime %d naming %q", q.first.status, q.first.replayed, q.firstGen, q.id)
	case q.lostKey != "":
		fmt.Fprintf(&b, "given up: %s", q.lostKey)
	default:
		b.WriteString("never answered")
	}
	return b.String()
}

type crashRun struct {
	t        *testing.T
	seed     uint64
	bin, db  string
	boot     string
	key      string
	started  time.Time // the server's clock when the run started
	clock    time.Time // the fake clock's start in the current lifetime
	proc     *proc
	cur      atomic.Pointer[crashLife]
	stopping atomic.Bool   // no new keys; settle what is open and stop
	aborted  chan struct{} // closed when the test ends
	http     *http.Client

	accounts []string // one per client: where its inflows go
	cps      []string // one per client: its payment details' counterparty

	mu       sync.Mutex
	reqs     [][]*crashReq // per client
	mismatch []string      // answers to one key that disagree
}

func newCrashRun(t *testing.T, seed uint64) *crashRun {
	dir := t.TempDir()
	now := time.Now().UTC().Truncate(time.Second)
	return &crashRun{
		t: t, seed: seed, bin: buildServer(t),
		db: filepath.Join(dir, "corebank.db"), boot: filepath.Join(dir, "bootstrap.json"),
		started: now, clock: now,
		aborted: make(chan struct{}),
		reqs:    make([][]*crashReq, crashClients),
		http: &http.Client{Timeout: 10 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 2 * crashClients}},
	}
}

// abort releases clients that wait for a lifetime that will not come.
func (r *crashRun) abort() {
	select {
	case <-r.aborted:
	default:
		close(r.aborted)
	}
}

// start runs a new server process on the store and makes it the current
// lifetime.
func (r *crashRun) start(gen int) *crashLife {
	args := []string{"-db", r.db, "-bootstrap-out", r.boot}
	if *crashDowntime > 0 {
		args = append(args, "-fake-clock", "-clock-start", r.clock.Format(time.RFC3339))
	}
	r.proc = startServer(r.t, r.bin, args...)
	l := &crashLife{gen: gen, c: &client{base: "http://" + r.proc.addr, key: r.key, http: r.http}, next: make(chan struct{})}
	if old := r.cur.Swap(l); old != nil {
		close(old.next)
	}
	return l
}

// setup starts the first lifetime and creates, without Idempotency-Key and
// before any kill, each client's account and counterparty.
func (r *crashRun) setup() {
	t := r.t
	l := r.start(0)
	r.key = bootKey(t, r.boot)
	l.c.key = r.key
	for i := range crashClients {
		a, err := l.c.send("POST", "/accounts", "", map[string]any{
			"type": "checking", "currency": "USD", "display_name": fmt.Sprintf("crash target c%d", i)})
		if err != nil || a.status != http.StatusCreated {
			t.Fatalf("create account: %d %v %v", a.status, a.body, err)
		}
		r.accounts = append(r.accounts, dataField(a.body, "id").(string))
		a, err = l.c.send("POST", "/counterparties", "", map[string]any{"type": "individual", "profile": map[string]any{
			"first_name": "Ada", "last_name": "Lovelace", "relationship": "vendor",
			"email":   fmt.Sprintf("ada.c%d@example.com", i),
			"address": map[string]any{"line1": "1 Main St", "city": "London", "country": "GB"}}})
		if err != nil || a.status != http.StatusCreated {
			t.Fatalf("create counterparty: %d %v %v", a.status, a.body, err)
		}
		r.cps = append(r.cps, dataField(a.body, "id").(string))
	}
}

// kill SIGKILLs the current process n times, each after a random life, and
// restarts it on the same file; the lifetime after the last kill is left
// running for the clients to settle their keys.
func (r *crashRun) kill(n int) {
	t := r.t
	rng := rand.New(rand.NewPCG(r.seed, 0xc0ffee))
	for gen := 1; gen <= n; gen++ {
		l := r.cur.Load()
		wait := crashMinLife + time.Duration(rng.Int64N(int64(crashMaxLife-crashMinLife)))
		select {
		case err := <-r.proc.done:
			t.Fatalf("server exited on its own in lifetime %d: %v\n%s", l.gen, err, r.proc.logs)
		case <-time.After(wait):
		}
		l.killed.Store(true)
		if err := r.proc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-r.proc.done
		if gen == n {
			r.stopping.Store(true)
		}
		r.clock = r.clock.Add(*crashDowntime)
		r.start(gen)
	}
}

// nextLife waits for a lifetime after l.
func (r *crashRun) nextLife(l *crashLife) (*crashLife, bool) {
	select {
	case <-l.next:
		return r.cur.Load(), true
	case <-r.aborted:
		return nil, false
	}
}

// client sends new keys until the run stops. A key is settled (answered or
// given up) before the next one is sent; after a kill the client sends
// again, in the next lifetime, the key it had in flight and the last key it
// saw answered.
func (r *crashRun) client(i int) {
	rng := rand.New(rand.NewPCG(r.seed, uint64(i)+1))
	l := r.cur.Load()
	var last *crashReq // answered in lifetime l
	for n := 0; !r.stopping.Load(); n++ {
		q := r.newReq(rng, i, n)
		r.mu.Lock()
		r.reqs[i] = append(r.reqs[i], q)
		r.mu.Unlock()
		var ok bool
		gen := l.gen
		if l, ok = r.settle(l, q); !ok {
			return
		}
		if l.gen != gen && last != nil {
			if l, ok = r.settle(l, last); !ok {
				return
			}
		}
		last = q
		// A pause between keys: what is in flight at a kill matters, not
		// how many keys were sent; each key costs the store kilobytes.
		time.Sleep(time.Duration(rng.IntN(int(crashPause))))
	}
	// The final lifetime: the key answered last must replay too.
	if last != nil {
		r.settle(l, last)
	}
}

// newReq is client i's n-th key: an inflow to its account (half the keys),
// an account or a payment detail of its counterparty.
func (r *crashRun) newReq(rng *rand.Rand, i, n int) *crashReq {
	q := &crashReq{key: fmt.Sprintf("crash-c%d-%d", i, n)}
	switch k := rng.IntN(4); {
	case k < 2:
		q.path, q.amount, q.account = "/sandbox/inflows", 1+rng.Int64N(100_000), i
		q.body = map[string]any{"account_id": r.accounts[i], "amount": q.amount, "narration": q.key}
	case k == 2:
		q.path = "/accounts"
		q.body = map[string]any{"type": "checking", "currency": "USD", "display_name": q.key}
	default:
		q.path = "/payment-details"
		q.body = map[string]any{"counterparty_id": r.cps[i], "payment_method": "bank-transfer", "currency": "USD",
			"country": "US", "scheme": "ach", "account_holder_name": "Ada Lovelace", "routing_number": "091000019",
			"account_number": fmt.Sprintf("%09d", rng.IntN(1e9)), "account_type": "checking",
			"meta": map[string]any{"crash_key": q.key}}
	}
	return q
}

// settle sends q until it is answered or given up, moving to the next
// lifetime after a kill, and returns the lifetime it ended in; false when
// the test ended first.
func (r *crashRun) settle(l *crashLife, q *crashReq) (*crashLife, bool) {
	var busySince time.Time
	for {
		a, err := l.c.send("POST", q.path, q.key, q.body)
		if err != nil {
			q.unanswered = append(q.unanswered, l.gen)
			if l.killed.Load() {
				var ok bool
				if l, ok = r.nextLife(l); !ok {
					return nil, false
				}
				continue
			}
			if len(q.unanswered) > 50 {
				r.giveUp(l, q, fmt.Sprintf("no answer from a running server after 50 attempts: %v", err))
				return l, true
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if a.status == http.StatusConflict {
			if !slices.Contains(q.unanswered, l.gen) {
				r.giveUp(l, q, fmt.Sprintf("409 %q in lifetime %d, which no earlier attempt of the key reached", a.body["message"], l.gen))
				return l, true
			}
			if busySince.IsZero() {
				busySince = time.Now()
			}
			if time.Since(busySince) > crashBusyLimit {
				r.giveUp(l, q, fmt.Sprintf("409 %q for %v in lifetime %d", a.body["message"], crashBusyLimit, l.gen))
				return l, true
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r.answered(l, q, a)
		return l, true
	}
}

// giveUp stops sending q: a key never answered keeps why, for the check of
// its effects; an answered one that stopped answering is a failure.
func (r *crashRun) giveUp(l *crashLife, q *crashReq, why string) {
	if !q.answered {
		q.lostKey = why
		return
	}
	r.mu.Lock()
	r.mismatch = append(r.mismatch, fmt.Sprintf("%s: answered in lifetime %d, then %s", q, q.firstGen, why))
	r.mu.Unlock()
}

// answered records a to q: the first answer, or one that must name the
// same object.
func (r *crashRun) answered(l *crashLife, q *crashReq, a answer) {
	id, _ := a.body["id"].(string)
	if d, ok := a.body["data"].(map[string]any); ok {
		id, _ = d["id"].(string)
	}
	if !q.answered {
		q.answered, q.first, q.firstGen, q.id = true, a, l.gen, id
		return
	}
	q.replays++
	if a.status != q.first.status || id != q.id || !a.replayed {
		r.mu.Lock()
		r.mismatch = append(r.mismatch, fmt.Sprintf("%s: answered %d (replayed %v) naming %q in lifetime %d, but first %d naming %q in lifetime %d",
			q, a.status, a.replayed, id, l.gen, q.first.status, q.id, q.firstGen))
		r.mu.Unlock()
	}
}

// verify checks through the API of the last lifetime that every key had
// exactly one effect.
func (r *crashRun) verify() {
	t := r.t
	c := r.cur.Load().c
	type effect struct {
		id     string
		amount int64
	}
	effects := map[string]map[string][]effect{} // path -> key -> effects
	add := func(path, key, id string, amount int64) {
		if effects[path] == nil {
			effects[path] = map[string][]effect{}
		}
		effects[path][key] = append(effects[path][key], effect{id, amount})
	}
	for _, it := range r.list(c, "/accounts") {
		if name, _ := it["display_name"].(string); strings.HasPrefix(name, "crash-") {
			add("/accounts", name, it["id"].(string), 0)
		}
	}
	for _, cp := range r.cps {
		for _, it := range r.list(c, "/counterparties/"+cp+"/payment-details") {
			meta, _ := it["meta"].(map[string]any)
			if key, _ := meta["crash_key"].(string); key != "" {
				add("/payment-details", key, it["id"].(string), 0)
			}
		}
	}
	balances := make([]int64, len(r.accounts))
	end := r.clock // a fake clock stands still in a lifetime
	if *crashDowntime == 0 {
		end = time.Now().UTC()
	}
	for i, acct := range r.accounts {
		a, err := c.send("GET", "/accounts/"+acct, "", nil)
		if err != nil || a.status != http.StatusOK {
			t.Fatalf("GET /accounts/%s: %d %v %v", acct, a.status, a.body, err)
		}
		bal, _ := dataField(a.body, "balance").(map[string]any)
		avail, _ := bal["available"].(float64)
		balances[i] = int64(avail)
		for _, tx := range r.statement(c, acct, end) {
			amount, _ := tx["amount"].(float64)
			narr, _ := tx["narration"].(string)
			add("/sandbox/inflows", narr, tx["id"].(string), int64(amount))
		}
	}

	// Each key: exactly one effect, the one its answers named.
	sent := map[string]map[string]*crashReq{}
	want := make([]int64, len(r.accounts))
	type tally struct{ keys, none, twice, other, unanswered int }
	tallies := map[string]*tally{}
	var balance, twice, msgs []string // shown in this order, r.mismatch after twice
	for _, reqs := range r.reqs {
		for _, q := range reqs {
			if sent[q.path] == nil {
				sent[q.path] = map[string]*crashReq{}
				tallies[q.path] = &tally{}
			}
			sent[q.path][q.key] = q
			tl := tallies[q.path]
			tl.keys++
			if !q.answered {
				tl.unanswered++
			}
			if q.amount != 0 {
				want[q.account] += q.amount
			}
			got := effects[q.path][q.key]
			var ids []string
			for _, e := range got {
				ids = append(ids, e.id)
				if q.amount != 0 && e.amount != q.amount {
					msgs = append(msgs, fmt.Sprintf("%s: credited %d in %s", q, e.amount, e.id))
				}
			}
			switch {
			case len(got) > 1:
				tl.twice++
				twice = append(twice, fmt.Sprintf("%s: %d effects %v, want 1; %s", q, len(got), ids, q.history()))
			case len(got) == 0:
				tl.none++
				msgs = append(msgs, fmt.Sprintf("%s: no effect, want 1; %s", q, q.history()))
			case !q.answered:
				msgs = append(msgs, fmt.Sprintf("%s: one effect %v but no answer; %s", q, ids, q.history()))
			case q.first.status != http.StatusCreated:
				tl.other++
				msgs = append(msgs, fmt.Sprintf("%s: answered %d %v, want 201; effect %v", q, q.first.status, q.first.body, ids))
			case q.amount == 0 && q.id != got[0].id:
				tl.other++
				msgs = append(msgs, fmt.Sprintf("%s: the answer names %q, the object with the key is %q; %s", q, q.id, got[0].id, q.history()))
			}
		}
	}
	for path, keys := range effects {
		for key, got := range keys {
			if _, ok := sent[path][key]; !ok {
				msgs = append(msgs, fmt.Sprintf("POST %s: %d objects carry key %q, which was never sent", path, len(got), key))
			}
		}
	}
	for i, acct := range r.accounts {
		if balances[i] != want[i] {
			balance = append(balance, fmt.Sprintf("account %s (client %d): available balance %d, want %d, the sum of the amounts of the inflow keys sent to it (difference %+d)",
				acct, i, balances[i], want[i], balances[i]-want[i]))
		}
	}
	paths := make([]string, 0, len(tallies))
	for p := range tallies {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if tl := tallies[p]; tl.none+tl.twice+tl.other+tl.unanswered > 0 {
			t.Errorf("POST %s: of %d keys, %d had more than one effect, %d none, %d another answer or object than their effect; %d were never answered",
				p, tl.keys, tl.twice, tl.none, tl.other, tl.unanswered)
		}
	}
	r.mismatch = slices.Concat(balance, twice, r.mismatch, msgs)
	const show = 30
	for i, m := range r.mismatch {
		if i == show {
			t.Errorf("... and %d more", len(r.mismatch)-show)
			break
		}
		t.Error(m)
	}
}

// list reads every page of a list route.
func (r *crashRun) list(c *client, path string) []map[string]any {
	r.t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		q := url.Values{"limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		a, err := c.send("GET", path+"?"+q.Encode(), "", nil)
		if err != nil || a.status != http.StatusOK {
			r.t.Fatalf("GET %s: %d %v %v", path, a.status, a.body, err)
		}
		items, _ := a.body["data"].([]any)
		for _, it := range items {
			out = append(out, it.(map[string]any))
		}
		meta, _ := a.body["meta"].(map[string]any)
		pg, _ := meta["pagination"].(map[string]any)
		if cursor, _ = pg["next_cursor"].(string); cursor == "" {
			return out
		}
	}
}

// statement reads the transactions of acct in every month from the run's
// start to end.
func (r *crashRun) statement(c *client, acct string, end time.Time) []map[string]any {
	r.t.Helper()
	var out []map[string]any
	from := time.Date(r.started.Year(), r.started.Month(), 1, 0, 0, 0, 0, time.UTC)
	for m := from; !m.After(end); m = m.AddDate(0, 1, 0) {
		cursor := ""
		for {
			q := url.Values{"limit": {"100"}, "year": {fmt.Sprint(m.Year())}, "month": {fmt.Sprint(int(m.Month()))}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			path := "/accounts/" + acct + "/statements?" + q.Encode()
			a, err := c.send("GET", path, "", nil)
			if err != nil || a.status != http.StatusOK {
				r.t.Fatalf("GET %s: %d %v %v", path, a.status, a.body, err)
			}
			txs, _ := dataField(a.body, "transactions").([]any)
			for _, tx := range txs {
				out = append(out, tx.(map[string]any))
			}
			pg, _ := dataField(a.body, "pagination").(map[string]any)
			if cursor, _ = pg["next_cursor"].(string); cursor == "" {
				break
			}
		}
	}
	return out
}

// summary counts what the run sent.
func (r *crashRun) summary() string {
	keys, lost, replays := map[string]int{}, 0, 0
	for _, reqs := range r.reqs {
		for _, q := range reqs {
			keys[q.path]++
			lost += len(q.unanswered)
			replays += q.replays
		}
	}
	return fmt.Sprintf("keys %v, %d attempts unanswered and sent again, %d answers to keys already answered",
		keys, lost, replays)
}
