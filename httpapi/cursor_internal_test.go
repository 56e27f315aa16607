package httpapi

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

func TestCursorWalk(t *testing.T) {
	f := newFW(t)
	for _, limit := range []int{1, 7, 20, 53, 100} {
		var seen []string
		path := "/list?limit=" + strconv.Itoa(limit)
		var last map[string]any
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("walk does not end")
			}
			got := f.do(t, "GET", path, "full", nil)
			if got.status != 200 {
				t.Fatalf("%d %s", got.status, got.raw)
			}
			for _, it := range got.body["data"].([]any) {
				seen = append(seen, it.(string))
			}
			last = got.body["meta"].(map[string]any)["pagination"].(map[string]any)
			if last["has_next"] != true {
				if last["next_cursor"] != nil {
					t.Fatalf("next_cursor without has_next: %v", last)
				}
				break
			}
			path = "/list?limit=" + strconv.Itoa(limit) + "&cursor=" + last["next_cursor"].(string)
		}
		if strings.Join(seen, ",") != strings.Join(stubItems, ",") {
			t.Fatalf("limit %d forward walk: %v", limit, seen)
		}
		// And back from the last page.
		var back []string
		pag := last
		for pages := 0; pag["has_previous"] == true; pages++ {
			if pages > 100 {
				t.Fatal("walk does not end")
			}
			got := f.do(t, "GET", "/list?limit="+strconv.Itoa(limit)+"&prev_cursor="+pag["previous_cursor"].(string), "full", nil)
			if got.status != 200 {
				t.Fatalf("%d %s", got.status, got.raw)
			}
			var page []string
			for _, it := range got.body["data"].([]any) {
				page = append(page, it.(string))
			}
			back = append(page, back...)
			pag = got.body["meta"].(map[string]any)["pagination"].(map[string]any)
		}
		lastPageLen := len(stubItems) % limit
		if lastPageLen == 0 {
			lastPageLen = limit
		}
		if want := stubItems[:len(stubItems)-lastPageLen]; strings.Join(back, ",") != strings.Join(want, ",") {
			t.Fatalf("limit %d backward walk:\n got %v\nwant %v", limit, back, want)
		}
	}
}

func TestCursorTamper(t *testing.T) {
	f := newFW(t)
	got := f.do(t, "GET", "/list?limit=5", "full", nil)
	cur := got.body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	for i := 0; i < len(cur); i++ {
		b := []byte(cur)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		got := f.do(t, "GET", "/list?limit=5&cursor="+string(b), "full", nil)
		if got.status == 200 {
			// Changing the last character's unused low bits can decode to
			// the same bytes; only a different byte string must fail.
			if string(b) != cur && !sameBytes(cur, string(b)) {
				t.Fatalf("tampered cursor %q accepted", b)
			}
			continue
		}
		if got.status != 422 || got.detail("cursor") == "" {
			t.Fatalf("tampered cursor: %d %s", got.status, got.raw)
		}
	}
	// A cursor issued under other filters is foreign.
	got = f.do(t, "GET", "/list?limit=5&cursor="+cur+"&prefix=x", "full", nil)
	if got.status != 422 || got.detail("cursor") == "" {
		t.Fatalf("foreign cursor: %d %s", got.status, got.raw)
	}
	// Another key's cursor.
	other := cursors{key: []byte("other key")}
	got = f.do(t, "GET", "/list?cursor="+other.encode("item105", "n", filterHash("stub", map[string]string{})), "full", nil)
	if got.status != 422 {
		t.Fatalf("cursor signed with another key: %d %s", got.status, got.raw)
	}
}

func sameBytes(a, b string) bool {
	x, err1 := decodeB64(a)
	y, err2 := decodeB64(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func decodeB64(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
