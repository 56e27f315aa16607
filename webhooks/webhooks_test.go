package webhooks_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/webhooks"
)

const entityA = "01HZZZZZZZZZZZZZZZZZZZZZZA"

func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	var ce *corebank.Error
	if !errors.As(err, &ce) || ce.Kind != corebank.KindInvalid {
		t.Fatalf("error = %v, want a validation error", err)
	}
	return ce.Fields
}

func TestCreate(t *testing.T) {
	e := newEnv(t, nil, nil, nil)

	t.Run("OK", func(t *testing.T) {
		w, err := e.svc.CreateWebhook(ctx, corebank.As(entityA), webhooks.NewWebhook{
			EntityID: entityA, URL: e.recv.srv.URL + "/hook", ExpiresIn: ptr(int64(3600)),
			EnabledEvents: events(false, "accounts.created", "accounts.updated", "accounts.deleted", "outflows.completed"),
			Description:   "ops", Tags: []string{"a"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(w.Secret, "whsec_") || len(w.Secret) != len("whsec_")+43 {
			t.Errorf("secret = %q, want whsec_ + 43 base64url characters", w.Secret)
		}
		want := []string{"accounts.all", "outflows.completed"}
		if diff := cmp.Diff(want, w.PreferredEvents); diff != "" {
			t.Errorf("preferred_events (-want +got):\n%s", diff)
		}
		if w.Status != webhooks.StatusActive || w.Created != start.UnixMilli() || w.Deleted != 0 || w.ExpiresIn != 3600 {
			t.Errorf("webhook = %+v", w)
		}
		got, err := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Secret != "" {
			t.Error("Get returned the secret")
		}
		raw, _ := json.Marshal(got)
		for _, f := range []string{`"id"`, `"entity_id"`, `"url"`, `"expires_in"`, `"enabled_events"`, `"preferred_events"`,
			`"description"`, `"tags"`, `"status"`, `"created"`, `"updated"`, `"deleted"`, `"stats"`,
			`"total_webhooks_sent"`, `"total_webhooks_successful"`, `"total_webhooks_failed"`, `"last_webhook_event"`,
			`"funding_sessions":{"updated":false}`, `"all":false`} {
			if !strings.Contains(string(raw), f) {
				t.Errorf("JSON %s lacks %s", raw, f)
			}
		}
		if strings.Contains(string(raw), "secret") {
			t.Errorf("JSON %s holds the secret", raw)
		}
	})

	tests := []struct {
		name  string
		in    webhooks.NewWebhook
		field string
	}{
		{"ErrHTTP", webhooks.NewWebhook{URL: "http://example.com", ExpiresIn: ptr(int64(1)), EnabledEvents: events(true)}, "url"},
		{"ErrNoURL", webhooks.NewWebhook{ExpiresIn: ptr(int64(1)), EnabledEvents: events(true)}, "url"},
		{"ErrBadURL", webhooks.NewWebhook{URL: "https://", ExpiresIn: ptr(int64(1)), EnabledEvents: events(true)}, "url"},
		{"ErrNoExpiresIn", webhooks.NewWebhook{URL: "https://example.com", EnabledEvents: events(true)}, "expires_in"},
		{"ErrZeroExpiresIn", webhooks.NewWebhook{URL: "https://example.com", ExpiresIn: ptr(int64(0)), EnabledEvents: events(true)}, "expires_in"},
		{"ErrNoEvents", webhooks.NewWebhook{URL: "https://example.com", ExpiresIn: ptr(int64(1))}, "enabled_events"},
		{"ErrNothingEnabled", webhooks.NewWebhook{URL: "https://example.com", ExpiresIn: ptr(int64(1)), EnabledEvents: events(false)}, "enabled_events"},
		{"ErrUnknownKey", webhooks.NewWebhook{URL: "https://example.com", ExpiresIn: ptr(int64(1)), EnabledEvents: events(false, "accounts.exploded")}, "enabled_events.accounts.exploded"},
		{"ErrUnknownGroup", webhooks.NewWebhook{URL: "https://example.com", ExpiresIn: ptr(int64(1)), EnabledEvents: events(true, "loans.created")}, "enabled_events.loans"},
		{"ErrTag", webhooks.NewWebhook{URL: "https://example.com", ExpiresIn: ptr(int64(1)), EnabledEvents: events(true), Tags: []string{""}}, "tags.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in.EntityID == "" {
				tt.in.EntityID = entityA
			}
			_, err := e.svc.CreateWebhook(ctx, corebank.As(tt.in.EntityID), tt.in)
			if f := fieldsOf(t, err); f[tt.field] == "" {
				t.Errorf("fields = %v, want %q named", f, tt.field)
			}
		})
	}
}

func TestEnabledEventsJSON(t *testing.T) {
	var ee webhooks.EnabledEvents
	if err := json.Unmarshal([]byte(`{"all":false,"outflows":{"completed":true,"failed":false},"cards":{"created":true,"frozen":true,"unfrozen":true,"deleted":true}}`), &ee); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"outflows.completed", "cards.all"}, ee.Preferred()); diff != "" {
		t.Errorf("Preferred (-want +got):\n%s", diff)
	}
	if !ee.Enabled("outflows.completed") || ee.Enabled("outflows.failed") || ee.Enabled("webhook.test") {
		t.Error("Enabled disagrees with the subscription")
	}
	if got := (webhooks.EnabledEvents{All: true}).Preferred(); !cmp.Equal(got, []string{"all"}) {
		t.Errorf("Preferred with all = %v", got)
	}
	t.Run("ErrType", func(t *testing.T) {
		var ee webhooks.EnabledEvents
		err := json.Unmarshal([]byte(`{"accounts":{"created":"yes"}}`), &ee)
		if f := fieldsOf(t, err); f["enabled_events.accounts.created"] == "" {
			t.Errorf("fields = %v", f)
		}
	})
	raw, _ := json.Marshal(webhooks.EnabledEvents{})
	var back map[string]any
	_ = json.Unmarshal(raw, &back)
	if len(back) != 11 {
		t.Errorf("rendered %d keys, want all + 10 groups: %s", len(back), raw)
	}
}

func TestUpdateDelete(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	w := e.mustCreate(t, entityA, events(true))

	t.Run("OK", func(t *testing.T) {
		e.clk.Add(time.Second)
		got, err := e.svc.UpdateWebhook(ctx, corebank.System(), "", w.ID, webhooks.WebhookPatch{
			Description: ptr("new"), Tags: &[]string{"x", "y"}, Status: ptr(webhooks.StatusInactive),
			EnabledEvents: events(false, "cards.frozen"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != "new" || got.Status != webhooks.StatusInactive || got.Updated != start.Add(time.Second).UnixMilli() ||
			!cmp.Equal(got.PreferredEvents, []string{"cards.frozen"}) || !cmp.Equal(got.Tags, []string{"x", "y"}) {
			t.Errorf("updated = %+v", got)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		_, err := e.svc.UpdateWebhook(ctx, corebank.System(), "", w.ID, webhooks.WebhookPatch{URL: ptr("http://x"), Status: ptr("paused"), ExpiresIn: ptr(int64(-1))})
		f := fieldsOf(t, err)
		for _, k := range []string{"url", "status", "expires_in"} {
			if f[k] == "" {
				t.Errorf("fields = %v, want %s named", f, k)
			}
		}
	})
	t.Run("ErrActivateExpired", func(t *testing.T) {
		w2 := e.mustCreate(t, entityA, events(true))
		if _, err := e.svc.UpdateWebhook(ctx, corebank.System(), "", w2.ID, webhooks.WebhookPatch{ExpiresIn: ptr(int64(1))}); err != nil {
			t.Fatal(err)
		}
		e.clk.Add(2 * time.Second)
		_, err := e.svc.UpdateWebhook(ctx, corebank.System(), "", w2.ID, webhooks.WebhookPatch{Status: ptr(webhooks.StatusActive)})
		if f := fieldsOf(t, err); f["status"] == "" {
			t.Errorf("fields = %v", f)
		}
		got, err := e.svc.UpdateWebhook(ctx, corebank.System(), "", w2.ID, webhooks.WebhookPatch{Status: ptr(webhooks.StatusActive), ExpiresIn: ptr(int64(3600))})
		if err != nil || got.Status != webhooks.StatusActive {
			t.Fatalf("reactivate = %+v, %v", got, err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		e.clk.Add(time.Second)
		got, err := e.svc.DeleteWebhook(ctx, corebank.System(), "", w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Deleted != e.clk.Now().UnixMilli() || got.Status != webhooks.StatusInactive {
			t.Errorf("deleted = %+v", got)
		}
		if _, err := e.svc.UpdateWebhook(ctx, corebank.System(), "", w.ID, webhooks.WebhookPatch{Description: ptr("x")}); !errors.Is(err, webhooks.ErrWebhookDeleted) {
			t.Errorf("Update after delete = %v", err)
		}
		if _, err := e.svc.RotateWebhookSecret(ctx, corebank.System(), "", w.ID); !errors.Is(err, webhooks.ErrWebhookDeleted) {
			t.Errorf("RotateSecret after delete = %v", err)
		}
		page, err := e.svc.ListWebhooks(ctx, corebank.As(entityA), webhooks.WebhookFilter{}, corebank.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it.ID == w.ID {
				t.Error("List shows a deleted webhook")
			}
		}
	})
	t.Run("ErrWebhookNotFound", func(t *testing.T) {
		if _, err := e.svc.GetWebhook(ctx, corebank.System(), "", "01HZZZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, webhooks.ErrWebhookNotFound) {
			t.Errorf("Get = %v", err)
		}
	})
}

func TestList(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, e.mustCreate(t, entityA, events(true)).ID)
		e.clk.Add(time.Millisecond)
	}
	e.mustCreate(t, "01HZZZZZZZZZZZZZZZZZZZZZZB", events(true))
	var got []string
	opts := corebank.ListOptions{Limit: 2}
	for {
		p, err := e.svc.ListWebhooks(ctx, corebank.As(entityA), webhooks.WebhookFilter{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range p.Items {
			got = append(got, w.ID)
		}
		if !p.HasNext {
			break
		}
		opts.After = p.Next
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("paged IDs (-want +got):\n%s", diff)
	}
	p, err := e.svc.ListWebhooks(ctx, corebank.As(entityA), webhooks.WebhookFilter{}, corebank.ListOptions{Limit: 2, Before: ids[4]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ids[2:4], []string{p.Items[0].ID, p.Items[1].ID}); diff != "" || !p.HasPrevious || !p.HasNext {
		t.Errorf("before page (-want +got):\n%s %+v", diff, p)
	}
	if _, err := e.svc.ListWebhooks(ctx, corebank.As(entityA), webhooks.WebhookFilter{}, corebank.ListOptions{After: "nope"}); fieldsOf(t, err)["cursor"] == "" {
		t.Error("a malformed cursor is accepted")
	}
}
