package webhooks

import "github.com/corebank/corebank"

var (
	// ErrWebhookNotFound is returned for a webhook ID that does not exist
	// and, alike, for one outside the caller's entity tree.
	ErrWebhookNotFound = corebank.NotFound("webhook")
	// ErrEventNotFound is returned by RedeliverEvent for an event that is
	// unknown, purged after the retention period, or outside the caller's
	// entity tree.
	ErrEventNotFound = corebank.NotFound("event")
	// ErrDeliveryNotFound is returned by GetDelivery for an unknown or
	// purged delivery and for one of a webhook outside the caller's tree.
	ErrDeliveryNotFound = corebank.NotFound("delivery")
	// ErrWebhookDeleted is returned by UpdateWebhook, RotateWebhookSecret
	// and SendTestEvent on a deleted webhook: deletion is final.
	ErrWebhookDeleted = corebank.InvalidForState(corebank.KindRejected, "the webhook is deleted")
	// ErrInvalidSignature is returned by Verify when the signature header is
	// missing, malformed, or does not match the body and timestamp.
	ErrInvalidSignature = corebank.E(corebank.KindUnauthorized, "invalid_signature", "the webhook signature does not match")
	// ErrTimestampOutOfTolerance is returned by Verify when the timestamp is
	// malformed or further from now than the tolerance (a replay).
	ErrTimestampOutOfTolerance = corebank.E(corebank.KindUnauthorized, "timestamp_out_of_tolerance", "the webhook timestamp is outside the tolerance")
)
