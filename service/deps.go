package service

import (
	"log/slog"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
)

// Deps are the dependencies every domain service shares. Each domain's
// Options embeds Deps; a zero field takes the default WithDefaults gives
// it.
type Deps struct {
	// Clock is the service's only source of time. Default: the real
	// clock, or for funding, acquiring, cards and capital the clock of
	// the ledger they post through.
	Clock clock.Clock
	// IDs makes every object ID; default corebank.NewIDs(nil) (ULIDs
	// from crypto/rand).
	IDs *corebank.IDs
	// Tree places entities in their tree for the scope checks
	// (entities.Gate{} or *entities.Service); nil: a caller reaches only
	// its own entity. The entities service is the tree itself and does not
	// read it.
	Tree scope.Tree
	// Logger receives the service's logs, carrying IDs only (entities and
	// webhooks log; the others do not yet); default discards.
	Logger *slog.Logger
}

// WithDefaults returns d with every zero field but Tree defaulted: Clock
// to clk, or the real clock when clk is nil; IDs to corebank.NewIDs(nil);
// Logger to one that discards. A nil Tree stays nil (see Deps.Tree).
func (d Deps) WithDefaults(clk clock.Clock) Deps {
	if d.Clock == nil {
		d.Clock = clk
	}
	if d.Clock == nil {
		d.Clock = clock.New()
	}
	if d.IDs == nil {
		d.IDs = corebank.NewIDs(nil)
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return d
}
