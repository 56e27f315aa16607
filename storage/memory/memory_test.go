package memory_test

import (
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend { return memory.New() })
}
