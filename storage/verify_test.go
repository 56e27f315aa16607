package storage_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// thing is a toy record: "things" holds r/<id> -> JSON and its index
// g/<group>/<id>, and due work "things.due" names things by ID.
type thing struct {
	ID    string `json:"id"`
	Group string `json:"group"`
}

const things = storage.Bucket("things")

func putThing(tx storage.Tx, th *thing) error {
	if err := storage.PutJSON(tx, things, storage.Key("r", th.ID), th); err != nil {
		return err
	}
	return tx.Put(things, storage.Key("g", th.Group, th.ID), nil)
}

// verifyThings is a domain's VerifyStore for things.
func verifyThings(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*thing]{
		Kind:    "thing",
		Records: storage.ScanJSON[thing](things, []byte("r/"), v, "thing"),
		Load: func(tx storage.Tx, id string) (*thing, error) {
			return storage.LoadJSON[thing](tx, things, storage.Key("r", id), storage.ErrNotFound)
		},
		Keys: func(tx storage.Tx, th *thing) ([]storage.KV, error) {
			return storage.Writes(tx, func(tx storage.Tx) error { return putThing(tx, th) })
		},
		Ranges: []storage.IndexRange{{Bucket: things, Prefix: []byte("g/"), ID: storage.LastPart}},
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, "things.due", func(id string, _ int64) (string, error) {
		if ok, err := storage.Exists(tx, things, storage.Key("r", id)); err != nil || ok {
			return "", err
		}
		return "no such thing", nil
	})
}

// TestVerify: the shared checks find each kind of damage to a toy domain's
// records, index and due work, and nothing on a whole store.
func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(tx storage.Tx) error
		want   []string
	}{
		{"OK", func(storage.Tx) error { return nil }, nil},
		{"IndexMissing", func(tx storage.Tx) error { return tx.Delete(things, []byte("g/red/A")) },
			[]string{"index_missing A"}},
		{"IndexDangling", func(tx storage.Tx) error { return tx.Put(things, []byte("g/red/Z"), nil) },
			[]string{"index_dangling Z"}},
		{"IndexStale", func(tx storage.Tx) error { return tx.Put(things, []byte("g/blue/A"), nil) },
			[]string{"index_stale A"}},
		{"IndexMalformed", func(tx storage.Tx) error { return tx.Put(things, []byte("g/red/"), nil) },
			[]string{"record_corrupt g/red/"}},
		{"RecordCorrupt", func(tx storage.Tx) error { return tx.Put(things, []byte("r/A"), []byte("{")) },
			[]string{"record_corrupt A"}},
		{"DueOrphan", func(tx storage.Tx) error { return storage.Schedule(tx, "things.due", 5, "Z") },
			[]string{"due_orphan Z"}},
		{"DueUnknownKind", func(tx storage.Tx) error { return storage.Schedule(tx, "nobody", 5, "A") },
			[]string{"due_unknown_kind A"}},
		{"LeaseOrphan", func(tx storage.Tx) error {
			_, err := storage.LeaseTx(tx, "things.due", storage.DueItem{At: 9, ID: "B"}, storage.DueLease{Node: "n", Until: 10})
			return err
		}, []string{"due_orphan B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := memory.New()
			t.Cleanup(func() { db.Close() })
			err := db.Update(ctx, func(tx storage.Tx) error {
				for _, th := range []*thing{{ID: "A", Group: "red"}, {ID: "B", Group: "blue"}} {
					if err := putThing(tx, th); err != nil {
						return err
					}
				}
				if err := storage.Schedule(tx, "things.due", 7, "A"); err != nil {
					return err
				}
				return tc.damage(tx)
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			err = db.View(ctx, func(tx storage.Tx) error {
				v := storage.NewVerifier(func(f storage.Finding) { got = append(got, f.Kind+" "+strings.Join(f.IDs, " ")) })
				if err := verifyThings(tx, v); err != nil {
					return err
				}
				if err := storage.VerifyDueKinds(tx, v); err != nil {
					return err
				}
				if v.Findings() != len(got) {
					t.Errorf("Findings() = %d, %d reported", v.Findings(), len(got))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVerifierClaims: what one domain expects another to claim is
// reported once, in ID order, unless claimed.
func TestVerifierClaims(t *testing.T) {
	var got []string
	v := storage.NewVerifier(func(f storage.Finding) { got = append(got, f.String()) })
	v.Expect("holds", "H2", "hold H2")
	v.Expect("holds", "H1", "hold H1")
	v.Expect("holds", "H3", "hold H3")
	v.Claim("holds", "H2")
	v.Claim("holds", "H9") // claimed, never expected: the claimant's business
	v.Unclaimed("holds", "owner")
	v.Unclaimed("holds", "owner")
	want := []string{"unclaimed H1: hold H1 is owned by no owner", "unclaimed H3: hold H3 is owned by no owner"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
