package payments_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

func strp(s string) *string { return &s }

func business(legal, email string) payments.NewCounterparty {
	return payments.NewCounterparty{Type: "business", Profile: payments.Profile{
		LegalName: legal, Relationship: "supplier", Email: email,
		RegisteredAddress: &payments.Address{Line1: "2 High St", City: "Nairobi", Country: "KE"},
		Identification:    []payments.Identification{{Type: "L", Number: "C-12345", IssuingCountry: "KE"}},
	}}
}

func TestCreateCounterparty(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newMemEnv(t)
		in := individual("Ada", "Lovelace", "ada@example.com")
		in.Profile.Phone = &payments.Phone{Number: "+447911123456", Type: "mobile", Country: "GB"}
		in.Profile.Identification = []payments.Identification{{Type: "P", Number: "123456789", IssuingCountry: "GB"}}
		in.Meta = map[string]string{"k": "v"}
		c, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), in)
		if err != nil {
			t.Fatal(err)
		}
		want := &payments.Counterparty{ID: c.ID, EntityID: "ent1", Type: "individual", Nickname: "Ada Lovelace",
			Status: "active", Profile: in.Profile, Meta: map[string]string{"k": "v"},
			Created: start.UnixMilli(), Updated: start.UnixMilli()}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		got, err := e.svc.GetCounterparty(ctx, corebank.As("ent1"), "", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("get (-want +got):\n%s", diff)
		}
		if _, err := e.svc.GetCounterparty(ctx, corebank.As("ent2"), "", c.ID); !errors.Is(err, payments.ErrCounterpartyNotFound) {
			t.Errorf("other entity: %v", err)
		}
	})
	t.Run("NicknameDefaultsToLegalName", func(t *testing.T) {
		e := newMemEnv(t)
		c, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), business("Acme Ltd", "ap@acme.example"))
		if err != nil {
			t.Fatal(err)
		}
		if c.Nickname != "Acme Ltd" {
			t.Errorf("nickname %q", c.Nickname)
		}
	})
	cases := []struct {
		name   string
		edit   func(*payments.NewCounterparty)
		fields []string
	}{
		{"ErrTypeRequired", func(n *payments.NewCounterparty) { n.Type = "" }, []string{"type"}},
		{"ErrTypeUnknown", func(n *payments.NewCounterparty) { n.Type = "robot" }, []string{"type"}},
		{"ErrFirstNameRequired", func(n *payments.NewCounterparty) { n.Profile.FirstName = " " }, []string{"profile.first_name"}},
		{"ErrLastNameRequired", func(n *payments.NewCounterparty) { n.Profile.LastName = "" }, []string{"profile.last_name"}},
		{"ErrRelationshipRequired", func(n *payments.NewCounterparty) { n.Profile.Relationship = "" }, []string{"profile.relationship"}},
		{"ErrRelationshipEnum", func(n *payments.NewCounterparty) { n.Profile.Relationship = "friend" }, []string{"profile.relationship"}},
		{"ErrEmailRequired", func(n *payments.NewCounterparty) { n.Profile.Email = "" }, []string{"profile.email"}},
		{"ErrEmailSyntax", func(n *payments.NewCounterparty) { n.Profile.Email = "ada@localhost" }, []string{"profile.email"}},
		{"ErrEmailSyntaxSpace", func(n *payments.NewCounterparty) { n.Profile.Email = "a da@example.com" }, []string{"profile.email"}},
		{"ErrAddressRequired", func(n *payments.NewCounterparty) { n.Profile.Address = nil }, []string{"profile.address"}},
		{"ErrAddressLine1City", func(n *payments.NewCounterparty) {
			n.Profile.Address = &payments.Address{Country: "GB"}
		}, []string{"profile.address.line1", "profile.address.city"}},
		{"ErrAddressCountry", func(n *payments.NewCounterparty) { n.Profile.Address.Country = "UK" }, []string{"profile.address.country"}},
		{"ErrAddressCountryLower", func(n *payments.NewCounterparty) { n.Profile.Address.Country = "gb" }, []string{"profile.address.country"}},
		{"ErrIdentificationType", func(n *payments.NewCounterparty) {
			n.Profile.Identification = []payments.Identification{{Type: "L", Number: "1", IssuingCountry: "GB"}}
		}, []string{"profile.identification.0.type"}},
		{"ErrIdentificationFields", func(n *payments.NewCounterparty) {
			n.Profile.Identification = []payments.Identification{{Type: "P", Number: "1", IssuingCountry: "GB"}, {Type: "D"}}
		}, []string{"profile.identification.1.number", "profile.identification.1.issuing_country"}},
		{"ErrPhoneNumber", func(n *payments.NewCounterparty) {
			n.Profile.Phone = &payments.Phone{Number: "07700 900123", Type: "mobile", Country: "GB"}
		}, []string{"profile.phone.number"}},
		{"ErrPhoneTypeCountry", func(n *payments.NewCounterparty) {
			n.Profile.Phone = &payments.Phone{Number: "+447911123456", Type: "fax", Country: "XX"}
		}, []string{"profile.phone.type", "profile.phone.country"}},
		{"ErrBusinessFieldsOnIndividual", func(n *payments.NewCounterparty) { n.Profile.LegalName = "Acme" }, []string{"profile.legal_name"}},
		{"ErrNicknameTooLong", func(n *payments.NewCounterparty) { n.Nickname = string(make([]byte, 101)) }, []string{"nickname"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newMemEnv(t)
			in := individual("Ada", "Lovelace", "ada@example.com")
			tc.edit(&in)
			_, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), in)
			wantFields(t, err, tc.fields...)
		})
	}
	bcases := []struct {
		name   string
		edit   func(*payments.NewCounterparty)
		fields []string
	}{
		{"ErrLegalNameRequired", func(n *payments.NewCounterparty) { n.Profile.LegalName = "" }, []string{"profile.legal_name"}},
		{"ErrRegisteredAddressRequired", func(n *payments.NewCounterparty) { n.Profile.RegisteredAddress = nil }, []string{"profile.registered_address"}},
		{"ErrIdentificationTypeL", func(n *payments.NewCounterparty) { n.Profile.Identification[0].Type = "P" }, []string{"profile.identification.0.type"}},
		{"ErrAddressOnBusiness", func(n *payments.NewCounterparty) {
			n.Profile.Address = &payments.Address{Line1: "x", City: "y", Country: "GB"}
		}, []string{"profile.address"}},
	}
	for _, tc := range bcases {
		t.Run("Business"+tc.name, func(t *testing.T) {
			e := newMemEnv(t)
			in := business("Acme Ltd", "ap@acme.example")
			tc.edit(&in)
			_, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), in)
			wantFields(t, err, tc.fields...)
		})
	}
}

func TestCounterpartyDuplicate(t *testing.T) {
	e := newMemEnv(t)
	first, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Ada", "Lovelace", "ada@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ErrSameNameAndEmail", func(t *testing.T) {
		_, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual(" ada ", "LOVELACE", "ADA@example.com"))
		wantFields(t, err, "profile.email")
		if corebank.KindOf(err) != corebank.KindInvalid {
			t.Errorf("kind %v", corebank.KindOf(err))
		}
	})
	t.Run("OtherEntityOK", func(t *testing.T) {
		if _, err := e.svc.CreateCounterparty(ctx, corebank.As("ent2"), individual("Ada", "Lovelace", "ada@example.com")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("OtherEmailOK", func(t *testing.T) {
		if _, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Ada", "Lovelace", "ada2@example.com")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrSameIdentification", func(t *testing.T) {
		if _, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), business("Acme Ltd", "ap@acme.example")); err != nil {
			t.Fatal(err)
		}
		in := business("Acme Holdings", "other@acme.example")
		in.Profile.Identification[0].Number = "c 12345"
		_, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), in)
		wantFields(t, err, "profile.identification.0.number")
	})
	t.Run("InactiveDoesNotCount", func(t *testing.T) {
		if _, err := e.svc.DeactivateCounterparty(ctx, corebank.As("ent1"), "", first.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Ada", "Lovelace", "ada@example.com")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrUpdateIntoDuplicate", func(t *testing.T) {
		c, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Grace", "Hopper", "ada@example.com"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.UpdateCounterparty(ctx, corebank.As("ent1"), "", c.ID, payments.CounterpartyPatch{Profile: &payments.ProfilePatch{FirstName: strp("Ada"), LastName: strp("Lovelace")}})
		wantFields(t, err, "profile.email")
	})
}

func TestUpdateCounterparty(t *testing.T) {
	e := newMemEnv(t)
	in := individual("Ada", "Lovelace", "ada@example.com")
	in.Profile.Phone = &payments.Phone{Number: "+447911123456", Type: "mobile", Country: "GB"}
	c, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), in)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		e.clk.Add(time.Second)
		got, err := e.svc.UpdateCounterparty(ctx, corebank.As("ent1"), "", c.ID, payments.CounterpartyPatch{Profile: &payments.ProfilePatch{
			LastName: strp("King"),
			Address:  &payments.AddressPatch{City: strp("Paris"), Country: strp("FR")},
			Phone:    &payments.PhonePatch{Type: strp("work")},
		}})
		if err != nil {
			t.Fatal(err)
		}
		want := *c
		want.Profile.LastName = "King"
		want.Nickname = "Ada King"
		want.Profile.Address = &payments.Address{Line1: "1 Main St", City: "Paris", Country: "FR"}
		want.Profile.Phone = &payments.Phone{Number: "+447911123456", Type: "work", Country: "GB"}
		want.Updated = got.Updated
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if got.Updated == c.Updated {
			t.Error("updated not moved")
		}
	})
	t.Run("ExplicitNicknameKept", func(t *testing.T) {
		if _, err := e.svc.UpdateCounterparty(ctx, corebank.As("ent1"), "", c.ID, payments.CounterpartyPatch{Nickname: strp("Countess")}); err != nil {
			t.Fatal(err)
		}
		got, err := e.svc.UpdateCounterparty(ctx, corebank.As("ent1"), "", c.ID, payments.CounterpartyPatch{Profile: &payments.ProfilePatch{FirstName: strp("Augusta")}})
		if err != nil || got.Nickname != "Countess" {
			t.Fatalf("%v %+v", err, got)
		}
	})
	t.Run("ErrRevalidated", func(t *testing.T) {
		_, err := e.svc.UpdateCounterparty(ctx, corebank.As("ent1"), "", c.ID, payments.CounterpartyPatch{Profile: &payments.ProfilePatch{
			Email: strp("nope"), Address: &payments.AddressPatch{Line1: strp("")}}})
		wantFields(t, err, "profile.email", "profile.address.line1")
		got, _ := e.svc.GetCounterparty(ctx, corebank.As("ent1"), "", c.ID)
		if got.Profile.Email != "ada@example.com" {
			t.Errorf("failed patch was applied: %+v", got.Profile)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.svc.UpdateCounterparty(ctx, corebank.As("ent2"), "", c.ID, payments.CounterpartyPatch{})
		if !errors.Is(err, payments.ErrCounterpartyNotFound) {
			t.Fatal(err)
		}
	})
}

func TestDeactivateAndListCounterparties(t *testing.T) {
	e := newMemEnv(t)
	var ids []string
	for i := 0; i < 5; i++ {
		c, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Ada", "Lovelace", string(rune('a'+i))+"@example.com"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	b, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), business("Acme Ltd", "ap@acme.example"))
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, b.ID)
	d, err := e.svc.DeactivateCounterparty(ctx, corebank.As("ent1"), "", ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != "inactive" || d.Deleted == 0 {
		t.Fatalf("%+v", d)
	}
	list := func(f payments.CounterpartyFilter, o corebank.ListOptions) *corebank.Page[payments.Counterparty] {
		t.Helper()
		p, err := e.svc.ListCounterparties(ctx, corebank.As("ent1"), f, o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	idsOf := func(p *corebank.Page[payments.Counterparty]) []string {
		var out []string
		for _, c := range p.Items {
			out = append(out, c.ID)
		}
		return out
	}
	p1 := list(payments.CounterpartyFilter{}, corebank.ListOptions{Limit: 4})
	if diff := cmp.Diff(ids[:4], idsOf(p1)); diff != "" || !p1.HasNext || p1.Next != ids[3] || p1.HasPrevious {
		t.Fatalf("page 1 %v %+v", diff, p1)
	}
	p2 := list(payments.CounterpartyFilter{}, corebank.ListOptions{Limit: 4, After: p1.Next})
	if diff := cmp.Diff(ids[4:], idsOf(p2)); diff != "" || p2.HasNext || !p2.HasPrevious {
		t.Fatalf("page 2 %v %+v", diff, p2)
	}
	back := list(payments.CounterpartyFilter{}, corebank.ListOptions{Limit: 2, Before: p2.Previous})
	if diff := cmp.Diff(ids[2:4], idsOf(back)); diff != "" || !back.HasNext || !back.HasPrevious {
		t.Fatalf("back %v %+v", diff, back)
	}
	if got := idsOf(list(payments.CounterpartyFilter{Status: "inactive"}, corebank.ListOptions{})); !cmp.Equal(got, []string{ids[1]}) {
		t.Errorf("inactive %v", got)
	}
	if got := idsOf(list(payments.CounterpartyFilter{Type: "business", Status: "active"}, corebank.ListOptions{})); !cmp.Equal(got, []string{b.ID}) {
		t.Errorf("business %v", got)
	}
	if got := list(payments.CounterpartyFilter{Type: "individual", Status: "active"}, corebank.ListOptions{}); len(got.Items) != 4 {
		t.Errorf("individual active %v", idsOf(got))
	}
	_, err = e.svc.ListCounterparties(ctx, corebank.As("ent1"), payments.CounterpartyFilter{Type: "x", Status: "y"}, corebank.ListOptions{})
	wantFields(t, err, "type", "status")
	_, err = e.svc.ListCounterparties(ctx, corebank.As("ent1"), payments.CounterpartyFilter{}, corebank.ListOptions{After: "bad"})
	wantFields(t, err, "cursor")
	_, err = e.svc.ListCounterparties(ctx, corebank.As("ent1"), payments.CounterpartyFilter{}, corebank.ListOptions{Limit: 101})
	wantFields(t, err, "limit")
	if got := list(payments.CounterpartyFilter{}, corebank.ListOptions{}); len(got.Items) != 6 {
		t.Errorf("all %d", len(got.Items))
	}
	if p, _ := e.svc.ListCounterparties(ctx, corebank.As("ent2"), payments.CounterpartyFilter{}, corebank.ListOptions{}); len(p.Items) != 0 {
		t.Errorf("other entity sees %d", len(p.Items))
	}
}
