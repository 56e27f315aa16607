package webhooks_test

import (
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/webhooks"
)

// The services the server wires in satisfy the interfaces as they are.
var (
	_ scope.Tree      = (*entities.Service)(nil)
	_ scope.Tree      = entities.Gate{}
	_ webhooks.Sealer = (*corebank.Sealer)(nil)
)
