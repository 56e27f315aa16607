package entities_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// TestGateRecordEqualsEntityRecord checks that the gate record answers as
// the plain path does: with every gate/<id> record removed (a store written
// before they existed), the gate and scope checks read the entity JSON and
// give the same answers.
func TestGateRecordEqualsEntityRecord(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	a, a1, a11, b := tree(t, e)
	if _, err := e.s.ReviewEntity(ctx, sys, a1, "suspended"); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		InTree map[string]bool
		Gate   map[string]string
	}
	ids := []string{root, a, a1, a11, b, "01HZZZZZZZZZZZZZZZZZZZZZZZ"}
	observe := func() outcome {
		t.Helper()
		o := outcome{InTree: map[string]bool{}, Gate: map[string]string{}}
		err := e.db.View(ctx, func(tx storage.Tx) error {
			for _, tr := range []scope.Tree{entities.Gate{}, e.s} {
				for _, x := range ids {
					for _, y := range ids {
						in, err := tr.InTreeTx(tx, x, y)
						if err != nil {
							return err
						}
						if prev, seen := o.InTree[x+">"+y]; seen && prev != in {
							t.Errorf("Gate and Service disagree on %s>%s", x, y)
						}
						o.InTree[x+">"+y] = in
					}
				}
			}
			var g ledger.EntityGate = entities.Gate{}
			for _, x := range ids {
				o.Gate[x] = errString(g.CanMoveMoney(tx, x)) + "|" + errString(g.CanOpenAccount(tx, x))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	want := observe()
	if !want.InTree[root+">"+a11] || want.InTree[b+">"+a] || want.Gate[root] != "|" || want.Gate[a1] == "|" {
		t.Fatalf("unexpected baseline %+v", want)
	}
	// Remove the gate records: the plain layout.
	err := e.db.Update(ctx, func(tx storage.Tx) error {
		var gates [][]byte
		if err := tx.Scan("entities", storage.ScanOptions{Prefix: storage.Prefix("gate")}, func(k, _ []byte) error {
			gates = append(gates, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		if len(gates) < 5 {
			t.Errorf("%d gate records, want one per entity", len(gates))
		}
		for _, g := range gates {
			if err := tx.Delete("entities", g); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, observe()); diff != "" {
		t.Errorf("plain layout (-record +plain):\n%s", diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
