package main_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNodeSuite runs the JavaScript suite of examples/node (node --test:
// twenty payouts, each in a sandbox workspace of its own, with a webhook
// receiver of its own) against the server binary started with -workspaces,
// twice: the twenty tests in parallel, then one after another, and logs
// how long each run took. Without node on PATH it skips with one line,
// unless COREBANK_REQUIRE_TOOLS is set.
//
// It does not run in parallel with the package's other tests, so that the
// two wall times it logs compare the suite with itself alone.
func TestNodeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the examples/node suite against the server binary; run without -short")
	}
	if tool := missingTool(t, "node"); tool != "" {
		t.Skip("the examples/node suite needs Node.js 20 or newer (apt-get install nodejs): node not found")
	}
	dir := t.TempDir()
	// The server delivers webhooks over https only: the suite's receivers
	// serve a certificate for 127.0.0.1 that the server trusts through
	// -webhook-ca.
	certFile, keyFile := writeLoopbackCert(t, dir)
	p := startServer(t, buildServer(t), "-memory", "-workspaces", "-webhook-ca", certFile,
		"-bootstrap-out", filepath.Join(dir, "bootstrap.json"))

	run := func(concurrency string) time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", "--test", "--test-reporter=tap")
		cmd.Dir = filepath.Join("..", "node")
		cmd.Env = append(os.Environ(),
			"COREBANK_URL=http://"+p.addr,
			"COREBANK_CONCURRENCY="+concurrency,
			"COREBANK_WEBHOOK_CERT="+certFile,
			"COREBANK_WEBHOOK_KEY="+keyFile,
		)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		// node --test passes when it finds no test file: count them too.
		if err != nil || !strings.Contains(out.String(), "\n# pass 20\n") {
			t.Fatalf("node --test with COREBANK_CONCURRENCY=%s: %v\n%s\nserver log:\n%s", concurrency, err, out.String(), tail(p.logs.String(), 40))
		}
		return took
	}
	parallel := run("20")
	serial := run("1")
	t.Logf("20 tests in parallel: %s; one after another: %s", parallel.Round(10*time.Millisecond), serial.Round(10*time.Millisecond))
}

// writeLoopbackCert writes a self-signed certificate for 127.0.0.1, valid
// for a day, and its key to dir as PEM files, and returns their paths.
func writeLoopbackCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "webhook-cert.pem"), filepath.Join(dir, "webhook-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
