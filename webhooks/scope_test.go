package webhooks_test

import (
	"errors"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// scopeTree is parent > child, and sibling beside parent.
const (
	scParent  = "01HZZZZZZZZZZZZZZZZZZZZZP1"
	scChild   = "01HZZZZZZZZZZZZZZZZZZZZZC1"
	scSibling = "01HZZZZZZZZZZZZZZZZZZZZZS1"
	scMissing = "01HAAAAAAAAAAAAAAAAAAAAAAA"
)

func scopeTree() webhooks.AncestorsFunc {
	return func(_ storage.Tx, id string) ([]string, error) {
		if id == scChild {
			return []string{scParent}, nil
		}
		return nil, nil
	}
}

// TestScope checks that every method a request reaches decides scope
// itself: a foreign object answers exactly as a missing one, a foreign
// entity_id answers corebank.ErrEntityNotFound whether or not the object
// exists, and writes refuse read-only callers.
func TestScope(t *testing.T) {
	e := newEnv(t, nil, nil, func(o *webhooks.Options) { o.Tree = scopeTree() })
	w := e.mustCreate(t, scChild, events(true))
	ev := e.outbox.Append(t, "accounts.created", scChild, map[string]string{"id": "a"})
	e.mustDrain(t)
	page, err := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("deliveries = %v, %v", page, err)
	}
	dlv := page.Items[0].ID

	parent, child, sibling := corebank.As(scParent), corebank.As(scChild), corebank.As(scSibling)
	readOnly := corebank.Caller{EntityID: scChild, ReadOnly: true}
	upd := webhooks.WebhookPatch{Description: ptr("d")}
	// byID runs each by-id method as c under entity for webhook id.
	byID := map[string]func(c corebank.Caller, entity, id string) error{
		"GetWebhook": func(c corebank.Caller, entity, id string) error {
			_, err := e.svc.GetWebhook(ctx, c, entity, id)
			return err
		},
		"UpdateWebhook": func(c corebank.Caller, entity, id string) error {
			_, err := e.svc.UpdateWebhook(ctx, c, entity, id, upd)
			return err
		},
		"RotateWebhookSecret": func(c corebank.Caller, entity, id string) error {
			_, err := e.svc.RotateWebhookSecret(ctx, c, entity, id)
			return err
		},
		"SendTestEvent": func(c corebank.Caller, entity, id string) error {
			_, err := e.svc.SendTestEvent(ctx, c, entity, id)
			return err
		},
		"ListDeliveries": func(c corebank.Caller, entity, id string) error {
			_, err := e.svc.ListDeliveries(ctx, c, webhooks.DeliveryFilter{EntityID: entity, WebhookID: id}, corebank.ListOptions{})
			return err
		},
		"DeleteWebhook": func(c corebank.Caller, entity, id string) error {
			_, err := e.svc.DeleteWebhook(ctx, c, entity, id)
			return err
		},
	}
	for _, name := range []string{"GetWebhook", "UpdateWebhook", "RotateWebhookSecret", "SendTestEvent", "ListDeliveries", "DeleteWebhook"} {
		call := byID[name]
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				c      corebank.Caller
				entity string
				want   error
			}{
				{"ErrWebhookNotFound sibling", sibling, "", webhooks.ErrWebhookNotFound},
				{"ErrWebhookNotFound zero caller", corebank.Caller{}, "", webhooks.ErrWebhookNotFound},
				{"ErrWebhookNotFound sibling under itself", sibling, scSibling, webhooks.ErrWebhookNotFound},
				{"ErrEntityNotFound foreign entity_id", sibling, scChild, corebank.ErrEntityNotFound},
				{"ErrEntityNotFound entity_id above the caller", child, scParent, corebank.ErrEntityNotFound},
				{"ErrEntityNotFound unknown entity_id", parent, scMissing, corebank.ErrEntityNotFound},
			} {
				t.Run(tc.name, func(t *testing.T) {
					got, missing := call(tc.c, tc.entity, w.ID), call(tc.c, tc.entity, scMissing)
					if !errors.Is(got, tc.want) || got.Error() != missing.Error() {
						t.Fatalf("existing: %v; missing: %v; want both %v", got, missing, tc.want)
					}
				})
			}
			if name != "GetWebhook" && name != "ListDeliveries" {
				t.Run("ErrForbidden read-only", func(t *testing.T) {
					if err := call(readOnly, "", w.ID); !errors.Is(err, corebank.ErrForbidden) {
						t.Fatalf("err = %v, want ErrForbidden", err)
					}
				})
			}
			t.Run("OK parent under child", func(t *testing.T) {
				if name == "DeleteWebhook" {
					return // keep the webhook for the other methods
				}
				if err := call(parent, scChild, w.ID); err != nil {
					t.Fatal(err)
				}
			})
		})
	}

	t.Run("CreateWebhook", func(t *testing.T) {
		bad := webhooks.NewWebhook{EntityID: scChild, URL: "http://x"}
		if _, err := e.svc.CreateWebhook(ctx, sibling, bad); !errors.Is(err, corebank.ErrEntityNotFound) {
			t.Errorf("foreign entity_id with a bad body = %v, want ErrEntityNotFound first", err)
		}
		if _, err := e.svc.CreateWebhook(ctx, readOnly, bad); !errors.Is(err, corebank.ErrForbidden) {
			t.Errorf("read-only = %v, want ErrForbidden", err)
		}
		bad.EntityID = ""
		if f := fieldsOf(t, func() error { _, err := e.svc.CreateWebhook(ctx, corebank.System(), bad); return err }()); f["entity_id"] == "" {
			t.Errorf("System without entity_id: fields %v", f)
		}
		w2, err := e.svc.CreateWebhook(ctx, parent, webhooks.NewWebhook{EntityID: scChild, URL: e.recv.srv.URL,
			ExpiresIn: ptr(int64(60)), EnabledEvents: events(true)})
		if err != nil || w2.EntityID != scChild {
			t.Fatalf("parent creating for its child = %+v, %v", w2, err)
		}
	})
	t.Run("ListWebhooks", func(t *testing.T) {
		if _, err := e.svc.ListWebhooks(ctx, sibling, webhooks.WebhookFilter{EntityID: scChild}, corebank.ListOptions{}); !errors.Is(err, corebank.ErrEntityNotFound) {
			t.Errorf("foreign entity_id = %v", err)
		}
		if _, err := e.svc.ListEvents(ctx, sibling, webhooks.EventFilter{EntityID: scChild}, corebank.ListOptions{}); !errors.Is(err, corebank.ErrEntityNotFound) {
			t.Errorf("ListEvents foreign entity_id = %v", err)
		}
		p, err := e.svc.ListEvents(ctx, sibling, webhooks.EventFilter{}, corebank.ListOptions{})
		if err != nil || len(p.Items) != 0 {
			t.Errorf("sibling's own events = %v, %v", p, err)
		}
	})
	t.Run("RedeliverEvent", func(t *testing.T) {
		for _, tc := range []struct {
			c      corebank.Caller
			entity string
			want   error
		}{
			{sibling, "", webhooks.ErrEventNotFound},
			{sibling, scChild, corebank.ErrEntityNotFound},
		} {
			_, got := e.svc.RedeliverEvent(ctx, tc.c, tc.entity, ev.ID)
			_, missing := e.svc.RedeliverEvent(ctx, tc.c, tc.entity, scMissing)
			if !errors.Is(got, tc.want) || got.Error() != missing.Error() {
				t.Errorf("existing: %v; missing: %v; want both %v", got, missing, tc.want)
			}
		}
		if _, err := e.svc.RedeliverEvent(ctx, readOnly, "", ev.ID); !errors.Is(err, corebank.ErrForbidden) {
			t.Errorf("read-only = %v", err)
		}
	})
	t.Run("GetDelivery", func(t *testing.T) {
		if _, err := e.svc.GetDelivery(ctx, child, "", dlv); err != nil {
			t.Fatal(err)
		}
		_, got := e.svc.GetDelivery(ctx, sibling, "", dlv)
		_, missing := e.svc.GetDelivery(ctx, sibling, "", scMissing)
		if !errors.Is(got, webhooks.ErrDeliveryNotFound) || got.Error() != missing.Error() {
			t.Errorf("existing: %v; missing: %v", got, missing)
		}
	})
}

func TestNotFoundSentinelsDistinct(t *testing.T) {
	all := []error{webhooks.ErrWebhookNotFound, webhooks.ErrEventNotFound, webhooks.ErrDeliveryNotFound, corebank.ErrEntityNotFound}
	for i, a := range all {
		for j, b := range all {
			if (i == j) != errors.Is(a, b) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, i != j)
			}
		}
	}
}

func TestDueJobs(t *testing.T) {
	e := newEnv(t, nil, always(500), nil)
	var kinds []string
	for _, j := range e.svc.DueJobs() {
		kinds = append(kinds, j.Kind)
	}
	want := []string{"webhooks.attempt", "webhooks.expire", "webhooks.sweep"}
	if len(kinds) != len(want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds = %v, want %v", kinds, want)
		}
	}

	t.Run("OK first attempt whatever the clock", func(t *testing.T) {
		e.mustCreate(t, entityA, events(true))
		e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
		// An asOf an hour before the event: the first attempt still goes.
		if _, err := e.svc.RunDue(ctx, e.clk.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if n := len(e.recv.Hits()); n != 1 {
			t.Fatalf("%d attempts, want the first one", n)
		}
	})
	t.Run("OK retries on the clock through a storage.Due", func(t *testing.T) {
		due := storage.NewDue(e.db, e.clk, 0, e.svc.DueJobs()...)
		e.clk.Add(9 * time.Second)
		if _, err := due.RunDue(ctx, e.clk.Now()); err != nil {
			t.Fatal(err)
		}
		if n := len(e.recv.Hits()); n != 1 {
			t.Fatalf("%d attempts before the retry is due", n)
		}
		e.clk.Add(time.Second)
		if _, err := due.RunDue(ctx, e.clk.Now()); err != nil {
			t.Fatal(err)
		}
		if n := len(e.recv.Hits()); n != 2 {
			t.Fatalf("%d attempts once the retry is due, want 2", n)
		}
	})
}
