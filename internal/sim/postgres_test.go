package sim

import (
	"context"
	"flag"
	"sync"
	"testing"
	"time"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster TestSimPostgres starts.
func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	flagPGSteps = flag.Int("pgsteps", 150, "TestSimPostgres: steps per seed (.ci/run: 300)")
	flagPGSeeds = flag.Int("pgseeds", 1, "TestSimPostgres: how many seeds")
	flagPGProcs = flag.Int("pgworkers", 1, "TestSimPostgres: seeds run at once")
)

// TestSimPostgres runs the simulator over PostgreSQL with two banks on one
// database, as two nodes, each request sent to one of them at random; a
// crash restarts both nodes' processes with new connections.
func TestSimPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	var seeds []uint64
	for i := range max(1, *flagPGSeeds) {
		seeds = append(seeds, uint64(21+i))
	}
	if *flagSeed != 0 {
		seeds = []uint64{*flagSeed}
	}
	total := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan uint64)
	start := time.Now()
	steps := 0
	for range max(1, *flagPGProcs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range work {
				// Each run gets a store of its own: a table of its own.
				res := runSeed(t, Config{Seed: seed, Steps: *flagPGSteps, Store: Postgres, Banks: 2, Postgres: func(store string) (storage.Backend, error) {
					return postgres.Open(context.Background(), dsn, &postgres.Options{Table: store})
				}})
				mu.Lock()
				steps += res.Steps
				for k, v := range res.Counts {
					total[k] += v
				}
				mu.Unlock()
			}
		}()
	}
	for _, seed := range seeds {
		work <- seed
	}
	close(work)
	wg.Wait()
	t.Logf("%d seeds, %d steps in %s, two banks on one database", len(seeds), steps, time.Since(start).Round(time.Second))
	t.Logf("%s", Summary(total))
}
