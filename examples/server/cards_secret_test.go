package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/corebanktest"
)

// TestNoCardDataAtRest confirms card payments with full card numbers and
// CVVs through the server binary on a bolt store (inline and through
// POST /intent-actions, 3ds_disabled and 3ds_required, with and without
// an Idempotency-Key, each keyed request asked again and replayed), then
// stops it and scans the store's folder (the bolt file and its write-ahead
// logs), the server's log and every response for a full card number, in
// each readable form secretForms knows, and for a CVV: the CVV is too
// short to scan a binary file for by itself, so the scan looks for it as
// the JSON value a request carried it in ("cvv", or the digits quoted or
// after a colon), everywhere.
//
// It runs the real flow end to end, so it checks whichever DecryptCard
// the package has: the card branch's, once merged.
func TestNoCardDataAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	p, dataDir, c, pemKey := startBolt(t)
	acct := c.must(201, "POST", "/accounts", "", map[string]any{"type": "checking", "currency": "USD", "display_name": "Shop"}).data("id")

	type card struct{ number, cvv string }
	cards := []card{
		{corebanktest.CardNumber("4242"), "914"},
		{corebanktest.CardNumber("1881"), "580"},
		{corebanktest.CardNumber("0002"), "761"}, // declined
		{"4000 0566 5566 5556", "309"},           // spaces, as people type it
		{"3782 822463 10005", "4817"},            // American Express: a four-digit CVV
	}
	var responses bytes.Buffer
	keep := func(r *rawResp) *rawResp { responses.Write(r.raw); responses.WriteByte('\n'); return r }
	for i, cd := range cards {
		for _, auth := range []string{acquiring.Auth3DSDisabled, acquiring.Auth3DSRequired} {
			data := corebanktest.EncryptCard(t, pemKey, cd.number, 11, 2031, cd.cvv)
			action := corebanktest.CardAction(data, auth, "https://shop.example/back")
			idem := fmt.Sprintf("card-%d-%s", i, auth)
			body := map[string]any{"currency": "USD", "amount": 1500, "account_id": acct,
				"reference": idem, "intent_action": action}
			first := keep(c.must(201, "POST", "/payment-intents", idem, body))
			first.replayedBy(keep(c.must(201, "POST", "/payment-intents", idem, body)))
			// The same card again, through POST /intent-actions, unkeyed.
			in := keep(c.must(201, "POST", "/payment-intents", "", map[string]any{"currency": "USD", "amount": 700,
				"account_id": acct, "reference": idem + "-later"})).data("id")
			a := keep(c.must(201, "POST", "/intent-actions", "", map[string]any{"payment_intent_id": in, "intent_action": action}))
			id := a.data("id")
			outcome := a.data("status")
			if outcome != acquiring.ActionFailed {
				outcome = acquiring.ActionCompleted
			}
			keep(c.must(200, "POST", "/sandbox/intent-actions/"+id+"/simulate", "", map[string]any{"outcome": outcome}))
			keep(c.must(200, "POST", "/intent-verifications/"+id, "", nil))
			keep(c.must(200, "GET", "/payment-intents/"+in, "", nil))
		}
	}
	keep(c.must(200, "GET", "/payment-intents?limit=100", "", nil))
	keep(c.must(200, "GET", "/intent-actions?limit=100", "", nil))
	keep(c.must(200, "GET", "/events?limit=100", "", nil))

	files := stopAndRead(t, p, dataDir, map[string][]byte{"responses": responses.Bytes()})
	for _, cd := range cards {
		scanCard(t, files, strings.ReplaceAll(cd.number, " ", ""), cd.cvv)
		scanCard(t, files, cd.number, cd.cvv)
	}
}

// startBolt runs the server binary over a bolt store in a temporary
// folder, its secret key and bootstrap file in another, and returns it,
// the store's folder, a client with the root's full-access key and the
// key's card encryption public key (PEM).
func startBolt(t *testing.T) (*proc, string, *rawClient, string) {
	t.Helper()
	dataDir, keyDir := t.TempDir(), t.TempDir()
	bootPath := filepath.Join(keyDir, "bootstrap.json")
	p := startServer(t, buildServer(t), "-db", filepath.Join(dataDir, "corebank.db"),
		"-secret-key-file", filepath.Join(keyDir, "corebank.key"), "-bootstrap-out", bootPath)
	var boot struct {
		APIKey string `json:"api_key"`
		PEM    string `json:"encryption_public_key"`
	}
	raw, err := os.ReadFile(bootPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &boot); err != nil {
		t.Fatal(err)
	}
	return p, dataDir, &rawClient{t: t, base: "http://" + p.addr, key: boot.APIKey}, boot.PEM
}

// stopAndRead stops the server with SIGTERM and returns what is to be
// scanned: extra, the server's log and every file in the store's folder
// (the bolt file, which must not be empty, and its write-ahead logs).
func stopAndRead(t *testing.T, p *proc, dataDir string, extra map[string][]byte) map[string][]byte {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("server did not exit cleanly: %v\n%s", err, p.logs)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("server did not stop after SIGTERM\n%s", p.logs)
	}
	files := map[string][]byte{"server log": []byte(p.logs.String())}
	maps.Copy(files, extra)
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dataDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	if len(files["corebank.db"]) == 0 {
		t.Fatal("corebank.db missing or empty: the scan would prove nothing")
	}
	return files
}

// scanCard fails t if number, in any form secretForms knows, or cvv is
// in files: the CVV is too short to scan a binary file for by itself, so
// it is looked for as the JSON value a request carried it in ("cvv", or
// the digits quoted or after a colon).
func scanCard(t *testing.T, files map[string][]byte, number, cvv string) {
	t.Helper()
	for _, f := range secretForms(number) {
		for name, b := range files {
			if i := bytes.Index(b, []byte(f.text)); i >= 0 {
				t.Errorf("card number %s found in %s at byte %d as %s", number, name, i, f.name)
			}
		}
	}
	for name, b := range files {
		for _, loc := range cvvHits(b, cvv) {
			// An idempotency record keeps the HTTP status it answered
			// ("status":200), which a random issued CVV can equal.
			if bytes.HasSuffix(b[:loc[0]], []byte(`"status"`)) {
				continue
			}
			t.Errorf("CVV %s (or a cvv field) found in %s at byte %d: %q", cvv, name, loc[0], b[loc[0]:loc[1]])
			break
		}
	}
}

// cvvPattern is what cvvHits looks for, as a regular expression: the
// plain path, which the test of cvvHits compares it with. Over the store's
// files (megabytes, case-insensitive) it took 8 s of the package's CPU.
func cvvPattern(cvv string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)"cvv"|cvv=|"` + cvv + `"|:` + cvv + `\b`)
}

// cvvHits returns where b holds a cvv field ("cvv", cvv=, in any case) or
// the CVV as a JSON value ("914", or :914 not followed by a word
// character), in order of their start, as cvvPattern's FindAllIndex does
// (which cannot overlap: none of these can).
func cvvHits(b []byte, cvv string) [][]int {
	lower := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	var hits [][]int
	for _, needle := range []string{`"cvv"`, `cvv=`, `"` + cvv + `"`, `:` + cvv} {
		for off := 0; ; {
			i := bytes.Index(lower[off:], []byte(needle))
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(needle)
			off = start + 1
			if needle[0] == ':' && end < len(b) && isWordByte(b[end]) {
				continue
			}
			hits = append(hits, []int{start, end})
		}
	}
	slices.SortFunc(hits, func(x, y []int) int { return x[0] - y[0] })
	return hits
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// TestCvvHits checks cvvHits finds what cvvPattern finds.
func TestCvvHits(t *testing.T) {
	inputs := []string{
		``, `{"cvv":"914"}`, `CVV=914&x`, `{"Cvv": 1}`, `"card":{"code":914}`, `:9140 :914x :914 `, `"status":914,`,
		"\x00\x01\"914\"\xff\xfecvv=\x80:914", `:914`, `"91"4" "914`, `"CVV""cvv"cvv=CVV=`,
	}
	for _, in := range inputs {
		want := cvvPattern("914").FindAllIndex([]byte(in), -1)
		got := cvvHits([]byte(in), "914")
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !slices.EqualFunc(got, want, slices.Equal[[]int]) {
			t.Errorf("%q: cvvHits %v, the pattern %v", in, got, want)
		}
	}
}
