package entities

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fill sets every field of the struct *p to a non-zero value.
func fill(p any) {
	v := reflect.ValueOf(p).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			switch e := f.Elem(); e.Kind() {
			case reflect.String:
				e.SetString("x")
			case reflect.Bool:
				e.SetBool(true)
			case reflect.Struct:
				e.Field(0).Set(reflect.ValueOf(2015).Convert(e.Field(0).Type()))
			}
		case reflect.Map:
			f.Set(reflect.MakeMapWithSize(f.Type(), 1))
			f.SetMapIndex(reflect.ValueOf("k").Convert(f.Type().Key()), reflect.ValueOf("v").Convert(f.Type().Elem()))
		}
	}
}

// TestPatchMechanism checks that every field of each patch type lands on
// its input type's field of the same JSON name, and that changedFields
// names exactly those fields, so a field added to a patch and its input is
// all an update needs.
func TestPatchMechanism(t *testing.T) {
	names := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v).Elem()
		for i := 0; i < ty.NumField(); i++ {
			out = append(out, jsonName(ty.Field(i)))
		}
		return out
	}
	check := func(t *testing.T, patchFields []string, got []string) {
		t.Helper()
		if diff := cmp.Diff(patchFields, got); diff != "" {
			t.Errorf("changed fields (-patch +got):\n%s", diff)
		}
	}
	t.Run("Person", func(t *testing.T) {
		var p PersonPatch
		fill(&p)
		var in PersonInput
		applyPatch(&in, &p)
		// Input order, which changes_applied reports in.
		check(t, []string{"first_name", "last_name", "middle_name", "date_of_birth", "email", "nationality", "gender", "phonenumber", "is_pep"},
			changedFields(PersonInput{}, in))
	})
	t.Run("Address", func(t *testing.T) {
		var p AddressPatch
		fill(&p)
		var in AddressInput
		applyPatch(&in, &p)
		check(t, names(&p), changedFields(AddressInput{}, in))
	})
	t.Run("SoleTrader", func(t *testing.T) {
		var p SoleTraderPatch
		fill(&p)
		var in SoleTraderInput
		applyPatch(&in, &p)
		check(t, names(&p), changedFields(SoleTraderInput{}, in))
	})
	t.Run("Business", func(t *testing.T) {
		var p BusinessFieldsPatch
		fill(&p)
		var in BusinessInput
		applyPatch(&in, &p)
		check(t, names(&p), changedFields(BusinessInput{}, in))
		if in.IncorporationMeta != p.IncorporationMeta {
			t.Error("incorporation_meta is not replaced whole")
		}
	})
	t.Run("AbsentKeepsValue", func(t *testing.T) {
		in := AddressInput{City: "Lagos", Meta: map[string]string{"a": "b"}}
		city := "Abuja"
		applyPatch(&in, &AddressPatch{City: &city})
		if in.City != "Abuja" || in.Meta["a"] != "b" {
			t.Errorf("patched = %+v", in)
		}
		if got := changedFields(AddressInput{}, AddressInput{Meta: map[string]string{}}); got != nil {
			t.Errorf("nil and empty meta differ: %v", got)
		}
	})
}
