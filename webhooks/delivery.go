package webhooks

import (
	"github.com/corebank/corebank/storage"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// Delivery is one event on its way to one webhook, with every attempt made.
type Delivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// Status is DeliveryPending, DeliverySucceeded or DeliveryFailed; a
	// failed delivery is never attempted again (RedeliverEvent makes a new
	// one).
	Status   string    `json:"status"`
	Attempts []Attempt `json:"attempts"`
	// NextAttemptAt is when the next attempt is due (ms); 0 when none is.
	// A delivery with no attempt yet is sent as soon as the dispatcher
	// runs, whatever the clock says.
	NextAttemptAt int64 `json:"next_attempt_at"`
	// RetryUntil is the end of the retry window (ms): the event's creation
	// plus RetryWindow, or the redelivery's creation plus RetryWindow.
	RetryUntil int64 `json:"retry_until"`
	// FailureReason says why a failed delivery stopped.
	FailureReason string `json:"failure_reason,omitempty"`
	// Test marks a SendTestEvent delivery: one attempt, no retries.
	Test    bool  `json:"test"`
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// Attempt is one POST of a delivery.
type Attempt struct {
	Number int   `json:"number"`
	At     int64 `json:"at"`
	// StatusCode is the receiver's HTTP status, 0 when none was received.
	StatusCode int `json:"status_code"`
	// Error is empty for a 2xx, else what went wrong.
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

// queuedAt is where a pending delivery waits in the due queue (kind
// dueAttempt): a first attempt at 0, due at once whatever the clock says,
// so that it goes out right after the commit that created it; a retry at
// NextAttemptAt, on the clock.
func (d *Delivery) queuedAt() int64 {
	if len(d.Attempts) == 0 {
		return 0
	}
	return d.NextAttemptAt
}

// queueTx puts a pending delivery in the due queue at queuedAt.
func queueTx(tx storage.Tx, d *Delivery) error {
	return storage.Schedule(tx, dueAttempt, d.queuedAt(), d.ID)
}

// unqueueTx takes a pending delivery out of the due queue.
func unqueueTx(tx storage.Tx, d *Delivery) error {
	return storage.Unschedule(tx, dueAttempt, d.queuedAt(), d.ID)
}

// getDelivery reads delivery id, or storage.ErrNotFound.
func getDelivery(tx storage.Tx, id string) (*Delivery, error) {
	return storage.LoadJSON[Delivery](tx, bucketDeliveries, []byte(id), storage.ErrNotFound)
}

// testEvent reads the event of a test delivery, kept in bucketTestEvents
// since a test event is not in the outbox; storage.ErrNotFound once it is
// purged.
func testEvent(tx storage.Tx, id string) (Event, error) {
	ev, err := storage.LoadJSON[Event](tx, bucketTestEvents, []byte(id), storage.ErrNotFound)
	if err != nil {
		return Event{}, err
	}
	return *ev, nil
}
