package corebanktest_test

import (
	"testing"

	"github.com/corebank/corebank/corebanktest"
)

// BenchmarkNew measures the setup of one bank, as a test pays it before
// its first line: bank.New over memory, migrations, the bootstrap with
// pooled card keys, the background dispatcher and an httptest server.
// "setup" leaves every bank's cleanup to the end of the benchmark;
// "setup+cleanup" also stops and closes each bank before the next.
func BenchmarkNew(b *testing.B) {
	b.Run("setup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			corebanktest.New(b)
		}
	})
	b.Run("setup+cleanup", func(b *testing.B) {
		b.ReportAllocs()
		tb := &cleanups{TB: b}
		for b.Loop() {
			corebanktest.New(tb)
			tb.run()
		}
	})
}

// cleanups is a testing.TB that keeps the cleanup functions registered with
// it until run.
type cleanups struct {
	testing.TB
	fns []func()
}

func (c *cleanups) Cleanup(f func()) { c.fns = append(c.fns, f) }

func (c *cleanups) run() {
	for i := len(c.fns) - 1; i >= 0; i-- {
		c.fns[i]()
	}
	c.fns = c.fns[:0]
}
