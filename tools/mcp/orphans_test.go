package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
)

// The test binary doubles as the helper program of the SIGTERM test: with
// sigtermHelperEnv set (to the testserver's path) it builds a registry,
// says "ready", and on SIGTERM closes the registry and exits, the way cmd
// slackbot's signal handler does.
const (
	sigtermHelperEnv     = "MCP_TEST_SIGTERM_HELPER"
	sigtermHelperPidFile = "MCP_TEST_SIGTERM_PIDFILE"
)

func sigtermHelper() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	srv := stdio(os.Getenv(sigtermHelperEnv), "-grandchild", os.Getenv(sigtermHelperPidFile))
	reg, err := NewRegistry(map[string]config.MCPServer{"kids": srv}, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	p, _ := reg.Acquire("kids")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Warmup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	<-term
	_ = reg.Close()
	os.Exit(0)
}

// readPids waits for the testserver's "pid grandchildpid" file.
func readPids(t *testing.T, file string) (server, grandchild int) {
	t.Helper()
	wait.Eventually(t, "the pid file", func() bool {
		b, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		_, err = fmt.Sscanf(string(b), "%d %d", &server, &grandchild)
		return err == nil
	}, wait.Within(30*time.Second))
	return server, grandchild
}

func TestCloseLeavesNoProcessBehind(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	srv := stdio(testServer(t), "-grandchild", pidFile)
	reg, err := NewRegistry(map[string]config.MCPServer{"kids": srv}, fastOptions(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := reg.Acquire("kids")
	if err := p.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	server, grandchild := readPids(t, pidFile)
	if processGone(server) || processGone(grandchild) {
		t.Fatal("server and grandchild should run before Close")
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, "server and grandchild to be gone", func() bool {
		return processGone(server) && processGone(grandchild)
	}, wait.Within(5*time.Second))
	_ = reg.Close() // idempotent
}

func TestSIGTERMToOurProcessLeavesNoProcessBehind(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), sigtermHelperEnv+"="+testServer(t), sigtermHelperPidFile+"="+pidFile)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	server, grandchild := readPids(t, pidFile)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper did not exit cleanly on SIGTERM: %v", err)
	}
	wait.Eventually(t, "server and grandchild to be gone", func() bool {
		return processGone(server) && processGone(grandchild)
	}, wait.Within(5*time.Second))
}

func TestServerStopsWithItsLastHandle(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	reg, err := NewRegistry(map[string]config.MCPServer{"kids": stdio(testServer(t), "-grandchild", pidFile)}, fastOptions(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	a, _ := reg.Acquire("kids")
	b, _ := reg.Acquire("kids")
	if err := a.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	server, grandchild := readPids(t, pidFile)
	_ = a.Close()
	if processGone(server) {
		t.Fatal("the server stopped while a handle was still held")
	}
	if tl, _ := b.Tools(context.Background()); len(tl) == 0 {
		t.Error("the remaining handle lost its tools")
	}
	_ = b.Close()
	wait.Eventually(t, "server and grandchild to be gone", func() bool {
		return processGone(server) && processGone(grandchild)
	}, wait.Within(5*time.Second))
	if _, err := reg.Acquire("nope"); err == nil {
		t.Error("Acquire of an unknown server succeeded")
	}
}
