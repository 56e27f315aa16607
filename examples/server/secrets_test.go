package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNoSecretAtRest runs the binary on a bolt file, creates API keys (with
// and without Idempotency-Key), webhooks (their secrets, also rotated) and
// entities with identity and document numbers, stops the server, and then
// looks for every secret in every file the store left in its folder (the
// bolt file and its write-ahead logs) and in the server's log output: in
// clear, in standard and URL Base64 (padded or not, at each of the three
// byte alignments a secret can have inside a longer encoded value) and in
// lower and upper case hex. The secret key and the bootstrap file live in
// another folder, as production requires.
func TestNoSecretAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	// The receiver keeps what the webhooks deliver: event payloads must not
	// carry secrets either.
	var delivered syncWriter
	recv := httptest.NewTLSServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		io.Copy(&delivered, r.Body)
	}))
	defer recv.Close()
	dataDir, keyDir := t.TempDir(), t.TempDir()
	caPath := filepath.Join(keyDir, "ca.pem")
	if err := os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	bootPath := filepath.Join(keyDir, "bootstrap.json")
	p := startServer(t, buildServer(t), "-db", filepath.Join(dataDir, "corebank.db"),
		"-secret-key-file", filepath.Join(keyDir, "corebank.key"), "-bootstrap-out", bootPath, "-webhook-ca", caPath)
	var boot struct {
		APIKey   string `json:"api_key"`
		ReadOnly string `json:"read_only_api_key"`
	}
	raw, err := os.ReadFile(bootPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &boot); err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, base: "http://" + p.addr, key: boot.APIKey}
	secrets := map[string]string{"bootstrap api_key": boot.APIKey, "bootstrap read_only_api_key": boot.ReadOnly}

	// API keys, each created with and without an Idempotency-Key; the keyed
	// ones are asked again and must replay byte for byte.
	for i, body := range []map[string]any{{}, {"read_only": true}} {
		secrets[fmt.Sprintf("api_key %d", i)] = c.must(201, "POST", "/sandbox/api-keys", "", body).field("api_key")
		idem := fmt.Sprintf("key-%d", i)
		first := c.must(201, "POST", "/sandbox/api-keys", idem, body)
		secrets[fmt.Sprintf("api_key %d (idempotent)", i)] = first.field("api_key")
		first.replayedBy(c.must(201, "POST", "/sandbox/api-keys", idem, body))
	}

	// Webhooks: created with and without a key, then a secret rotated.
	hook := map[string]any{"url": recv.URL + "/hooks", "expires_in": 86400,
		"enabled_events": map[string]any{"all": true}}
	plain := c.must(201, "POST", "/entity-webhooks", "", hook)
	secrets["webhook secret"] = plain.data("secret")
	first := c.must(201, "POST", "/entity-webhooks", "hook-1", hook)
	secrets["webhook secret (idempotent)"] = first.data("secret")
	first.replayedBy(c.must(201, "POST", "/entity-webhooks", "hook-1", hook))
	rotated := c.must(200, "POST", "/entity-webhooks/"+plain.data("id")+"/rotate_secret", "rotate-1", nil)
	secrets["rotated webhook secret"] = rotated.data("secret")
	rotated.replayedBy(c.must(200, "POST", "/entity-webhooks/"+plain.data("id")+"/rotate_secret", "rotate-1", nil))

	// Entities with identity and document numbers, with and without a key.
	for i, idem := range []string{"", "entity-1"} {
		n := fmt.Sprintf("%d", 4+i)
		bvn, nin, passport := "2"+n+"781234560", "3"+n+"650987123", "A"+n+"7Q93X51"
		ssn, licence := "7"+n+"2318465", "D"+n+"40-8812-7731"
		c.must(201, "POST", "/individual-entities", idem, individualEntity(bvn, nin, passport))
		if idem != "" {
			idem += "-business"
		}
		c.must(201, "POST", "/business-entities", idem, businessEntity(ssn, licence))
		for kind, v := range map[string]string{"bvn": bvn, "nin": nin, "passport number": passport, "ssn": ssn, "licence number": licence} {
			secrets[kind+" "+n] = v
		}
	}

	// Four entities were created after the webhooks: wait for their events
	// to reach the receiver (once per webhook) before stopping.
	for deadline := time.Now().Add(20 * time.Second); strings.Count(delivered.String(), `"entities.created"`) < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("entity events not delivered: %.500s", delivered.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
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

	files := map[string][]byte{"server log": []byte(p.logs.String()), "webhook deliveries": []byte(delivered.String())}
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
	for _, want := range []string{"corebank.db", "corebank.db-wal.0"} {
		if len(files[want]) == 0 {
			t.Fatalf("%s missing or empty in the store's folder (found %d files): the scan would prove nothing", want, len(entries))
		}
	}
	for kind, secret := range secrets {
		if len(secret) < 9 {
			t.Fatalf("%s: %q is too short to be a secret worth scanning for", kind, secret)
		}
		for _, f := range secretForms(secret) {
			for name, b := range files {
				if i := bytes.Index(b, []byte(f.text)); i >= 0 {
					t.Errorf("%s found in %s at byte %d as %s", kind, name, i, f.name)
				}
			}
		}
	}
}

// form is one encoding of a secret to look for.
type form struct{ name, text string }

// secretForms returns the forms in which s could sit readable in a file:
// s itself, its hex in both cases, and its standard and URL Base64 with and
// without padding. A secret inside a longer encoded value starts at one of
// three byte alignments, and the characters it shares with its neighbours
// differ; so for each offset o in 0..2 the whole 3-byte groups of s[o:] are
// encoded on their own, which is the text every such value contains.
func secretForms(s string) []form {
	out := []form{
		{"plaintext", s},
		{"hex", hex.EncodeToString([]byte(s))},
		{"HEX", strings.ToUpper(hex.EncodeToString([]byte(s)))},
	}
	encs := []struct {
		name string
		enc  *base64.Encoding
	}{
		{"base64", base64.StdEncoding}, {"base64 unpadded", base64.RawStdEncoding},
		{"base64url", base64.URLEncoding}, {"base64url unpadded", base64.RawURLEncoding},
	}
	for _, e := range encs {
		out = append(out, form{e.name, e.enc.EncodeToString([]byte(s))})
		for o := 0; o < 3; o++ {
			groups := (len(s) - o) / 3 * 3
			out = append(out, form{fmt.Sprintf("%s at alignment %d", e.name, o), e.enc.EncodeToString([]byte(s[o : o+groups]))})
		}
	}
	return out
}

// TestSecretFormsAlignments checks the scan itself: a secret embedded at
// any offset of an encoded value is found by one of its forms.
func TestSecretFormsAlignments(t *testing.T) {
	secret := "sk_sandbox_Zx81mQp0"
	for pad := 0; pad < 3; pad++ {
		noise := make([]byte, 7+pad)
		rand.Read(noise)
		value := append(append(noise, secret...), noise...)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			text := enc.EncodeToString(value)
			found := false
			for _, f := range secretForms(secret) {
				found = found || strings.Contains(text, f.text)
			}
			if !found {
				t.Errorf("secret at byte %d of a Base64 value not found", len(noise))
			}
		}
		text := hex.EncodeToString(value)
		if !strings.Contains(text, secretForms(secret)[1].text) || !strings.Contains(strings.ToUpper(text), secretForms(secret)[2].text) {
			t.Errorf("secret at byte %d of a hex value not found", len(noise))
		}
	}
}

// individualEntity is a POST /individual-entities body for a Nigerian with
// the given BVN, NIN and passport number.
func individualEntity(bvn, nin, passport string) map[string]any {
	return map[string]any{
		"name": "Ada Obi",
		"person": map[string]any{"first_name": "Ada", "last_name": "Obi", "date_of_birth": "1990-04-01",
			"email": "ada@example.com", "nationality": "NG", "gender": "f", "phonenumber": "+2348012345678",
			"bvn": bvn, "nin": nin},
		"address": map[string]any{"line_1": "1 Marina", "city": "Lagos", "state": "Lagos",
			"postal_code": "101001", "country_code": "NG"},
		"identification": map[string]any{
			"document": map[string]any{"type": "international_passport", "number": passport,
				"issue_date": "2020-01-02", "expiry_date": "2030-01-01", "issuing_country": "NG"},
			"proof_of_address": map[string]any{"type": "utility_bill"},
		},
	}
}

// businessEntity is a POST /business-entities body whose officer, a US
// national, has the given SSN and driving licence number.
func businessEntity(ssn, licence string) map[string]any {
	return map[string]any{
		"name": "Acme",
		"business": map[string]any{"legal_name": "Acme LLC", "type": "llc", "email": "ops@acme.example",
			"registration_number": "RC123456", "industry": "software",
			"incorporation_meta": map[string]any{"year": 2019, "month": 5, "country": "US", "state": "DE"}},
		"address": map[string]any{"line_1": "1 Main St", "city": "Dover", "state": "DE",
			"postal_code": "19901", "country_code": "US"},
		"business_officers": []any{map[string]any{"job_title": "CEO", "is_control_person": true,
			"is_beneficial_owner": true, "ownership_percentage": 60,
			"person": map[string]any{"first_name": "Sam", "last_name": "Lee", "date_of_birth": "1980-07-15",
				"email": "sam@example.com", "nationality": "US", "gender": "m", "phonenumber": "+12025550143",
				"ssn": ssn,
				"identification": map[string]any{"document": map[string]any{"type": "drivers_license",
					"number": licence, "issuing_country": "US"}}}}},
	}
}

// rawClient sends requests and keeps the raw answers, so that a replay can
// be compared with the original byte for byte.
type rawClient struct {
	t         *testing.T
	base, key string
}

type rawResp struct {
	t        *testing.T
	status   int
	replayed bool
	raw      []byte
	body     map[string]any
}

// must sends body (nil for none) with idem as Idempotency-Key when not
// empty, and fails the test unless the answer has status.
func (c *rawClient) must(status int, method, path, idem string, body any) *rawResp {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := &rawResp{t: c.t, status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if r.raw, err = io.ReadAll(resp.Body); err != nil {
		c.t.Fatal(err)
	}
	if r.status != status {
		c.t.Fatalf("%s %s = %d, want %d: %.300s", method, path, r.status, status, r.raw)
	}
	if err := json.Unmarshal(r.raw, &r.body); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// field is a top-level string field of the answer.
func (r *rawResp) field(name string) string {
	r.t.Helper()
	s, _ := r.body[name].(string)
	if s == "" {
		r.t.Fatalf("no %s in %.300s", name, r.raw)
	}
	return s
}

// data is a string field of the answer's data.
func (r *rawResp) data(name string) string {
	r.t.Helper()
	d, _ := r.body["data"].(map[string]any)
	s, _ := d[name].(string)
	if s == "" {
		r.t.Fatalf("no data.%s in %.300s", name, r.raw)
	}
	return s
}

// replayedBy checks that again is a replay of r, byte for byte.
func (r *rawResp) replayedBy(again *rawResp) {
	r.t.Helper()
	if !again.replayed || again.status != r.status || !bytes.Equal(again.raw, r.raw) {
		r.t.Errorf("replay differs from the original (replayed header %v):\n%s\nwant\n%s", again.replayed, again.raw, r.raw)
	}
}

// TestProductionKeyPlace runs the binary in production over a bolt file:
// it refuses to start while the secret key would come from the store's
// folder (the default <db>.key, or a -secret-key-file beside the store)
// and says where the key must come from; it starts with -secret-key-file
// in another folder or with COREBANK_SECRET_KEY.
func TestProductionKeyPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := buildServer(t)
	envKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	for _, tc := range []struct {
		name    string
		keyFile string // "" for the default; "data/" or "keys/" prefix a folder
		env     string // COREBANK_SECRET_KEY
		starts  bool
	}{
		{name: "ErrDefaultKeyFile"},
		{name: "ErrKeyFileBesideStore", keyFile: "data/other.key"},
		{name: "OKKeyFileElsewhere", keyFile: "keys/corebank.key", starts: true},
		{name: "OKEnvironment", env: envKey, starts: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("COREBANK_SECRET_KEY", tc.env)
			dirs := map[string]string{"data/": t.TempDir(), "keys/": t.TempDir()}
			args := []string{"-env", "production", "-db", filepath.Join(dirs["data/"], "corebank.db")}
			if tc.keyFile != "" {
				args = append(args, "-secret-key-file", filepath.Join(dirs[tc.keyFile[:5]], tc.keyFile[5:]))
			}
			if tc.starts {
				p := startServer(t, bin, args...)
				p.cmd.Process.Signal(syscall.SIGTERM)
				if err := <-p.done; err != nil {
					t.Fatalf("server did not stop cleanly: %v\n%s", err, p.logs)
				}
				if tc.env != "" {
					if _, err := os.Stat(filepath.Join(dirs["data/"], "corebank.db.key")); err == nil {
						t.Fatal("a key file was written beside the store although COREBANK_SECRET_KEY is set")
					}
				}
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...).CombinedOutput()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
				t.Fatalf("server = %v, want exit status 1: %s", err, out)
			}
			for _, want := range []string{"-env production", "COREBANK_SECRET_KEY", "-secret-key-file", "another folder"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("error message lacks %q: %s", want, out)
				}
			}
			if entries, _ := os.ReadDir(dirs["data/"]); len(entries) != 0 {
				t.Errorf("the refused start left %d files in the store's folder", len(entries))
			}
		})
	}
}
