package webhooks_test

import (
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/webhooks"
)

// The services the server wires in satisfy the interfaces as they are.
var (
	_ webhooks.EntityTree = (*entities.Service)(nil)
	_ webhooks.Sealer     = (*corebank.Sealer)(nil)
)
