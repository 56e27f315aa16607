package bank_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
	"github.com/corebank/corebank/webhooks"
)

// A cluster is two banks ("nodes") over one store, as two server processes
// on one database are: each with its own services, its own mock clock (the
// sandbox's, kept in the store) and its own due runner.
type cluster struct {
	t     testing.TB
	db    storage.Backend
	nodes [2]*node
	root  string // the root entity
	key   string // its API key
	recv  *receiver

	mu     sync.Mutex
	runs   map[string]int    // kind/at/id -> times a runner was handed it
	byNode [2]map[string]int // kind -> items handed to each node's runner
}

type node struct {
	*bank.Bank
	mock *clock.Mock
	srv  *httptest.Server
}

var nodeStart = time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)

// newCluster builds the two nodes over db, each passed through opt.
func newCluster(t testing.TB, db storage.Backend, opt func(i int, o *bank.Options)) *cluster {
	t.Helper()
	c := &cluster{t: t, db: db, runs: map[string]int{}, byNode: [2]map[string]int{{}, {}}}
	c.recv = newReceiver(t)
	for i := range c.nodes {
		mock := clock.NewMock()
		mock.Set(nodeStart)
		o := bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: quiet,
			NodeID: fmt.Sprintf("n%d", i+1), DueInterval: 5 * time.Millisecond}
		o.Webhooks.HTTPClient = c.recv.srv.Client()
		if opt != nil {
			opt(i, &o)
		}
		b, err := bank.New(db, o)
		if err != nil {
			t.Fatal(err)
		}
		b.Due.OnRun(func(kind string, it storage.DueItem) {
			c.mu.Lock()
			c.runs[fmt.Sprintf("%s/%d/%s", kind, it.At, it.ID)]++
			c.byNode[i][kind]++
			c.mu.Unlock()
		})
		n := &node{Bank: b, mock: mock, srv: httptest.NewServer(b.Handler)}
		t.Cleanup(n.srv.Close)
		c.nodes[i] = n
	}
	ctx := context.Background()
	if _, err := c.nodes[0].Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	root, _, err := c.nodes[0].Entities.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.root, c.key = root.EntityID, root.APIKey
	expires := int64(webhooks.MaxExpiresIn)
	if _, err := c.nodes[1].Webhooks.CreateWebhook(ctx, corebank.System(), webhooks.NewWebhook{
		EntityID: c.root, URL: c.recv.srv.URL, ExpiresIn: &expires, EnabledEvents: &webhooks.EnabledEvents{All: true},
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// run starts both nodes' background work (bank.Run: the webhook
// dispatcher, the clock sync) and a due runner per node that runs what is
// due on its own clock, as a real-clock node does every DueInterval. stop
// ends them and waits.
func (c *cluster) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = n.Run(ctx)
		}()
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = n.RunDue(ctx, n.mock.Now())
				time.Sleep(time.Millisecond)
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// advance moves the time by POST /sandbox/clock/advance on node i, which
// runs that node's due work at the new time, and returns the time it
// answered.
func (c *cluster) advance(i int, d time.Duration) time.Time {
	var out struct {
		NowMS int64 `json:"now_ms"`
	}
	c.call(i, http.MethodPost, "/sandbox/clock/advance", map[string]int64{"seconds": int64(d / time.Second)}, &out)
	return time.UnixMilli(out.NowMS)
}

// now is the time GET /sandbox/clock answers on node i.
func (c *cluster) now(i int) time.Time {
	var out struct {
		NowMS int64 `json:"now_ms"`
	}
	c.call(i, http.MethodGet, "/sandbox/clock", nil, &out)
	return time.UnixMilli(out.NowMS)
}

func (c *cluster) call(i int, method, path string, body, out any) {
	c.t.Helper()
	if err := c.do(i, method, path, body, out); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) do(i int, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.nodes[i].srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s on node %d = %d %s", method, path, i+1, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// balanced fails the test unless every currency of the trial balance read
// on node i sums to zero.
func (c *cluster) balanced(i int) error {
	tb, err := c.nodes[i].Ledger.TrialBalance(context.Background())
	if err != nil {
		return err
	}
	for cur, b := range tb {
		if b.Settled != 0 || b.Current() != 0 || b.PendingCredits != b.PendingDebits {
			return fmt.Errorf("node %d: %s does not balance: %+v", i+1, cur, b)
		}
	}
	return nil
}

// setup opens accounts of the root, each funded with amount, and the
// payment details transfers go to: a book-transfer detail per account and
// one ACH payee.
type setup struct {
	accounts []*ledger.Account
	book     []*payments.PaymentDetail
	ach      *payments.PaymentDetail
}

func (c *cluster) setup(n int, amount int64) setup {
	c.t.Helper()
	ctx := context.Background()
	root := corebank.As(c.root)
	b := c.nodes[0]
	var s setup
	cp, err := b.Payments.CreateCounterparty(ctx, root, payments.NewCounterparty{Type: "individual", Profile: payments.Profile{
		FirstName: "Ada", LastName: "Lovelace", Relationship: "vendor", Email: "ada@example.com",
		Address: &payments.Address{Line1: "1 Main St", City: "London", Country: "GB"},
	}})
	if err != nil {
		c.t.Fatal(err)
	}
	for i := range n {
		a, err := b.Ledger.CreateAccount(ctx, root, ledger.NewAccount{EntityID: c.root, Type: ledger.TypeChecking,
			Currency: "USD", DisplayName: fmt.Sprintf("a%d", i)})
		if err != nil {
			c.t.Fatal(err)
		}
		if _, err := b.Funding.CreateInflow(ctx, root, funding.NewInflow{AccountID: a.ID, Amount: amount}); err != nil {
			c.t.Fatal(err)
		}
		d, err := b.Payments.CreatePaymentDetail(ctx, root, payments.NewPaymentDetail{CounterpartyID: cp.ID,
			PaymentMethod: payments.BookTransfer, Currency: "USD", AccountHolderName: "Ada Lovelace", AccountNumber: a.ServiceBAN})
		if err != nil {
			c.t.Fatal(err)
		}
		s.accounts, s.book = append(s.accounts, a), append(s.book, d)
	}
	s.ach, err = b.Payments.CreatePaymentDetail(ctx, root, payments.NewPaymentDetail{CounterpartyID: cp.ID,
		PaymentMethod: "bank-transfer", Currency: "USD", Country: "US", Scheme: "ach", AccountHolderName: "Ada Lovelace",
		RoutingNumber: "091000019", AccountNumber: "123456789", AccountType: "checking"})
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// receiver is a webhook endpoint that counts deliveries by event ID.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string]int    // event ID -> deliveries
	ids map[string]string // object ID (data.id) -> event types, space-separated
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{got: map[string]int{}, ids: map[string]string{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Event string `json:"event"`
			Data  struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		raw, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(raw, &body)
		r.mu.Lock()
		r.got[req.Header.Get(webhooks.HeaderEventID)]++
		r.ids[body.Data.ID] += " " + body.Event
		r.mu.Unlock()
	}))
	// A spare connection the bank's transport was still dialling when the
	// receiver closes is noise, not a finding.
	r.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	return r
}

// TestTwoNodes runs book transfers, payouts and inflows on two banks over
// one store while both run their due work and webhook dispatchers and the
// clock is advanced on either: totals balance on every read on both nodes,
// every due item runs once across the two, every payout ends and its
// webhook is delivered once, and the webhook's stats count exactly the
// deliveries made.
func TestTwoNodes(t *testing.T) {
	backends := map[string]func(t *testing.T) storage.Backend{
		"memory": func(*testing.T) storage.Backend { return memory.New() },
		"bolt": func(t *testing.T) storage.Backend {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "bank.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
		"postgres": openPostgres,
	}
	onEach(t, backends, testTwoNodes)
}

// onEach runs test in a subtest per backend, on a store open opens.
func onEach(t *testing.T, backends map[string]func(t *testing.T) storage.Backend, test func(*testing.T, storage.Backend)) {
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			defer db.Close()
			test(t, db)
		})
	}
}

// openPostgres opens a fresh database on pgtest's throwaway cluster, or
// skips t with pgtest's line when PostgreSQL is not installed.
func openPostgres(t *testing.T) storage.Backend {
	db, err := postgres.Open(context.Background(), pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func testTwoNodes(t *testing.T, db storage.Backend) {
	ctx := context.Background()
	// One claim at a time per node: two claims of 16 settle a run's ~30
	// payouts at once, on one node, and this test asserts that both nodes
	// check some (storage's TestDueWorkers covers several workers).
	c := newCluster(t, db, func(_ int, o *bank.Options) { o.DueWorkers = 1 })
	s := c.setup(4, 1_000_000)
	root := corebank.As(c.root)
	stop := c.run()

	const workers = 8
	var payouts sync.Map // transfer ID -> true
	var ops, reads atomic.Int64
	errc := make(chan error, workers+4)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := c.nodes[w%2]
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				from := s.accounts[rng.IntN(len(s.accounts))]
				var err error
				switch rng.IntN(3) {
				case 0: // book transfer
					to := s.book[rng.IntN(len(s.book))]
					if to.AccountNumber == from.ServiceBAN {
						continue
					}
					_, err = n.Payments.CreateTransfer(ctx, root, payments.NewTransfer{AccountID: from.ID, PaymentDetailID: to.ID,
						Amount: 1 + rng.Int64N(100), PaymentType: payments.BookTransfer, Narration: "book", UniqueReference: fmt.Sprintf("b%d-%d", w, i)})
				case 1: // payout
					var tr *payments.Transfer
					tr, err = n.Payments.CreateTransfer(ctx, root, payments.NewTransfer{AccountID: from.ID, PaymentDetailID: s.ach.ID,
						Amount: 1 + rng.Int64N(100), PaymentType: "bank-transfer", Narration: "payout", UniqueReference: fmt.Sprintf("p%d-%d", w, i)})
					if err == nil {
						payouts.Store(tr.ID, true)
					}
				case 2: // inflow, settled now or after the settle delay
					settle := rng.IntN(2) == 0
					_, err = n.Funding.CreateInflow(ctx, root, funding.NewInflow{AccountID: from.ID, Amount: 1 + rng.Int64N(100), Settle: &settle})
				}
				if err != nil {
					errc <- err
					return
				}
				ops.Add(1)
			}
		}()
	}
	for i := range c.nodes { // readers on both nodes
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := c.balanced(i); err != nil {
					errc <- err
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // the clock moves, from either node
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			c.advance(i%2, 2*time.Second)
		}
	}()
	time.Sleep(time.Second) // hundreds of operations; all CPU, as is what follows
	close(done)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}

	// Let everything due happen: payouts end, inflows settle. The first
	// advance does all that is due, and its node is the second one: the
	// first may have taken every check while the load ran (seen under
	// -race on PostgreSQL, its claims settling in one transaction each),
	// and the test asserts below that both nodes check payouts.
	for range 5 {
		c.advance(1, time.Minute)
		c.advance(0, time.Minute)
	}
	var ids []string
	payouts.Range(func(k, _ any) bool { ids = append(ids, k.(string)); return true })
	waitFor(t, func() error {
		for _, id := range ids {
			tr, err := c.nodes[0].Payments.GetTransfer(ctx, root, "", id)
			if err != nil {
				return err
			}
			if tr.Status != payments.StatusSuccessful {
				return fmt.Errorf("payout %s is %s", id, tr.Status)
			}
		}
		if _, err := c.nodes[1].Webhooks.Drain(ctx); err != nil {
			return err
		}
		c.recv.mu.Lock()
		defer c.recv.mu.Unlock()
		for _, id := range ids {
			if !bytes.Contains([]byte(c.recv.ids[id]), []byte(payments.EventOutflowCompleted)) {
				return fmt.Errorf("payout %s: webhooks %q, no %s", id, c.recv.ids[id], payments.EventOutflowCompleted)
			}
		}
		return nil
	})
	stop()
	for i := range c.nodes {
		if err := c.balanced(i); err != nil {
			t.Error(err)
		}
	}
	// Every item settled took its lease with it.
	leases, err := storage.View(ctx, db, func(tx storage.Tx) (int, error) {
		n := 0
		err := tx.Scan(storage.BucketDueLease, storage.ScanOptions{}, func(_, _ []byte) error { n++; return nil })
		return n, err
	})
	if err != nil || leases != 0 {
		t.Errorf("%d leases left (%v)", leases, err)
	}

	c.mu.Lock()
	kinds := map[string]int{}
	for k, n := range c.runs {
		kind, _, _ := bytes.Cut([]byte(k), []byte("/"))
		kinds[string(kind)]++
		// A webhook attempt that one runner of a node leaves to another
		// runner of the same node (the dispatcher) is handed again to
		// that node; the receiver counts those below.
		if n != 1 && string(kind) != "webhooks.attempt" {
			t.Errorf("due item %s ran %d times", k, n)
		}
	}
	c.mu.Unlock()
	if kinds["payments.transfer"] == 0 || kinds["funding.inflow"] == 0 {
		t.Errorf("due items run by kind: %v", kinds)
	}
	for i, m := range c.byNode {
		if m["payments.transfer"] == 0 {
			t.Errorf("node %d checked no payout: %v", i+1, m)
		}
	}
	c.recv.mu.Lock()
	delivered := 0
	for id, n := range c.recv.got {
		delivered += n
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
	c.recv.mu.Unlock()
	hooks, err := c.nodes[0].Webhooks.ListWebhooks(ctx, corebank.System(), webhooks.WebhookFilter{EntityID: c.root}, corebank.ListOptions{})
	if err != nil || len(hooks.Items) != 1 {
		t.Fatalf("webhooks = %v, %v", hooks, err)
	}
	st := hooks.Items[0].Stats
	if st.TotalWebhooksSent != int64(delivered) || st.TotalWebhooksSuccessful != int64(delivered) || st.TotalWebhooksFailed != 0 {
		t.Errorf("stats %+v; %d deliveries received", st, delivered)
	}
	t.Logf("%d operations, %d payouts, %d balanced reads, %d webhooks, due items by kind %v, by node %v", ops.Load(), len(ids), reads.Load(), delivered, kinds, c.byNode)
}

// waitFor retries check until it returns nil, for up to 20 s.
func waitFor(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stallingPayouts is the sandbox rail, except that Check blocks while
// stall is set, as a node that stops after taking work does.
type stallingPayouts struct {
	*payments.SandboxPayouts
	stall   atomic.Bool
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int64
}

func (p *stallingPayouts) Check(ctx context.Context, t *payments.Transfer, asOf time.Time) (payments.PayoutResult, error) {
	p.calls.Add(1)
	if p.stall.Load() {
		select {
		case p.entered <- struct{}{}:
		default:
		}
		<-p.release
	}
	return p.SandboxPayouts.Check(ctx, t, asOf)
}

// TestLeaseTakeover: a node that stops after taking payout checks keeps
// them from the other node until its lease ends; then the other takes
// them over and finishes them, and the first, resuming, changes nothing.
func TestLeaseTakeover(t *testing.T) {
	backends := map[string]func(t *testing.T) storage.Backend{
		"memory":   func(*testing.T) storage.Backend { return memory.New() },
		"postgres": openPostgres,
	}
	onEach(t, backends, testLeaseTakeover)
}

// stalledCluster builds a cluster whose nodes lease due work for 30 s on
// leases, their shared wall clock, each its own Instance ("host-0",
// "host-1"), the first node's payout provider stalling on demand, and
// three payouts created on the first node, whose IDs it returns.
func stalledCluster(t *testing.T, db storage.Backend, leases clock.Clock) (*cluster, *stallingPayouts, []string) {
	stalled := &stallingPayouts{SandboxPayouts: payments.NewSandboxPayouts(nil),
		entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := newCluster(t, db, func(i int, o *bank.Options) {
		o.LeaseDuration = 30 * time.Second
		o.LeaseClock = leases
		o.Instance = fmt.Sprint("host-", i)
		if i == 0 {
			o.Payments.Payouts = stalled
		}
	})
	s := c.setup(1, 1_000_000)
	var ids []string
	for i := range 3 {
		tr, err := c.nodes[0].Payments.CreateTransfer(context.Background(), corebank.As(c.root), payments.NewTransfer{AccountID: s.accounts[0].ID, PaymentDetailID: s.ach.ID,
			Amount: 100, PaymentType: "bank-transfer", Narration: "payout", UniqueReference: fmt.Sprintf("p%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tr.ID)
	}
	return c, stalled, ids
}

func testLeaseTakeover(t *testing.T, db storage.Backend) {
	ctx := context.Background()
	leases := clock.NewMock() // the nodes' shared wall clock
	c, stalled, ids := stalledCluster(t, db, leases)
	root := corebank.As(c.root)
	// Node 1 moves the clock past the sandbox rail's 5 s, so that each
	// check finishes a payout; the advance runs its due work, which takes
	// the checks and stops in the first.
	stalled.stall.Store(true)
	n1 := make(chan error, 1)
	go func() {
		var out any
		n1 <- c.do(0, http.MethodPost, "/sandbox/clock/advance", map[string]int64{"seconds": 10}, &out)
	}()
	<-stalled.entered
	c.now(1) // node 2 sees the time node 1 stored

	// Node 2 finds them leased until the lease ends.
	status := func() []string {
		var out []string
		for _, id := range ids {
			tr, err := c.nodes[1].Payments.GetTransfer(ctx, root, "", id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tr.Status)
		}
		return out
	}
	if _, err := c.nodes[1].Due.RunDue(ctx, c.nodes[1].mock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := status(); got[0] != payments.StatusPending || got[2] != payments.StatusPending {
		t.Fatalf("under node 1's lease node 2 moved the payouts: %v", got)
	}
	leases.Add(29 * time.Second)
	if _, err := c.nodes[1].Due.RunDue(ctx, c.nodes[1].mock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := status(); got[0] != payments.StatusPending {
		t.Fatalf("1 s before the lease ends node 2 moved the payouts: %v", got)
	}
	leases.Add(time.Second)
	if _, err := c.nodes[1].Due.RunDue(ctx, c.nodes[1].mock.Now()); err != nil {
		t.Fatal(err)
	}
	for i, st := range status() {
		if st != payments.StatusSuccessful {
			t.Errorf("payout %d after the takeover is %s", i, st)
		}
	}

	// Node 1 resumes: it finds its lease gone and changes nothing.
	close(stalled.release)
	if err := <-n1; err != nil {
		t.Fatal(err)
	}
	var outflows int
	evs, err := c.nodes[0].Ledger.Events(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == payments.EventOutflowCompleted {
			outflows++
		}
	}
	if outflows != len(ids) {
		t.Errorf("%d %s events, want %d", outflows, payments.EventOutflowCompleted, len(ids))
	}
	if err := c.balanced(0); err != nil {
		t.Error(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		n := 0
		for k, runs := range c.runs {
			if bytes.HasSuffix([]byte(k), []byte("/"+id)) && bytes.HasPrefix([]byte(k), []byte("payments.transfer/")) {
				n += runs
			}
		}
		if n != 2 { // node 1's, then node 2's after the lease
			t.Errorf("payout %s handed %d times, want 2", id, n)
		}
	}
}

// TestSharedClock: an advance on one node moves the time every node sees,
// and advances on both add up.
func TestSharedClock(t *testing.T) {
	c := newCluster(t, memory.New(), nil)
	if got := c.advance(0, time.Minute); !got.Equal(nodeStart.Add(time.Minute)) {
		t.Fatalf("advance on node 1 = %v", got)
	}
	if got := c.now(1); !got.Equal(nodeStart.Add(time.Minute)) {
		t.Errorf("node 2 sees %v, want %v", got, nodeStart.Add(time.Minute))
	}
	if got := c.advance(1, time.Hour); !got.Equal(nodeStart.Add(time.Hour + time.Minute)) {
		t.Errorf("advance on node 2 = %v", got)
	}
	if got := c.now(0); !got.Equal(nodeStart.Add(time.Hour + time.Minute)) {
		t.Errorf("node 1 sees %v", got)
	}
	// A node's own mock never moves back when the store says earlier.
	c.nodes[1].mock.Add(time.Hour)
	if got := c.now(1); !got.Equal(nodeStart.Add(2*time.Hour + time.Minute)) {
		t.Errorf("node 2 after its own move sees %v", got)
	}
	if got := c.advance(0, time.Second); !got.Equal(nodeStart.Add(time.Hour + time.Minute + time.Second)) {
		t.Errorf("advance on node 1 = %v", got)
	}
}

// TestNodesSeeEachOthersWrites: what one node changes, the other serves at
// once; nothing a node keeps in memory answers for the store. An API key
// made on node 1 works on node 2, and once node 1 deletes it node 2
// refuses it.
func TestNodesSeeEachOthersWrites(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, memory.New(), nil)
	k, err := c.nodes[0].Entities.CreateAPIKey(ctx, corebank.As(c.root), entities.NewAPIKey{})
	if err != nil {
		t.Fatal(err)
	}
	status := func(i int) int {
		req, _ := http.NewRequest(http.MethodGet, c.nodes[i].srv.URL+"/sandbox/clock", nil)
		req.Header.Set("Authorization", "Bearer "+k.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(1); got != http.StatusOK {
		t.Fatalf("node 2 with node 1's new key = %d", got)
	}
	if _, err := c.nodes[0].Entities.DeleteAPIKey(ctx, corebank.As(c.root), "", k.Key.ID); err != nil {
		t.Fatal(err)
	}
	if got := status(1); got != http.StatusUnauthorized {
		t.Errorf("node 2 with the key node 1 deleted = %d, want 401", got)
	}
}
