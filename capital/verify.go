package capital

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, what the capital package keeps in its bucket, and
// reports each broken rule to v: every product is in the product list,
// every order in its entity's list, every capital account in its entity's
// holdings (and a share offering's in its product's), and every list key
// names a record that should be under it; an order's capital account and
// an account's order exist, and every transaction is of an account that
// exists; a reserved order is queued to expire; and every item of the
// capital due work names an order or a capital account of the kind that
// work is for. It writes nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*productRecord]{
		Kind:    "capital product",
		Records: storage.ScanJSON[productRecord](bucket, []byte("p/"), v, "capital product"),
		Load:    storage.Found(getProduct, ErrProductNotFound),
		Keys: func(_ storage.Tx, r *productRecord) ([]storage.KV, error) {
			return []storage.KV{{Bucket: bucket, Key: productListKey(r.ID)}}, nil
		},
		Ranges: []storage.IndexRange{{Bucket: bucket, Prefix: []byte("pl/"), ID: storage.LastPart}},
	})
	if err != nil {
		return err
	}
	orders := storage.ScanJSON[orderRecord](bucket, []byte("o/"), v, "capital order")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*orderRecord]{
		Kind: "capital order",
		Records: func(tx storage.Tx, fn func(string, *orderRecord) error) error {
			return orders(tx, func(id string, o *orderRecord) error {
				if err := verifyOrder(tx, v, o); err != nil {
					return err
				}
				return fn(id, o)
			})
		},
		Load: storage.Found(getOrder, ErrOrderNotFound),
		Keys: func(_ storage.Tx, o *orderRecord) ([]storage.KV, error) {
			return []storage.KV{{Bucket: bucket, Key: orderListKey(o.EntityID, o.ID)}}, nil
		},
		Ranges: []storage.IndexRange{{Bucket: bucket, Prefix: []byte("ol/"), ID: storage.LastPart}},
	})
	if err != nil {
		return err
	}
	accounts := storage.ScanJSON[accountRecord](bucket, []byte("a/"), v, "capital account")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*accountRecord]{
		Kind: "capital account",
		Records: func(tx storage.Tx, fn func(string, *accountRecord) error) error {
			return accounts(tx, func(id string, a *accountRecord) error {
				if ok, err := storage.Exists(tx, bucket, orderKey(a.OrderID)); err != nil {
					return err
				} else if !ok {
					v.Report(storage.FindIndexDangling, []string{id, a.OrderID}, "capital account names an order that does not exist")
				}
				return fn(id, a)
			})
		},
		Load: loadAccount,
		Keys: func(_ storage.Tx, a *accountRecord) ([]storage.KV, error) {
			kvs := []storage.KV{{Bucket: bucket, Key: entityHoldingKey(a.EntityID, a.ID)}}
			if a.Type == TypeShareOffering {
				kvs = append(kvs, storage.KV{Bucket: bucket, Key: holdingKey(a.ProductID, a.ID)})
			}
			return kvs, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucket, Prefix: []byte("ae/"), ID: storage.LastPart},
			{Bucket: bucket, Prefix: []byte("ph/"), ID: storage.LastPart},
			// Transactions are records of their own, kept under their
			// account's ID: they need only it to exist.
			{Bucket: bucket, Prefix: []byte("t/"), ID: middlePart, Loose: true},
		},
	})
	if err != nil {
		return err
	}
	return verifyCapitalDue(tx, v)
}

// middlePart is the account of a transaction key t/<account>/<id>.
func middlePart(k, _ []byte) string {
	parts := bytes.Split(k, []byte{'/'})
	if len(parts) != 3 {
		return ""
	}
	return string(parts[1])
}

// loadAccount is getAccount, whose absence is storage.ErrCorrupt (an index
// names every account it reads), for an index check that tells the two
// apart.
func loadAccount(tx storage.Tx, id string) (*accountRecord, error) {
	return storage.LoadJSON[accountRecord](tx, bucket, accountKey(id), storage.ErrNotFound)
}

func verifyOrder(tx storage.Tx, v *storage.Verifier, o *orderRecord) error {
	if o.CapitalAccountID != "" {
		if ok, err := storage.Exists(tx, bucket, accountKey(o.CapitalAccountID)); err != nil {
			return err
		} else if !ok {
			v.Report(storage.FindIndexDangling, []string{o.ID, o.CapitalAccountID}, "capital order names a capital account that does not exist")
		}
	}
	if o.Status == OrderReserved {
		if ok, err := storage.IsDue(tx, dueExpire, o.ReservationExpiresAt, o.ID); err != nil {
			return err
		} else if !ok {
			v.Report(storage.FindDueMissing, []string{o.ID}, "reserved order expiring at %d is not queued", o.ReservationExpiresAt)
		}
	}
	return nil
}

func verifyCapitalDue(tx storage.Tx, v *storage.Verifier) error {
	order := func(states ...string) func(string, int64) (string, error) {
		return func(id string, at int64) (string, error) {
			o, err := getOrder(tx, id)
			switch {
			case errors.Is(err, ErrOrderNotFound):
				return "no such capital order", nil
			case err != nil:
				return "", nil // reported by the scan
			}
			for _, s := range states {
				if o.Status == s {
					return "", nil
				}
			}
			return "the capital order is " + o.Status, nil
		}
	}
	account := func(typ string) func(string, int64) (string, error) {
		return func(id string, _ int64) (string, error) {
			a, err := loadAccount(tx, id)
			switch {
			case errors.Is(err, storage.ErrNotFound):
				return "no such capital account", nil
			case err != nil:
				return "", nil
			case a.Type != typ:
				return fmt.Sprintf("the capital account is of type %s, not %s", a.Type, typ), nil
			}
			return "", nil
		}
	}
	for _, job := range []struct {
		kind string
		live func(string, int64) (string, error)
	}{
		{dueExpire, func(id string, at int64) (string, error) {
			o, err := getOrder(tx, id)
			switch {
			case errors.Is(err, ErrOrderNotFound):
				return "no such capital order", nil
			case err != nil:
				return "", nil
			case o.Status != OrderReserved:
				return "the capital order is " + o.Status, nil
			case o.ReservationExpiresAt != at:
				return fmt.Sprintf("the reservation expires at %d", o.ReservationExpiresAt), nil
			}
			return "", nil
		}},
		{dueRecover, order(OrderConfirming, OrderRecoveryRequired)},
		{dueAccrual, account(TypeFixedReturn)},
		{dueMaturity, account(TypeFixedReturn)},
		{dueSettle, account(TypeFixedReturn)},
		{dueRefund, account(TypeShareOffering)},
		{dueLock, account(TypeShareOffering)},
	} {
		if err := storage.VerifyDue(tx, v, job.kind, job.live); err != nil {
			return err
		}
	}
	return nil
}
