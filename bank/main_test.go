package bank_test

import (
	"testing"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster the postgres cases start.
func TestMain(m *testing.M) { pgtest.Main(m) }
