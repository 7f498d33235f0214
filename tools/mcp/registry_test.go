package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/tools"
)

// startRecord is one start of a testserver: its pid, when its process
// began and when it was ready to serve.
type startRecord struct {
	pid          int
	start, ready time.Time
}

func readStarts(t *testing.T, file string) []startRecord {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []startRecord
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		pid, _ := strconv.Atoi(f[0])
		s, _ := strconv.ParseInt(f[1], 10, 64)
		r, _ := strconv.ParseInt(f[2], 10, 64)
		out = append(out, startRecord{pid, time.Unix(0, s), time.Unix(0, r)})
	}
	return out
}

func TestServersStartInParallelWithinTheInitLimit(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "starts")
	servers := map[string]config.MCPServer{}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		servers[name] = stdio(testServer(t), "-start-log", log, "-start-delay", "300ms")
	}
	o := fastOptions(t, nil)
	o.InitConcurrency = 2
	_, orch := setup(t, servers, o, tools.Options{})
	warm(t, orch)
	starts := readStarts(t, log)
	if len(starts) != 5 {
		t.Fatalf("%d starts recorded, want 5", len(starts))
	}
	// The most starts in progress at one moment: at every start, count the
	// starts begun and not yet ready.
	most := 0
	for _, s := range starts {
		n := 0
		for _, o := range starts {
			if !o.start.After(s.start) && o.ready.After(s.start) {
				n++
			}
		}
		most = max(most, n)
	}
	if most != 2 {
		t.Fatalf("at most %d servers were starting at once, want exactly 2 (parallel, within mcp_init_concurrency)", most)
	}
}

func TestADisabledServerIsNeverStarted(t *testing.T) {
	t.Parallel()
	starts := filepath.Join(t.TempDir(), "starts")
	off := false
	servers := map[string]config.MCPServer{
		"off": {Type: "stdio", Command: testServer(t), Args: []string{"-exit-at-start", starts}, Enabled: &off},
		"on":  stdio(testServer(t)),
	}
	reg, orch := setup(t, servers, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	if _, err := reg.Acquire("off"); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("Acquire(off) = %v", err)
	}
	for _, tool := range orch.Tools() {
		if strings.HasPrefix(tool.Name, "off__") {
			t.Fatalf("a disabled server offers %s", tool.Name)
		}
	}
	if _, err := os.Stat(starts); !os.IsNotExist(err) {
		t.Fatal("the disabled server's process was started")
	}
}

func TestRestartsWaitForTheirBackoff(t *testing.T) {
	t.Parallel()
	starts := filepath.Join(t.TempDir(), "starts")
	o := fastOptions(t, nil)
	o.Backoff = []time.Duration{0, 150 * time.Millisecond, 300 * time.Millisecond}
	setup(t, map[string]config.MCPServer{"bad": stdio(testServer(t), "-exit-at-start", starts)}, o, tools.Options{})
	var times []time.Time
	wait.Eventually(t, "five start attempts", func() bool {
		times = times[:0]
		b, _ := os.ReadFile(starts)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					times = append(times, time.Unix(0, ns))
				}
			}
		}
		return len(times) >= 5
	}, wait.Within(20*time.Second))
	// Attempt k+1 waits at least Backoff[min(k, last)] after attempt k
	// failed; the failure comes after the start, so gaps are lower bounds.
	for k := 1; k < 4; k++ {
		want := o.Backoff[min(k, len(o.Backoff)-1)]
		if gap := times[k+1].Sub(times[k]); gap < want {
			t.Errorf("attempt %d came %s after attempt %d, before its backoff of %s", k+2, gap, k+1, want)
		}
	}
}

func TestStdioServersGetTheirEnvironmentAndDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := stdio(testServer(t))
	cfg.Cwd = dir
	cfg.Env = map[string]config.Secret{"SLACKBOT_PROBE": "from-config"}
	_, orch := setup(t, map[string]config.MCPServer{"f": cfg}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	got := run(t, orch, "f__whereami", `{}`)
	real, _ := filepath.EvalSymlinks(dir)
	if fields := strings.Fields(got); len(fields) != 2 || !slices.Contains([]string{dir, real}, fields[0]) || fields[1] != "from-config" {
		t.Fatalf("whereami = %q, want %q from-config", got, dir)
	}
}

func TestEveryHandleSharesOneServerProcess(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "starts")
	reg, err := NewRegistry(map[string]config.MCPServer{"f": stdio(testServer(t), "-start-log", log)}, fastOptions(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	a, _ := reg.Acquire("f")
	b, _ := reg.Acquire("f")
	o1 := tools.New(t.Context(), tools.Options{}, a)
	o2 := tools.New(t.Context(), tools.Options{}, b)
	warm(t, o1)
	warm(t, o2)
	run(t, o1, "f__echo", `{"message":"one"}`)
	run(t, o2, "f__echo", `{"message":"two"}`)
	_ = o1.Close() // one session set goes away; the other keeps the server
	run(t, o2, "f__echo", `{"message":"still here"}`)
	if n := len(readStarts(t, log)); n != 1 {
		t.Fatalf("%d server processes started for two handles, want 1", n)
	}
	_ = o2.Close()
}

func TestDownNamesTheEnabledServersThatAreNotConnected(t *testing.T) {
	t.Parallel()
	off := false
	servers := map[string]config.MCPServer{
		"broken": stdio(testServer(t), "-exit-at-start", filepath.Join(t.TempDir(), "starts")),
		"off":    {Type: "stdio", Command: testServer(t), Enabled: &off},
		"on":     stdio(testServer(t)),
	}
	reg, orch := setup(t, servers, fastOptions(t, nil), tools.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = orch.Warmup(ctx) // "broken" never gets ready
	wait.Eventually(t, "only the broken server to be down", func() bool {
		return slices.Equal(reg.Down(), []string{"broken"})
	}, wait.Within(60*time.Second))
	_ = reg.Close()
	if got := reg.Down(); !slices.Equal(got, []string{"broken", "on"}) {
		t.Fatalf("after Close, Down() = %v, want every enabled server", got)
	}
}
