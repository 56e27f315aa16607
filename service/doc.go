// Package service holds what every corebank domain service is built from,
// so that the eight domains (ledger, entities, funding, payments,
// acquiring, cards, capital, webhooks) are constructed one way.
//
// # Deps
//
// Deps are the dependencies every service shares: the clock, the ID
// source, the entity tree that decides a caller's scope, and the logger.
// Each domain's Options embeds Deps, so a field reads as o.Clock or
// o.IDs, and each NewService defaults it with Deps.WithDefaults. An
// application that builds several services sets one Deps and hands it to
// each (bank.New does):
//
//	d := service.Deps{Clock: clk, IDs: ids, Tree: entities.Gate{}}
//	led := ledger.NewService(db, &ledger.Options{Deps: d, Gate: entities.Gate{}})
//	pay := payments.NewService(db, led, &payments.Options{Deps: d})
//
// The package sits between storage and the ledger (root <- storage <-
// service <- ledger <- domains): it imports the root package, the scope
// rule (internal/scope) and the clock, and every domain imports it.
package service
