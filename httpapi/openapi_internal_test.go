package httpapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOpenAPICoversRoutes fails when a route in the table is missing from
// openapi.json, or the document has an operation no route serves.
func TestOpenAPICoversRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	var inDoc []string
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				inDoc = append(inDoc, strings.ToUpper(method)+" "+path)
			}
		}
	}
	var served []string
	for _, rt := range routes {
		served = append(served, rt.pattern)
	}
	slices.Sort(inDoc)
	slices.Sort(served)
	if diff := cmp.Diff(served, inDoc); diff != "" {
		t.Errorf("routes (-) versus openapi.json operations (+):\n%s", diff)
	}
}
