package sim

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster TestSimPostgres starts.
func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	flagPGSteps = flag.Int("pgsteps", 300, "TestSimPostgres: steps per seed")
	flagPGSeeds = flag.Int("pgseeds", 1, "TestSimPostgres: how many seeds")
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
	for _, seed := range seeds {
		// Each seed gets a store of its own: a table of its own.
		opt := &postgres.Options{Table: fmt.Sprintf("sim_%d", seed)}
		res := runSeed(t, Config{Seed: seed, Steps: *flagPGSteps, Store: Postgres, Banks: 2, Postgres: func() (storage.Backend, error) {
			return postgres.Open(context.Background(), dsn, opt)
		}})
		for k, v := range res.Counts {
			total[k] += v
		}
	}
	t.Logf("%s", Summary(total))
}
