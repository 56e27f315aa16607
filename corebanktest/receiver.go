package corebanktest

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/webhooks"
)

// WebhookTolerance is how far a delivery's timestamp may lie from the real
// time when a Receiver checks it: a bank signs with the time of sending,
// whatever its clock.
const WebhookTolerance = 5 * time.Minute

// WaitTimeout is how long, in real time, Receiver.Wait waits for a
// delivery before it fails the test.
const WaitTimeout = 10 * time.Second

// Delivery is one webhook delivery a Receiver accepted.
type Delivery struct {
	// EventID is the x-service-event-id header: the event's ID, the same
	// on every attempt and redelivery.
	EventID string
	// Event is the body's event type ("outflows.completed").
	Event string
	// Data is the body's data: the object the event reports.
	Data json.RawMessage
	// Timestamp is the x-service-event-timestamp header: the real time of
	// sending, not the bank's clock.
	Timestamp time.Time
	// Body is the request body as received.
	Body []byte
}

// Receiver is an HTTPS endpoint registered as a webhook of a bank's root
// entity for every event type, which keeps each delivery whose signature
// verifies. It is safe for concurrent use.
type Receiver struct {
	// Webhook is the registration, as created (its Secret included).
	Webhook *webhooks.Webhook
	// Server is the receiving endpoint.
	Server *httptest.Server

	t     testing.TB
	clock clock.Clock // the real clock, which the bank signs with

	mu     sync.Mutex
	got    []Delivery
	notify chan struct{} // closed and replaced on every delivery

	// ready is closed once Webhook is set (or registration failed): a
	// delivery can arrive before Create has returned.
	ready chan struct{}
}

// CaptureWebhooks starts a Receiver and registers it as a webhook of the
// root entity for every event type. Events committed before the call are
// not delivered to it. Its server closes in the bank's cleanup, once the
// dispatcher has stopped.
func (b *Bank) CaptureWebhooks() *Receiver {
	b.t.Helper()
	// Earlier events go to the webhooks that existed when they were
	// committed: the dispatcher reads them before the receiver exists.
	if _, err := b.Webhooks.Drain(context.Background()); err != nil {
		b.t.Fatalf("corebanktest: read the outbox: %v", err)
	}
	r := &Receiver{t: b.t, clock: clock.New(), notify: make(chan struct{}), ready: make(chan struct{})}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	// The bank's transport may still be dialling a spare connection when
	// the receiver closes, which the server would log as a failed TLS
	// handshake: noise, not a finding (serve reports what matters).
	r.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.Server.StartTLS()
	expires := int64(webhooks.MaxExpiresIn)
	hook, err := b.Webhooks.CreateWebhook(context.Background(), corebank.System(), webhooks.NewWebhook{
		EntityID: b.Root.EntityID, URL: r.Server.URL, ExpiresIn: &expires,
		EnabledEvents: &webhooks.EnabledEvents{All: true}, Description: "corebanktest receiver",
	})
	if err != nil {
		close(r.ready)
		r.Server.Close()
		b.t.Fatalf("corebanktest: register the webhook receiver: %v", err)
	}
	r.Webhook = hook
	close(r.ready)
	b.mu.Lock()
	b.receivers = append(b.receivers, r)
	b.mu.Unlock()
	return r
}

// serve verifies one delivery against the webhook's secret at the real
// time and keeps it; a delivery that fails is answered 401 and fails the
// test.
func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	<-r.ready
	if r.Webhook == nil {
		http.Error(w, "not registered", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ts := req.Header.Get(webhooks.HeaderTimestamp)
	if err := webhooks.Verify(r.Webhook.Secret, ts, req.Header.Get(webhooks.HeaderSignature), body, WebhookTolerance, r.clock.Now()); err != nil {
		r.t.Errorf("corebanktest: webhook delivery %s refused: %v", req.Header.Get(webhooks.HeaderEventID), err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var msg struct {
		Event string          `json:"event"`
		Data  json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		r.t.Errorf("corebanktest: webhook delivery is not JSON: %v: %s", err, body)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ms, _ := strconv.ParseInt(ts, 10, 64) // Verify checked it
	d := Delivery{EventID: req.Header.Get(webhooks.HeaderEventID), Event: msg.Event, Data: msg.Data,
		Timestamp: time.UnixMilli(ms).UTC(), Body: body}
	r.mu.Lock()
	r.got = append(r.got, d)
	close(r.notify)
	r.notify = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Deliveries returns the deliveries of event type eventType received so
// far ("" for all), in the order they arrived. A delivery may repeat
// (webhooks are delivered at least once).
func (r *Receiver) Deliveries(eventType string) []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.filter(eventType)
}

func (r *Receiver) filter(eventType string) []Delivery {
	var out []Delivery
	for _, d := range r.got {
		if eventType == "" || d.Event == eventType {
			out = append(out, d)
		}
	}
	return out
}

// Wait returns the first delivery of event type eventType, waiting for it
// up to WaitTimeout of real time; it fails the test if none arrives.
func (r *Receiver) Wait(eventType string) Delivery {
	r.t.Helper()
	return r.WaitN(eventType, 1)[0]
}

// WaitN returns the first n deliveries of event type eventType ("" for
// any), waiting for them up to WaitTimeout of real time; it fails the test
// if fewer arrive.
func (r *Receiver) WaitN(eventType string, n int) []Delivery {
	r.t.Helper()
	timeout := time.NewTimer(WaitTimeout)
	defer timeout.Stop()
	for {
		r.mu.Lock()
		got, notify := r.filter(eventType), r.notify
		r.mu.Unlock()
		if len(got) >= n {
			return got[:n]
		}
		select {
		case <-notify:
		case <-timeout.C:
			r.t.Fatalf("corebanktest: %d of %d %q webhooks within %s; %d deliveries in all", len(got), n, eventType, WaitTimeout, len(r.Deliveries("")))
		}
	}
}
