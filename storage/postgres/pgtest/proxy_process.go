package pgtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The proxy runs in a process of its own, the test binary started again
// with proxyEnv set, at a higher scheduling priority where the system
// allows it: a network does not slow down when its hosts are busy. In the
// test process its goroutines waited for a CPU behind the load the test
// drives (HTTP clients, in-process nodes). In examples/server
// TestPostgresThroughput (two interleaved pairs of runs), the median
// SELECT 1 round trip during the proxied steps went from 2.9-6.1 ms to
// 2.5-4.9 ms, and with 4 nodes and 64 clients from 5.3-6.1 to 4.2-4.9;
// the rest over 1 ms is the machine's, whose cores the database, the
// nodes and the load share.

// proxyEnv, set in a process's environment, makes the process a proxy
// (proxyChild) rather than run its tests: "network addr delay".
const proxyEnv = "COREBANK_PGTEST_PROXY"

func init() {
	if spec, ok := os.LookupEnv(proxyEnv); ok {
		os.Exit(proxyChild(spec, os.Stdin, os.Stdout))
	}
}

// proxyChild serves a proxy to spec's address, writes the address it
// listens on to out as a line, and returns once in ends (its parent
// closed the pipe, or died).
func proxyChild(spec string, in io.Reader, out io.Writer) int {
	f := strings.Fields(spec)
	if len(f) != 3 {
		fmt.Fprintf(out, "error %s=%q: want network, address and delay\n", proxyEnv, spec)
		return 2
	}
	network, addr := f[0], f[1]
	delay, err := time.ParseDuration(f[2])
	if err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 2
	}
	p, err := newProxy(network, addr, delay)
	if err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 1
	}
	raisePriority()
	fmt.Fprintf(out, "listening %s\n", p.ln.Addr())
	_, _ = io.Copy(io.Discard, in)
	p.close()
	return 0
}

// proxyPriority is the nice value the proxy process asks for (lower runs
// sooner); refused without the privilege, which costs only fidelity.
const proxyPriority = -10

// raisePriority sets every thread of the process to proxyPriority: on
// Linux a nice value is a thread's, and a thread inherits its creator's,
// so the runtime's threads made before this keep theirs unless set here.
func raisePriority() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, proxyPriority)
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, proxyPriority)
		}
	}
}

// startProxyProcess starts the proxy process and returns the address it
// listens on; it stops when tb ends.
func startProxyProcess(tb testing.TB, network, addr string, delay time.Duration) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(network+addr, " \t\n") {
		return "", errors.New("a space in the address")
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s", proxyEnv, network, addr, delay))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	stop := func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var got string
	select {
	case got = <-line:
	case <-time.After(10 * time.Second):
		stop()
		return "", errors.New("the proxy process did not start in 10 s")
	}
	listen, ok := strings.CutPrefix(got, "listening ")
	if !ok {
		stop()
		return "", fmt.Errorf("the proxy process said %q", got)
	}
	tb.Cleanup(stop)
	return listen, nil
}
