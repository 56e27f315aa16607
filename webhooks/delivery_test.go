package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

func offsets(hits []hit) []time.Duration {
	out := []time.Duration{}
	for _, h := range hits {
		out = append(out, h.Offset)
	}
	return out
}

func secs(s ...int) []time.Duration {
	out := []time.Duration{}
	for _, v := range s {
		out = append(out, time.Duration(v)*time.Second)
	}
	return out
}

// tick advances the mock clock by step at a time for d, running due jobs
// after each step, as the runner does every second on the real clock.
func (e *env) tick(t testing.TB, d, step time.Duration) {
	t.Helper()
	for end := e.clk.Now().Add(d); e.clk.Now().Before(end); {
		e.clk.Add(step)
		if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSignedAtWallClock: with the default SignClock, a bank whose clock is
// months from the wall clock (the test's mock) signs each attempt with
// the real time of sending, so a receiver that verifies against
// time.Now() with a 5-minute tolerance, as production receivers do,
// accepts it; the event's own times stay on the bank's clock.
func TestSignedAtWallClock(t *testing.T) {
	e := newEnv(t, nil, nil, func(o *webhooks.Options) { o.SignClock = nil })
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "accounts.created", entityA, map[string]any{"id": "acc_1"})
	before := time.Now()
	if n := e.mustDrain(t); n != 1 {
		t.Fatalf("Drain sent %d attempts, want 1", n)
	}
	after := time.Now()
	hits := e.recv.Hits()
	if len(hits) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(hits))
	}
	h := hits[0]
	if err := webhooks.Verify(w.Secret, h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature), h.Body, 5*time.Minute, time.Now()); err != nil {
		t.Errorf("Verify against the wall clock = %v", err)
	}
	ms, _ := strconv.ParseInt(h.Header.Get(webhooks.HeaderTimestamp), 10, 64)
	if at := time.UnixMilli(ms); at.Before(before.Truncate(time.Millisecond)) || at.After(after) {
		t.Errorf("timestamp %v, want the time of sending (%v to %v)", at, before, after)
	}
	if err := webhooks.Verify(w.Secret, h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature), h.Body, 5*time.Minute, e.clk.Now()); !errors.Is(err, webhooks.ErrTimestampOutOfTolerance) {
		t.Errorf("Verify against the bank's clock = %v, want ErrTimestampOutOfTolerance", err)
	}
	ds, err := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if err != nil || len(ds.Items) != 1 || len(ds.Items[0].Attempts) != 1 {
		t.Fatalf("deliveries %+v, %v", ds, err)
	}
	if got, want := ds.Items[0].Attempts[0].At, corebank.Millis(e.clk.Now()); got != want {
		t.Errorf("attempt recorded at %d, want the bank's clock %d", got, want)
	}
}

func TestDeliverySigned(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	w := e.mustCreate(t, entityA, events(true))
	ev := e.outbox.Append(t, "accounts.created", entityA, map[string]any{"id": "acc_1", "currency": "USD"})
	if n := e.mustDrain(t); n != 1 {
		t.Fatalf("Drain sent %d attempts, want 1", n)
	}
	hits := e.recv.Hits()
	if len(hits) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(hits))
	}
	h := hits[0]
	if err := webhooks.Verify(w.Secret, h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature), h.Body, 5*time.Minute, e.clk.Now()); err != nil {
		t.Errorf("Verify = %v", err)
	}
	if got := h.Header.Get(webhooks.HeaderEventID); got != ev.ID {
		t.Errorf("event id header = %q, want %q", got, ev.ID)
	}
	if got := h.Header.Get(webhooks.HeaderTimestamp); got != "1767323045000" {
		t.Errorf("timestamp header = %q, want the clock's ms", got)
	}
	if ct := h.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if ua := h.Header.Get("User-Agent"); ua != webhooks.UserAgent {
		t.Errorf("User-Agent = %q", ua)
	}
	if want := `{"event":"accounts.created","data":{"currency":"USD","id":"acc_1"}}`; string(h.Body) != want {
		t.Errorf("body = %s, want %s", h.Body, want)
	}
	got, err := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := webhooks.Stats{TotalWebhooksSent: 1, TotalWebhooksSuccessful: 1, LastWebhookEvent: start.UnixMilli()}
	if diff := cmp.Diff(want, got.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	// Nothing is sent twice.
	e.tick(t, 20*time.Minute, 10*time.Second)
	if n := len(e.recv.Hits()); n != 1 {
		t.Errorf("receiver got %d requests after an ack, want 1", n)
	}
	page, err := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Status != webhooks.DeliverySucceeded || len(page.Items[0].Attempts) != 1 ||
		page.Items[0].Attempts[0].StatusCode != 200 || page.Items[0].EventID != ev.ID {
		t.Errorf("deliveries = %+v", page.Items)
	}
}

func TestRetrySchedule(t *testing.T) {
	e := newEnv(t, nil, always(500), nil)
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "outflows.failed", entityA, map[string]string{"id": "tr_1"})
	e.mustDrain(t)
	e.tick(t, 20*time.Minute, time.Second)
	if diff := cmp.Diff(secs(0, 10, 30, 70, 150, 310, 630), offsets(e.recv.Hits())); diff != "" {
		t.Errorf("attempt times (-want +got):\n%s", diff)
	}
	for _, h := range e.recv.Hits() {
		if err := webhooks.Verify(w.Secret, h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature), h.Body, time.Minute, start.Add(h.Offset)); err != nil {
			t.Errorf("attempt at %v: Verify = %v", h.Offset, err)
		}
	}
	page, err := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := page.Items[0]
	if d.Status != webhooks.DeliveryFailed || len(d.Attempts) != 7 || d.NextAttemptAt != 0 || d.FailureReason != "retry window elapsed" {
		t.Errorf("delivery = %+v", d)
	}
	for i, a := range d.Attempts {
		if a.Number != i+1 || a.StatusCode != 500 || a.Error != "HTTP 500" {
			t.Errorf("attempt %d = %+v", i, a)
		}
	}
	got, _ := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
	want := webhooks.Stats{TotalWebhooksSent: 7, TotalWebhooksFailed: 7, LastWebhookEvent: start.Add(630 * time.Second).UnixMilli()}
	if diff := cmp.Diff(want, got.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestNoRetryAfterWindow(t *testing.T) {
	// The clock jumps past the 15-minute window while a retry is due: the
	// retry is never sent and the delivery fails.
	e := newEnv(t, nil, always(500), nil)
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "outflows.failed", entityA, map[string]string{"id": "tr_1"})
	e.mustDrain(t)
	e.tick(t, 10*time.Second, time.Second)
	e.clk.Add(1000 * time.Second)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	e.tick(t, 10*time.Minute, 10*time.Second)
	if diff := cmp.Diff(secs(0, 10), offsets(e.recv.Hits())); diff != "" {
		t.Errorf("attempt times (-want +got):\n%s", diff)
	}
	page, err := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := page.Items[0]; d.Status != webhooks.DeliveryFailed || len(d.Attempts) != 2 || d.FailureReason != "retry window elapsed" {
		t.Errorf("delivery = %+v", d)
	}
}

func TestFirstAttemptIgnoresClock(t *testing.T) {
	// A first attempt goes out at once; only retries wait for the clock.
	e := newEnv(t, nil, always(503), nil)
	e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	e.mustDrain(t)
	e.clk.Add(9 * time.Second)
	e.mustDrain(t)
	if diff := cmp.Diff(secs(0), offsets(e.recv.Hits())); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	e.clk.Add(time.Second)
	e.mustDrain(t)
	if diff := cmp.Diff(secs(0, 10), offsets(e.recv.Hits())); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
}

func TestReceiverRecovers(t *testing.T) {
	e := newEnv(t, nil, func(n int) int {
		if n <= 2 {
			return 500
		}
		return 204
	}, nil)
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "inflows.completed", entityA, map[string]string{"id": "in_1"})
	e.mustDrain(t)
	e.tick(t, 20*time.Minute, 10*time.Second)
	hits := e.recv.Hits()
	if diff := cmp.Diff(secs(0, 10, 30), offsets(hits)); diff != "" {
		t.Errorf("attempt times (-want +got):\n%s", diff)
	}
	for _, h := range hits[1:] {
		if h.Header.Get(webhooks.HeaderEventID) != hits[0].Header.Get(webhooks.HeaderEventID) || string(h.Body) != string(hits[0].Body) {
			t.Error("a retry changed the event id or body")
		}
	}
	got, _ := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
	if s := got.Stats; s.TotalWebhooksSent != 3 || s.TotalWebhooksFailed != 2 || s.TotalWebhooksSuccessful != 1 {
		t.Errorf("stats = %+v", s)
	}
}

func TestRestartResumes(t *testing.T) {
	path := boltPath(t)
	db := openBolt(t, path)
	failing := true
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	status := func(int) int {
		<-mu
		defer func() { mu <- struct{}{} }()
		if failing {
			return 500
		}
		return 200
	}
	e := newEnv(t, db, status, nil)
	w := e.mustCreate(t, entityA, events(true))
	ev := e.outbox.Append(t, "outflows.completed", entityA, map[string]string{"id": "tr_1"})
	e.mustDrain(t)
	e.tick(t, 10*time.Second, time.Second) // second attempt at 10 s
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A new process: the same file (outbox included) and clock, a new Service.
	db2 := openBolt(t, path)
	defer db2.Close()
	<-mu
	failing = false
	mu <- struct{}{}
	e.outbox = newOutbox(e.clk, db2)
	svc2 := webhooks.NewService(db2, e.outbox, mustSealer(t), &e.opts)
	e.svc = svc2
	e.mustDrain(t) // nothing is due yet: the third attempt waits for 30 s
	e.tick(t, 20*time.Second, time.Second)
	e.tick(t, 20*time.Minute, 10*time.Second)
	if diff := cmp.Diff(secs(0, 10, 30), offsets(e.recv.Hits())); diff != "" {
		t.Errorf("attempt times across the restart (-want +got):\n%s", diff)
	}
	// The cursor survived: a new event is delivered once, the old one not again.
	ev2 := e.outbox.Append(t, "outflows.completed", entityA, map[string]string{"id": "tr_2"})
	e.mustDrain(t)
	var ids []string
	for _, h := range e.recv.Hits() {
		ids = append(ids, h.Header.Get(webhooks.HeaderEventID))
	}
	if diff := cmp.Diff([]string{ev.ID, ev.ID, ev.ID, ev2.ID}, ids); diff != "" {
		t.Errorf("event ids (-want +got):\n%s", diff)
	}
	got, err := svc2.GetWebhook(ctx, corebank.System(), "", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Stats; s.TotalWebhooksSent != 4 || s.TotalWebhooksSuccessful != 2 || s.TotalWebhooksFailed != 2 {
		t.Errorf("stats = %+v", s)
	}
}

func TestEnabledEventsFilter(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.outbox.Append(t, "outflows.completed", entityA, map[string]string{"id": "before the webhook"})
	e.clk.Add(time.Millisecond)
	e.mustCreate(t, entityA, events(false, "outflows.completed", "funding_sessions.updated"))
	for _, typ := range []string{"accounts.created", "outflows.completed", "outflows.failed", "funding_sessions_updated", "webhook.test"} {
		e.outbox.Append(t, typ, entityA, map[string]string{"id": typ})
	}
	e.outbox.Append(t, "outflows.completed", "01HZZZZZZZZZZZZZZZZZZZZZZB", map[string]string{"id": "other entity"})
	e.mustDrain(t)
	var got []string
	for _, h := range e.recv.Hits() {
		var b struct{ Event string }
		_ = json.Unmarshal(h.Body, &b)
		got = append(got, b.Event)
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"funding_sessions_updated", "outflows.completed"}, got); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}

func TestRotateSecret(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	w := e.mustCreate(t, entityA, events(true))
	r, err := e.svc.RotateWebhookSecret(ctx, corebank.System(), "", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Secret == "" || r.Secret == w.Secret {
		t.Fatalf("rotated secret = %q", r.Secret)
	}
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	e.mustDrain(t)
	h := e.recv.Hits()[0]
	ts, sig := h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature)
	if err := webhooks.Verify(r.Secret, ts, sig, h.Body, time.Minute, e.clk.Now()); err != nil {
		t.Errorf("new secret: Verify = %v", err)
	}
	if err := webhooks.Verify(w.Secret, ts, sig, h.Body, time.Minute, e.clk.Now()); !errors.Is(err, webhooks.ErrInvalidSignature) {
		t.Errorf("old secret: Verify = %v, want ErrInvalidSignature", err)
	}
}

func TestExpired(t *testing.T) {
	e := newEnv(t, nil, always(500), nil)
	w, err := e.svc.CreateWebhook(ctx, corebank.As(entityA), webhooks.NewWebhook{EntityID: entityA, URL: e.recv.srv.URL, ExpiresIn: ptr(int64(45)), EnabledEvents: events(true)})
	if err != nil {
		t.Fatal(err)
	}
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	e.mustDrain(t)
	e.tick(t, 2*time.Minute, time.Second) // 0, 10, 30 are sent; 70 falls after the expiry at 45
	if diff := cmp.Diff(secs(0, 10, 30), offsets(e.recv.Hits())); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	got, _ := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
	if got.Status != webhooks.StatusInactive {
		t.Errorf("status = %q, want inactive", got.Status)
	}
	page, _ := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if d := page.Items[0]; d.Status != webhooks.DeliveryFailed || d.FailureReason != "webhook inactive" {
		t.Errorf("delivery = %+v", d)
	}
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "b"})
	e.mustDrain(t)
	if n := len(e.recv.Hits()); n != 3 {
		t.Errorf("an expired webhook got %d requests, want 3", n)
	}
}

func TestDeletedGetsNothing(t *testing.T) {
	e := newEnv(t, nil, always(500), nil)
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	e.mustDrain(t)
	if _, err := e.svc.DeleteWebhook(ctx, corebank.System(), "", w.ID); err != nil {
		t.Fatal(err)
	}
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "b"})
	e.tick(t, 20*time.Minute, 10*time.Second)
	if n := len(e.recv.Hits()); n != 1 {
		t.Errorf("receiver got %d requests, want only the one before deletion", n)
	}
}

func TestRedirectIsFailure(t *testing.T) {
	e := newEnv(t, nil, func(n int) int {
		if n == 1 {
			return 302
		}
		return 200
	}, nil)
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	e.mustDrain(t)
	if n := len(e.recv.Hits()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1 (the redirect is not followed)", n)
	}
	page, _ := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	d := page.Items[0]
	if d.Status != webhooks.DeliveryPending || d.Attempts[0].StatusCode != 302 || !strings.Contains(d.Attempts[0].Error, "redirect") {
		t.Errorf("delivery = %+v", d)
	}
	e.tick(t, 10*time.Second, time.Second)
	page, _ = e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if d := page.Items[0]; d.Status != webhooks.DeliverySucceeded || len(d.Attempts) != 2 {
		t.Errorf("after retry: %+v", d)
	}
}

func TestSendTest(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	w := e.mustCreate(t, entityA, events(false, "cards.created"))
	d, err := e.svc.SendTestEvent(ctx, corebank.System(), "", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != webhooks.DeliverySucceeded || d.EventType != webhooks.TestEventType || len(d.Attempts) != 1 || !d.Test {
		t.Errorf("delivery = %+v", d)
	}
	h := e.recv.Hits()[0]
	var b struct {
		Event string
		Data  struct {
			ID        string `json:"id"`
			WebhookID string `json:"webhook_id"`
		}
	}
	_ = json.Unmarshal(h.Body, &b)
	if b.Event != webhooks.TestEventType || b.Data.WebhookID != w.ID || b.Data.ID != h.Header.Get(webhooks.HeaderEventID) {
		t.Errorf("body = %s", h.Body)
	}
	if err := webhooks.Verify(w.Secret, h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature), h.Body, time.Minute, e.clk.Now()); err != nil {
		t.Error(err)
	}
	t.Run("ErrWebhookNotFound", func(t *testing.T) {
		if _, err := e.svc.SendTestEvent(ctx, corebank.System(), "", "01HZZZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, webhooks.ErrWebhookNotFound) {
			t.Errorf("SendTest = %v", err)
		}
	})
}

func TestProductionSSRF(t *testing.T) {
	res := &fakeResolver{}
	e := newEnv(t, nil, nil, func(o *webhooks.Options) {
		o.Env = webhooks.EnvProduction
		o.Resolver = res
	})
	t.Run("ErrRegistration", func(t *testing.T) {
		res.Set("10.1.2.3")
		for _, u := range []string{
			e.recv.srv.URL, // https://127.0.0.1:port
			"https://localhost/x", "https://[::1]/", "https://10.0.0.1/", "https://192.168.1.1/", "https://172.16.0.1/",
			"https://169.254.169.254/latest", "https://[fd00:ec2::254]/", "https://metadata.google.internal/",
			"https://100.64.0.1/", "https://0.0.0.0/", "https://224.0.0.1/", "https://[fe80::1]/", "https://[::ffff:127.0.0.1]/",
			"https://[fc00::1]/", "https://hooks.example.com/", // resolves to 10.1.2.3
		} {
			_, err := e.svc.CreateWebhook(ctx, corebank.As(entityA), webhooks.NewWebhook{EntityID: entityA, URL: u, ExpiresIn: ptr(int64(60)), EnabledEvents: events(true)})
			var ce *corebank.Error
			if !errors.As(err, &ce) || ce.Fields["url"] == "" {
				t.Errorf("Create(%s) = %v, want a validation error on url", u, err)
			}
		}
	})
	t.Run("ErrConnect", func(t *testing.T) {
		// The name resolves to a public address at registration, then is
		// rebound to the loopback receiver: the dialer refuses it.
		res.Set("93.184.216.34")
		port := e.recv.srv.URL[strings.LastIndex(e.recv.srv.URL, ":"):]
		w, err := e.svc.CreateWebhook(ctx, corebank.As(entityA), webhooks.NewWebhook{EntityID: entityA, URL: "https://hooks.example.com" + port + "/", ExpiresIn: ptr(int64(60)), EnabledEvents: events(true)})
		if err != nil {
			t.Fatal(err)
		}
		res.Set("127.0.0.1")
		e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
		e.mustDrain(t)
		if n := len(e.recv.Hits()); n != 0 {
			t.Errorf("receiver got %d requests, want 0", n)
		}
		page, _ := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
		if a := page.Items[0].Attempts[0]; !strings.Contains(a.Error, "forbidden") || a.StatusCode != 0 {
			t.Errorf("attempt = %+v, want a forbidden-address error", a)
		}
	})
}

// inTreeOnly hides everything but InTreeTx, as *entities.Service offers.
type inTreeOnly struct{ scope.Tree }

func TestEventsRedeliverPurge(t *testing.T) {
	const parent, child = "01HZZZZZZZZZZZZZZZZZZZZZP0", "01HZZZZZZZZZZZZZZZZZZZZZC0"
	tree := webhooks.AncestorsFunc(func(_ storage.Tx, id string) ([]string, error) {
		if id == child {
			return []string{parent}, nil
		}
		return nil, nil
	})
	t.Run("Ancestry", func(t *testing.T) { testEventsRedeliverPurge(t, tree) })
	t.Run("InTreeOnly", func(t *testing.T) { testEventsRedeliverPurge(t, inTreeOnly{tree}) })
}

func testEventsRedeliverPurge(t *testing.T, tree scope.Tree) {
	const parent, child, other = "01HZZZZZZZZZZZZZZZZZZZZZP0", "01HZZZZZZZZZZZZZZZZZZZZZC0", "01HZZZZZZZZZZZZZZZZZZZZZ00"
	e := newEnv(t, nil, nil, func(o *webhooks.Options) { o.Tree = tree })
	wp := e.mustCreate(t, parent, events(true))
	wc := e.mustCreate(t, child, events(true))
	e1 := e.outbox.Append(t, "accounts.created", child, map[string]string{"id": "a"})
	e.clk.Add(time.Second)
	e2 := e.outbox.Append(t, "outflows.completed", parent, map[string]string{"id": "b"})
	e.clk.Add(time.Second)
	e.outbox.Append(t, "outflows.completed", other, map[string]string{"id": "c"})
	e.mustDrain(t)
	if n := len(e.recv.Hits()); n != 3 { // e1 to both, e2 to the parent's
		t.Fatalf("receiver got %d requests, want 3", n)
	}

	list := func(entity string, f webhooks.EventFilter) []string {
		t.Helper()
		p, err := e.svc.ListEvents(ctx, corebank.As(entity), f, corebank.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, ev := range p.Items {
			ids = append(ids, ev.ID)
		}
		return ids
	}
	for _, tt := range []struct {
		name   string
		entity string
		f      webhooks.EventFilter
		want   []string
	}{
		{"Parent", parent, webhooks.EventFilter{}, []string{e1.ID, e2.ID}},
		{"Child", child, webhooks.EventFilter{}, []string{e1.ID}},
		{"Type", parent, webhooks.EventFilter{Type: "outflows.completed"}, []string{e2.ID}},
		{"After", parent, webhooks.EventFilter{CreatedAfter: e1.Created}, []string{e2.ID}},
		{"Before", parent, webhooks.EventFilter{CreatedBefore: e2.Created}, []string{e1.ID}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, list(tt.entity, tt.f)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("Redeliver", func(t *testing.T) {
		ds, err := e.svc.RedeliverEvent(ctx, corebank.As(child), "", e1.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The caller is the child: the parent's webhook is above it.
		if len(ds) != 1 || ds[0].WebhookID != wc.ID || ds[0].RetryUntil != e.clk.Now().Add(15*time.Minute).UnixMilli() {
			t.Fatalf("deliveries = %+v", ds)
		}
		ds, err = e.svc.RedeliverEvent(ctx, corebank.As(parent), "", e1.ID)
		if err != nil || len(ds) != 2 {
			t.Fatalf("Redeliver as parent = %+v, %v", ds, err)
		}
		e.mustDrain(t)
		hits := e.recv.Hits()
		if len(hits) != 6 || hits[5].Header.Get(webhooks.HeaderEventID) != e1.ID {
			t.Errorf("hits = %d", len(hits))
		}
		if _, err := e.svc.RedeliverEvent(ctx, corebank.As(child), "", e2.ID); !errors.Is(err, webhooks.ErrEventNotFound) {
			t.Errorf("Redeliver outside the tree = %v", err)
		}
		_ = wp
	})

	t.Run("Purge", func(t *testing.T) {
		e.clk.Add(30*24*time.Hour + time.Minute)
		if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
			t.Fatal(err)
		}
		if got := list(parent, webhooks.EventFilter{}); len(got) != 0 {
			t.Errorf("events after retention = %v", got)
		}
		if _, err := e.svc.RedeliverEvent(ctx, corebank.As(parent), "", e1.ID); !errors.Is(err, webhooks.ErrEventNotFound) {
			t.Errorf("Redeliver after retention = %v", err)
		}
		p, _ := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: wp.ID}, corebank.ListOptions{})
		if len(p.Items) != 0 {
			t.Errorf("deliveries after retention = %d", len(p.Items))
		}
	})
}

func TestRun(t *testing.T) {
	e := newEnv(t, nil, nil, func(o *webhooks.Options) { o.PollInterval = time.Hour })
	e.mustCreate(t, entityA, events(true))
	hooked := storage.WithCommitHook(e.db, e.svc.Wake)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- e.svc.Run(runCtx) }()
	// A commit through the hooked backend wakes Run: no poll is due for an hour.
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	if err := hooked.Update(ctx, func(tx storage.Tx) error { return tx.Put("test.x", []byte("k"), nil) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.recv.notify:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery after the commit")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func TestConcurrentRunners(t *testing.T) {
	// Run and several Drain callers share the work; each event reaches the
	// receiver exactly once when it acknowledges.
	e := newEnv(t, openBolt(t, boltPath(t)), nil, func(o *webhooks.Options) { o.Concurrency = 4 })
	defer e.db.Close()
	w := e.mustCreate(t, entityA, events(true))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- e.svc.Run(runCtx) }()
	const n = 60
	errs := make(chan error, 3)
	for g := 0; g < 3; g++ {
		go func() {
			var err error
			for i := 0; i < n/3; i++ {
				e.outbox.Append(t, "accounts.created", entityA, map[string]int{"i": i})
				e.svc.Wake()
				if _, err = e.svc.Drain(ctx); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for g := 0; g < 3; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	e.mustDrain(t)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, h := range e.recv.Hits() {
		seen[h.Header.Get(webhooks.HeaderEventID)]++
	}
	if len(seen) != n {
		t.Errorf("receiver saw %d events, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("event %s delivered %d times", id, c)
		}
	}
	got, _ := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
	if got.Stats.TotalWebhooksSent != n || got.Stats.TotalWebhooksSuccessful != n {
		t.Errorf("stats = %+v", got.Stats)
	}
	if _, err := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: "01HZZZZZZZZZZZZZZZZZZZZZZZ"}, corebank.ListOptions{}); !errors.Is(err, webhooks.ErrWebhookNotFound) {
		t.Errorf("Deliveries of an unknown webhook = %v", err)
	}
}

// TestOnAttempt: Options.OnAttempt hears each attempt's outcome once it is
// recorded: failures, then the success, and a delivery stopped unsent.
func TestOnAttempt(t *testing.T) {
	var mu sync.Mutex
	var got []string
	e := newEnv(t, nil, func(n int) int {
		if n == 3 {
			return 200
		}
		return 500
	}, func(o *webhooks.Options) {
		o.OnAttempt = func(outcome string) {
			mu.Lock()
			got = append(got, outcome)
			mu.Unlock()
		}
	})
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	e.mustDrain(t)
	e.tick(t, time.Minute, time.Second)
	// The next event fails once (the receiver answers 200 to the third
	// request only), then its webhook is deleted: the retry is stopped,
	// not sent.
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "b"})
	e.mustDrain(t)
	if _, err := e.svc.DeleteWebhook(ctx, corebank.System(), "", w.ID); err != nil {
		t.Fatal(err)
	}
	e.tick(t, time.Minute, time.Second)
	mu.Lock()
	defer mu.Unlock()
	want := []string{webhooks.OutcomeFailed, webhooks.OutcomeFailed, webhooks.OutcomeSucceeded,
		webhooks.OutcomeFailed, webhooks.OutcomeStopped}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}
