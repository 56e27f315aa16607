package client

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// encodeParams turns a generated Params struct (or a form body) into its
// query (fields tagged form:"name") and headers (the others, named by
// their json tag, as oapi-codegen generates them). Nil pointers are left
// out.
func encodeParams(p any) (url.Values, http.Header, error) {
	query, header := url.Values{}, http.Header{}
	v := reflect.ValueOf(p)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return query, header, nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return query, header, nil
	}
	if v.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("parameters of type %T", p)
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("form"), ",")
		inQuery := name != ""
		if !inQuery {
			name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
		}
		if name == "" || name == "-" {
			continue
		}
		values, err := strs(v.Field(i))
		if err != nil {
			return nil, nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		for _, s := range values {
			if inQuery {
				query.Add(name, s)
			} else {
				header.Add(name, s)
			}
		}
	}
	return query, header, nil
}

// strs renders one parameter's value: nothing for a nil pointer, one
// string for a scalar, one per element of a slice (the query's
// form, explode=true).
func strs(v reflect.Value) ([]string, error) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return []string{v.String()}, nil
	case reflect.Bool:
		return []string{strconv.FormatBool(v.Bool())}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []string{strconv.FormatInt(v.Int(), 10)}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{strconv.FormatUint(v.Uint(), 10)}, nil
	case reflect.Float32, reflect.Float64:
		return []string{strconv.FormatFloat(v.Float(), 'f', -1, 64)}, nil
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			s, err := strs(v.Index(i))
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported type %s", v.Type())
}

// Ptr returns a pointer to v, for the optional fields of bodies and
// parameters: client.Ptr("US"), client.Ptr(50).
func Ptr[T any](v T) *T { return &v }

// Date is a calendar date (format: date in the document), as the
// generated types hold it: client.Date{Time: time.Date(1990, 4, 1, 0, 0,
// 0, 0, time.UTC)}.
type Date = openapi_types.Date
