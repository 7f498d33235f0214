package mcp

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/tools"
)

// binDir holds the programs built once for the whole run.
var binDir string

func TestMain(m *testing.M) {
	if os.Getenv(sigtermHelperEnv) != "" {
		sigtermHelper()
		return
	}
	if os.Getenv(conformanceClientEnv) != "" {
		os.Exit(conformanceClient())
	}
	dir, err := os.MkdirTemp("", "mcp-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// testServer returns the path of cmd testserver, built on first use.
func testServer(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(binDir, "testserver")
	buildOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", bin, "./internal/testserver").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build testserver: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// repoRoot is the directory holding go.mod, found upwards from the test's
// working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// npmPeer returns node and the entry point of a pinned npm MCP server.
func npmPeer(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: run make peers")
	}
	script = filepath.Join(repoRoot(t), "testdata", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("%s is not installed (%v): run make peers", pkg, err)
	}
	return node, script
}

// freePort returns a TCP port nobody listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startHTTPPeer runs server-everything in an HTTP mode on a free port and
// returns its port once it accepts connections; cleanup kills its group.
func startHTTPPeer(t testing.TB, mode string) int {
	t.Helper()
	node, script := npmPeer(t, "server-everything")
	port := freePort(t)
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	wait.Eventually(t, "server-everything "+mode+" listening", func() bool {
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited early", mode)
		default:
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, wait.Within(30*time.Second))
	return port
}

// fastOptions restart quickly, so fault tests do not wait on real backoff.
func fastOptions(t testing.TB, log *zap.Logger) Options {
	if log == nil {
		log = zaptest.NewLogger(t)
	}
	return Options{Log: log, Backoff: []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond}, ProbeInterval: time.Second}
}

// setup starts a registry and an orchestrator over it, warmed up; both are
// closed at cleanup.
func setup(t testing.TB, servers map[string]config.MCPServer, o Options, topts tools.Options) (*Registry, *tools.Orchestrator) {
	t.Helper()
	reg, err := NewRegistry(servers, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	orch := tools.New(context.Background(), topts, reg.Providers()...)
	t.Cleanup(func() { _ = orch.Close() })
	return reg, orch
}

func warm(t testing.TB, orch *tools.Orchestrator) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := orch.Warmup(ctx); err != nil {
		t.Fatalf("warmup: %v", err)
	}
}

// run executes one call and fails the test unless the tool succeeded.
func run(t testing.TB, orch *tools.Orchestrator, name, args string) string {
	t.Helper()
	out := orch.Execute(context.Background(), "call-1", name, args, 30*time.Second)
	if !out.OK() {
		t.Fatalf("%s(%s) failed (%s): %s [%v]", name, args, out.Failure, out.Content, out.Err)
	}
	return out.Content
}

func hasTool(orch *tools.Orchestrator, name string) bool {
	_, ok := orch.Tool(name)
	return ok
}

func toolNames(orch *tools.Orchestrator) string {
	var n []string
	for _, t := range orch.Tools() {
		n = append(n, t.Name)
	}
	return strings.Join(n, " ")
}

func stdio(command string, args ...string) config.MCPServer {
	return config.MCPServer{Type: "stdio", Command: command, Args: args}
}

// processGone reports whether pid no longer runs: it does not exist, or is
// a zombie waiting for a parent that is not us.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}
