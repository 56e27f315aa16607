package httpapi

import (
	"strings"
	"testing"
)

// TestOpenPrefixesHoldNothingElse: an open pattern with a wildcard opens
// every path under the prefix before its first wildcard (routes.go, open),
// so no route that needs a key may live under it.
func TestOpenPrefixesHoldNothingElse(t *testing.T) {
	var prefixes []string
	for p := range open {
		_, path, _ := strings.Cut(p, " ")
		if prefix, _, wild := strings.Cut(path, "{"); wild {
			prefixes = append(prefixes, prefix)
		}
	}
	if len(prefixes) == 0 {
		t.Fatal("no open pattern has a wildcard")
	}
	for _, rt := range routes {
		_, path, _ := strings.Cut(rt.pattern, " ")
		for _, prefix := range prefixes {
			if strings.HasPrefix(path, prefix) && !open[rt.pattern] {
				t.Errorf("%s needs a key but lives under the open prefix %s", rt.pattern, prefix)
			}
		}
	}
}
