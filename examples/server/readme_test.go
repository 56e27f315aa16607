package main_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmePrelude runs the README's blocks against the binary the tests
// built: "go build -o FILE ./examples/server" copies it to FILE, and the
// server started in the background stops when the script ends.
const readmePrelude = `set -euo pipefail
go() {
  if [ "$1" = build ] && [ "$2" = -o ] && [ "$4" = ./examples/server ]; then cp "$SERVER" "$3"; return; fi
  command go "$@"
}
trap 'kill $(jobs -p) 2>/dev/null || true; wait || true' EXIT
`

// readmeChecks are what a reader sees succeed, asserted.
const readmeChecks = `
for v in "$KEY" "$ACCT" "$CP" "$PD" "$TR"; do
  case "$v" in ""|null) echo "README check: an ID came back empty" >&2; exit 1;; esac
done
[ "$(api /transfers/$TR | jq -r .data.status)" = successful ] || { echo "README check: the transfer is not successful" >&2; exit 1; }
[ "$(api /accounts/$ACCT | jq .data.balance.available)" = 147500 ] || { echo "README check: available is not 150000 - 2500" >&2; exit 1; }
echo README-OK
`

// TestReadmeWalkthrough runs the shell blocks of the README's walk-through
// as written, twice in one folder: on a new store, then on the store the
// first run left. It needs bash, curl and jq; without them it skips with
// one line, unless COREBANK_REQUIRE_TOOLS is set (as .ci/run sets it).
func TestReadmeWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's walk-through against the server binary (about 15 s); run without -short")
	}
	if tool := missingTool(t, "bash", "curl", "jq"); tool != "" {
		t.Skipf("the README walk-through needs bash, curl and jq (apt-get install curl jq): %s not found", tool)
	}
	t.Parallel()
	bin := buildServer(t)
	blocks := readmeShellBlocks(t, "## A walk-through with curl")
	dir := t.TempDir()
	for _, run := range []string{"new store", "existing store"} {
		out, err := runReadmeBlocks(t, bin, dir, blocks, readmeChecks)
		if err != nil || !strings.Contains(out, "README-OK") {
			t.Fatalf("README walk-through on a %s: %v\n%s", run, err, out)
		}
	}
}

// TestReadmeWorkspaces runs the shell blocks of the README's section on
// sandbox workspaces as written, and checks that they print what their
// comments say.
func TestReadmeWorkspaces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's workspace blocks against the server binary; run without -short")
	}
	if tool := missingTool(t, "bash", "curl", "jq"); tool != "" {
		t.Skipf("the README's workspace blocks need bash, curl and jq (apt-get install curl jq): %s not found", tool)
	}
	t.Parallel()
	bin := buildServer(t)
	blocks := readmeShellBlocks(t, "## Using corebank from a test suite in any language")
	out, err := runReadmeBlocks(t, bin, t.TempDir(), blocks, "\necho README-OK\n")
	if err != nil || !strings.Contains(out, "README-OK") {
		t.Fatalf("README workspace blocks: %v\n%s", err, out)
	}
	// What the comments say, in order: the inflow, the clock, the
	// balance, the delete and the key after it.
	want := []string{"pending", "2026-01-05T09:01:00Z", "150000", "204", "401", "README-OK"}
	if got := strings.Fields(out); !slices.Equal(got, want) {
		t.Fatalf("README workspace blocks printed %q, want %q", got, want)
	}
}

// runReadmeBlocks runs README blocks, then checks, in bash in dir, with
// the server at 127.0.0.1:8080 moved to a free port and bin standing for
// the server go build would make; it answers the script's output.
func runReadmeBlocks(t *testing.T, bin, dir, blocks, checks string) (string, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	script := readmePrelude + strings.ReplaceAll(blocks, "127.0.0.1:8080", addr) + checks
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SERVER="+bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// readmeShellBlocks returns the ```sh blocks of the README section that
// starts with heading, joined in order.
func readmeShellBlocks(t *testing.T, heading string) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	var out strings.Builder
	for {
		_, rest, ok := strings.Cut(section, "```sh\n")
		if !ok {
			break
		}
		block, after, ok := strings.Cut(rest, "```")
		if !ok {
			t.Fatal("README.md: a ```sh block is not closed")
		}
		out.WriteString(block)
		section = after
	}
	if out.Len() == 0 {
		t.Fatalf("README.md's %q section has no sh blocks", heading)
	}
	return out.String()
}

// missingTool returns the first of tools not on PATH, "" when all are; it
// fails the test instead when COREBANK_REQUIRE_TOOLS is set (as .ci/run
// sets it, having installed them), so that a check the caller would skip
// cannot pass unseen in CI.
func missingTool(t *testing.T, tools ...string) string {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("COREBANK_REQUIRE_TOOLS") != "" {
				t.Fatalf("needs %s, and COREBANK_REQUIRE_TOOLS is set", tool)
			}
			return tool
		}
	}
	return ""
}
