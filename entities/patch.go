package entities

import (
	"reflect"
	"strings"
)

// Updates are one mechanism for every part an update touches (person,
// address, sole trader, business): the stored part is turned into its
// input form, applyPatch copies the fields the patch gives onto it, the
// result is validated as a create would be, and changedFields names what
// differs. A patch type declares the input's fields, by JSON name, as
// pointers (or maps), so adding a field to both is all an update needs.

// applyPatch copies onto *dst (an input struct) every field of patch (the
// matching patch struct) that is not nil, matched by JSON name: a *T field
// sets a T, a field of dst's own type (a map, a pointer) replaces it.
func applyPatch[In, Patch any](dst *In, patch *Patch) {
	if patch == nil {
		return
	}
	d := reflect.ValueOf(dst).Elem()
	p := reflect.ValueOf(patch).Elem()
	for i := 0; i < p.NumField(); i++ {
		pv := p.Field(i)
		if pv.IsNil() {
			continue
		}
		dv := d.FieldByIndex(fieldByJSON(d.Type(), jsonName(p.Type().Field(i))).Index)
		if pv.Type() == dv.Type() {
			dv.Set(pv)
		} else {
			dv.Set(pv.Elem())
		}
	}
}

// changedFields returns the JSON names of the fields of old and next that
// differ, in declaration order. A nil and an empty map or slice are the
// same (a stored part without meta against a patch that gives none).
func changedFields[T any](old, next T) []string {
	a, b := reflect.ValueOf(old), reflect.ValueOf(next)
	var out []string
	for i := 0; i < a.NumField(); i++ {
		x, y := a.Field(i), b.Field(i)
		switch x.Kind() {
		case reflect.Map, reflect.Slice:
			if x.Len() == 0 && y.Len() == 0 {
				continue
			}
		}
		if !reflect.DeepEqual(x.Interface(), y.Interface()) {
			out = append(out, jsonName(a.Type().Field(i)))
		}
	}
	return out
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// fieldByJSON returns t's field named name in JSON; a patch field without
// a counterpart is a programming error caught by the tests.
func fieldByJSON(t reflect.Type, name string) reflect.StructField {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); jsonName(f) == name {
			return f
		}
	}
	panic("entities: " + t.Name() + " has no field " + name)
}
