package main_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testCA is a certificate authority a test makes for itself.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
	pool *x509.CertPool
}

// newTestCA makes a CA valid for an hour.
func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1000),
		Subject:               pkix.Name{CommonName: "corebank test CA"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool,
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a server certificate for 127.0.0.1 and localhost with the
// given serial number and common name; it returns the certificate and
// key PEM.
func (ca *testCA) issue(t *testing.T, serial int64, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}

// writeFile writes data to path (mode 0600) in place, as an operator
// copying a renewed certificate over the old one does.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tlsFiles writes a CA and a first certificate (serial 1, CN
// corebank-one) to dir and returns the CA and the three paths.
func tlsFiles(t *testing.T, dir string) (ca *testCA, caPath, certPath, keyPath string) {
	t.Helper()
	ca = newTestCA(t)
	caPath = filepath.Join(dir, "ca.pem")
	certPath = filepath.Join(dir, "tls.crt")
	keyPath = filepath.Join(dir, "tls.key")
	certPEM, keyPEM := ca.issue(t, 1, "corebank-one")
	writeFile(t, caPath, ca.pem)
	writeFile(t, certPath, certPEM)
	writeFile(t, keyPath, keyPEM)
	return ca, caPath, certPath, keyPath
}

// loopbackURL is https://127.0.0.1:PORT for the address a server printed
// (which may be 0.0.0.0:PORT or [::]:PORT).
func loopbackURL(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return "https://" + net.JoinHostPort("127.0.0.1", port)
}

// tlsClient is an HTTP client that trusts pool only and keeps its
// connections alive.
func tlsClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		MaxIdleConns:    4, IdleConnTimeout: time.Minute,
	}}
}

// servedSerial makes a new TLS connection to addr and returns the serial
// number and common name of the certificate the server presents.
func servedSerial(t *testing.T, addr string, pool *x509.CertPool) (int64, string) {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", addr, err)
	}
	defer conn.Close()
	leaf := conn.ConnectionState().PeerCertificates[0]
	return leaf.SerialNumber.Int64(), leaf.Subject.CommonName
}

// getHealthz GETs /healthz with c and returns the serial of the
// certificate of the connection that answered.
func getHealthz(t *testing.T, c *http.Client, base string) int64 {
	t.Helper()
	resp, err := c.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz over TLS: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("GET /healthz = %d (TLS %v): %s", resp.StatusCode, resp.TLS != nil, body)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
}

// eventually calls cond every 100ms until it is true or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// TestTLS starts the server with -tls-cert and -tls-key and calls it with
// curl (--cacert, the test's own CA) and with Go's client, which also
// checks the version floor: TLS 1.2 and up.
func TestTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	dir := t.TempDir()
	ca, caPath, certPath, keyPath := tlsFiles(t, dir)
	boot := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, bin, "-memory", "-tls-cert", certPath, "-tls-key", keyPath, "-bootstrap-out", boot)
	base := loopbackURL(t, p.addr)

	t.Run("Curl", func(t *testing.T) {
		if tool := missingTool(t, "curl"); tool != "" {
			t.Skip("needs curl (apt-get install curl): not found")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "curl", "-sS", "--fail", "--max-time", "10", "--cacert", caPath, base+"/healthz").CombinedOutput()
		if err != nil {
			t.Fatalf("curl --cacert %s %s/healthz: %v\n%s", caPath, base, err, out)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("curl body %q: %v", out, err)
		}
		if diff := cmp.Diff(map[string]any{"status": "ok"}, got); diff != "" {
			t.Errorf("/healthz over curl (-want +got):\n%s", diff)
		}
		// Without the CA, curl must refuse the certificate.
		if out, err := exec.CommandContext(ctx, "curl", "-sS", "--fail", "--max-time", "10", base+"/healthz").CombinedOutput(); err == nil {
			t.Errorf("curl trusted the test's certificate without --cacert: %s", out)
		}
	})

	t.Run("GoClient", func(t *testing.T) {
		raw, err := os.ReadFile(boot)
		if err != nil {
			t.Fatal(err)
		}
		var keys struct {
			APIKey string `json:"api_key"`
		}
		if err := json.Unmarshal(raw, &keys); err != nil {
			t.Fatal(err)
		}
		c := &client{base: base, key: keys.APIKey, http: tlsClient(ca.pool)}
		status, body, err := c.do("POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "over TLS"})
		if err != nil || status != http.StatusCreated {
			t.Fatalf("POST /accounts over TLS = %d %v %v", status, body, err)
		}
		// The hosted checkout page is on this server, so its URL is https.
		status, body, err = c.do("POST", "/funding-sessions", map[string]any{"amount": 500, "currency": "USD",
			"account_id": dataField(body, "id"), "unique_reference": "over-tls", "redirect_url": "https://shop.example/back"})
		if err != nil || status != http.StatusCreated {
			t.Fatalf("POST /funding-sessions over TLS = %d %v %v", status, body, err)
		}
		if u, _ := dataField(body, "checkout_url").(string); !strings.HasPrefix(u, base+"/sandbox/checkout/") {
			t.Errorf("checkout_url %q, want %s/sandbox/checkout/<token>", u, base)
		}
		if serial := getHealthz(t, c.http, base); serial != 1 {
			t.Errorf("served serial %d, want 1", serial)
		}
	})

	t.Run("VersionFloor", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			max    uint16
			wantOK bool
		}{{"TLS11", tls.VersionTLS11, false}, {"TLS12", tls.VersionTLS12, true}, {"TLS13", tls.VersionTLS13, true}} {
			conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: ca.pool, MaxVersion: tc.max})
			if err == nil {
				conn.Close()
			}
			if (err == nil) != tc.wantOK {
				t.Errorf("%s handshake: err %v, want ok %v", tc.name, err, tc.wantOK)
			}
		}
	})

	t.Run("PlainHTTPNotServed", func(t *testing.T) {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + strings.TrimPrefix(base, "https://") + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Fatal("plain HTTP answered 200 on the TLS listener")
			}
		}
	})
	if strings.Contains(p.logs.String(), "PRIVATE KEY") {
		t.Error("the server logged its private key")
	}
}

// TestTLSReload replaces the certificate files with a new certificate
// (another serial and common name) while the server runs, once followed by
// SIGHUP and once alone (the poll finds the change), and checks that a new
// connection gets the new certificate while a keep-alive connection made
// before goes on working, all in one process. Before the SIGHUP, a pair
// that does not match is refused by the reload and the old certificate
// stays.
func TestTLSReload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	for _, tc := range []struct {
		name   string
		sighup bool
		reason string // in the log line of the reload
	}{
		{"SIGHUP", true, "reason=SIGHUP"},
		{"Poll", false, `reason="files changed"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ca, _, certPath, keyPath := tlsFiles(t, dir)
			p := startServer(t, bin, "-memory", "-tls-cert", certPath, "-tls-key", keyPath)
			base := loopbackURL(t, p.addr)
			addr := strings.TrimPrefix(base, "https://")
			pid := p.cmd.Process.Pid

			old := tlsClient(ca.pool)
			if serial := getHealthz(t, old, base); serial != 1 {
				t.Fatalf("first certificate: serial %d, want 1", serial)
			}
			if serial, cn := servedSerial(t, addr, ca.pool); serial != 1 || cn != "corebank-one" {
				t.Fatalf("first certificate: %d %s", serial, cn)
			}

			certPEM, keyPEM := ca.issue(t, 2, "corebank-two")
			if tc.sighup {
				// A certificate without its key: the reload fails, is
				// logged, and the server keeps the pair it has.
				writeFile(t, certPath, certPEM)
				if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
				if !eventually(10*time.Second, func() bool { return strings.Contains(p.logs.String(), "tls certificate reload failed") }) {
					t.Fatalf("a mismatched pair was not reported\n%s", p.logs)
				}
				if serial, _ := servedSerial(t, addr, ca.pool); serial != 1 {
					t.Fatalf("after a failed reload the server serves serial %d, want 1 still", serial)
				}
			}
			writeFile(t, keyPath, keyPEM)
			writeFile(t, certPath, certPEM)
			if tc.sighup {
				if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
			}
			if !eventually(15*time.Second, func() bool {
				return strings.Contains(p.logs.String(), `msg="tls certificate reloaded" `+tc.reason)
			}) {
				t.Fatalf("no reload logged with %s\n%s", tc.reason, p.logs)
			}
			if serial, cn := servedSerial(t, addr, ca.pool); serial != 2 || cn != "corebank-two" {
				t.Errorf("a new connection after the reload got serial %d %q, want 2 corebank-two", serial, cn)
			}
			if serial := getHealthz(t, tlsClient(ca.pool), base); serial != 2 {
				t.Errorf("a new client after the reload got serial %d, want 2", serial)
			}
			// The keep-alive connection from before the reload still
			// answers, on its old certificate.
			if serial := getHealthz(t, old, base); serial != 1 {
				t.Errorf("the keep-alive connection answered with serial %d, want 1 (the connection made before the reload)", serial)
			}
			if p.cmd.ProcessState != nil || p.cmd.Process.Pid != pid {
				t.Fatal("the server restarted")
			}
			if n := strings.Count(p.out.String(), "listening on"); n != 1 {
				t.Errorf("the server announced listening %d times", n)
			}
		})
	}
}

// TestTransportFlags checks the refusals of the TLS and proxy flags, each
// with a message naming the flag or file and nothing written, and that
// -env production on a public address starts with TLS or -behind-proxy.
func TestTransportFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	files := t.TempDir()
	ca, _, certPath, keyPath := tlsFiles(t, files)
	_, otherKey := ca.issue(t, 3, "other")
	otherKeyPath := filepath.Join(files, "other.key")
	writeFile(t, otherKeyPath, otherKey)
	garbage := filepath.Join(files, "garbage.pem")
	writeFile(t, garbage, []byte("not a certificate\n"))
	missing := filepath.Join(files, "missing.pem")

	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args []string
			want []string
		}{
			{"CertWithoutKey", []string{"-tls-cert", certPath}, []string{"-tls-cert and -tls-key go together"}},
			{"KeyWithoutCert", []string{"-tls-key", keyPath}, []string{"-tls-cert and -tls-key go together"}},
			{"CertMissing", []string{"-tls-cert", missing, "-tls-key", keyPath}, []string{"-tls-cert", missing, "no such file"}},
			{"KeyMissing", []string{"-tls-cert", certPath, "-tls-key", missing}, []string{"-tls-key", missing, "no such file"}},
			{"CertIsAFolder", []string{"-tls-cert", files, "-tls-key", keyPath}, []string{"-tls-cert", files}},
			{"NotAPair", []string{"-tls-cert", certPath, "-tls-key", otherKeyPath}, []string{"-tls-cert " + certPath, "-tls-key " + otherKeyPath, "does not match"}},
			{"NotPEM", []string{"-tls-cert", garbage, "-tls-key", keyPath}, []string{"-tls-cert " + garbage}},
			{"ProductionPublicPlain", []string{"-env", "production", "-addr", "0.0.0.0:0"},
				[]string{"-env production", "-addr 0.0.0.0:0", "not a loopback address", "-tls-cert", "-behind-proxy"}},
			{"ProductionAllInterfacesPlain", []string{"-env", "production", "-addr", ":0"}, []string{"-addr :0", "not a loopback address"}},
			{"ProductionIPv6Plain", []string{"-env", "production", "-addr", "[::]:0"}, []string{"-addr [::]:0", "not a loopback address"}},
			{"TrustedProxiesAlone", []string{"-trusted-proxies", "10.0.0.0/8"}, []string{"-trusted-proxies needs -behind-proxy"}},
			{"TrustedProxiesBad", []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/8,nonsense"}, []string{"-trusted-proxies", `"nonsense"`}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				args := append([]string{"-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "corebank.db")}, tc.args...)
				out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
				if err == nil {
					t.Fatalf("started with %v:\n%s", tc.args, out)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(out), w) {
						t.Errorf("message lacks %q:\n%s", w, out)
					}
				}
				if strings.Contains(string(out), "listening on") {
					t.Errorf("it listened before refusing:\n%s", out)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("a refused start wrote %v", entries)
				}
			})
		}
	})

	t.Run("ProductionStarts", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			args   []string
			scheme string
		}{
			{"BehindProxy", []string{"-behind-proxy"}, "http"},
			{"TLS", []string{"-tls-cert", certPath, "-tls-key", keyPath}, "https"},
			{"Loopback", []string{"-addr", "127.0.0.1:0"}, "http"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				args := append([]string{"-memory", "-env", "production", "-addr", "0.0.0.0:0"}, tc.args...)
				p := startServer(t, bin, args...)
				_, port, _ := net.SplitHostPort(p.addr)
				url := fmt.Sprintf("%s://127.0.0.1:%s/healthz", tc.scheme, port)
				resp, err := tlsClient(ca.pool).Get(url)
				if err != nil {
					t.Fatalf("GET %s: %v", url, err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s = %d", url, resp.StatusCode)
				}
			})
		}
	})
}

// TestForwardedFor checks whose address the request log line names: the
// X-Forwarded-For client when the peer is a trusted proxy, the peer when
// it is not, or when the server is not told it is behind a proxy.
func TestForwardedFor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	for _, tc := range []struct {
		name string
		args []string
		xff  string
		want string
	}{
		{"TrustedPeer", []string{"-behind-proxy"}, "198.51.100.7", "198.51.100.7"},
		{"TrustedPeerRightmostUntrusted", []string{"-behind-proxy"}, "6.6.6.6, 198.51.100.7", "198.51.100.7"},
		{"TrustedPeerChain", []string{"-behind-proxy", "-trusted-proxies", "127.0.0.1,10.0.0.0/8"}, "198.51.100.7, 10.2.3.4", "198.51.100.7"},
		{"UntrustedPeer", []string{"-behind-proxy", "-trusted-proxies", "10.0.0.0/8"}, "198.51.100.7", "127.0.0.1"},
		{"NotBehindProxy", nil, "198.51.100.7", "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startServer(t, bin, append([]string{"-memory"}, tc.args...)...)
			reqID := "xff-" + strings.ToLower(tc.name)
			req, err := http.NewRequest("GET", "http://"+p.addr+"/healthz", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Forwarded-For", tc.xff)
			req.Header.Set("X-Request-Id", reqID)
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var line string
			if !eventually(5*time.Second, func() bool {
				for _, l := range strings.Split(p.logs.String(), "\n") {
					if strings.Contains(l, "msg=request ") && strings.Contains(l, "request_id="+reqID) {
						line = l
						return true
					}
				}
				return false
			}) {
				t.Fatalf("no request line for %s\n%s", reqID, p.logs)
			}
			if got := logField(line, "client"); got != tc.want {
				t.Errorf("client=%q, want %q in %s", got, tc.want, line)
			}
		})
	}
}

// logField is the value of key in a logfmt line with unquoted values.
func logField(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}
