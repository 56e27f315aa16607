// Package payouts is an outside team's module: it depends on corebank
// through its go.mod (a replace to this checkout stands in for a
// version), and tests a payout flow against a corebanktest bank twice,
// once with the typed client and once on net/http alone, to show what
// the client saves. CI runs its tests: cd examples/outside && go test ./...
package payouts
