package webhooks_test

import (
	"testing"
	"time"

	"github.com/corebank/corebank/webhooks"
)

// BenchmarkDeliver measures signed deliveries per second to a local TLS
// receiver with 16 attempts in flight, outbox ingestion included.
func BenchmarkDeliver(b *testing.B) {
	e := newEnv(b, nil, nil, func(o *webhooks.Options) { o.Concurrency = 16 })
	e.mustCreate(b, entityA, events(true))
	for i := 0; i < b.N; i++ {
		e.outbox.Append(b, "accounts.created", entityA, map[string]int{"n": i})
	}
	b.ResetTimer()
	t0 := time.Now()
	n := e.mustDrain(b)
	elapsed := time.Since(t0)
	b.StopTimer()
	if n != b.N {
		b.Fatalf("sent %d, want %d", n, b.N)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "deliveries/s")
}
