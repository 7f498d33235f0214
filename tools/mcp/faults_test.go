package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp/internal/fakeserver"
)

// leaks reports the first piece of machine detail found in a message the
// model reads.
func leaks(msg string, details ...string) string {
	for _, d := range append(details, "127.0.0.1", "localhost", "/tmp", "dial tcp", "broken pipe", "EOF", "transport") {
		if d != "" && strings.Contains(msg, d) {
			return d
		}
	}
	return ""
}

func TestServerCrashingMidCallIsRestartedAndTheNextCallWorks(t *testing.T) {
	t.Parallel()
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t))}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	gen := orch.Generation()
	out := orch.Execute(context.Background(), "1", "f__crash", `{}`, 10*time.Second)
	if out.OK() || !strings.Contains(out.Content, "MCP server f stopped while running crash") || !strings.Contains(out.Content, "try again") {
		t.Fatalf("crash outcome = %+v", out)
	}
	if d := leaks(out.Content, testServer(t)); d != "" {
		t.Errorf("the model's message leaks %q: %s", d, out.Content)
	}
	// Withdrawn on death, published again on restart: two changes at least.
	wait.Eventually(t, "the restarted server's tools", func() bool {
		return orch.Generation() >= gen+2 && hasTool(orch, "f__echo")
	}, wait.Within(10*time.Second))
	if got := run(t, orch, "f__echo", `{"message":"again"}`); got != "Echo: again" {
		t.Errorf("echo after restart = %q", got)
	}
}

func TestHangingToolTimesOutAndItsQueueIsFreeAtOnce(t *testing.T) {
	t.Parallel()
	cancelFile := filepath.Join(t.TempDir(), "cancelled")
	srv := stdio(testServer(t), "-cancel-file", cancelFile)
	srv.Queue, srv.Timeout = "one", config.Duration(300*time.Millisecond)
	_, orch := setup(t, map[string]config.MCPServer{"f": srv}, fastOptions(t, nil), tools.Options{Queues: map[string]int{"one": 1}})
	warm(t, orch)
	out := orch.Execute(context.Background(), "1", "f__hang", `{}`, time.Minute)
	if out.Failure != tools.FailTimeout {
		t.Fatalf("hang outcome = %+v", out)
	}
	start := time.Now()
	next := orch.Execute(context.Background(), "2", "f__echo", `{"message":"next"}`, time.Minute)
	if !next.OK() || next.Content != "Echo: next" {
		t.Fatalf("next call = %+v", next)
	}
	if wait := time.Since(start); wait > 250*time.Millisecond {
		t.Errorf("the next call took %s: the queue was not free", wait)
	}
	// mcp-go sends notifications/cancelled over stdio; the server's
	// handler sees its context end.
	wait.Eventually(t, "the server to hear of the cancellation", func() bool {
		_, err := os.Stat(cancelFile)
		return err == nil
	}, wait.Within(5*time.Second))
}

func TestCancelledContextStopsWaitingAtOnce(t *testing.T) {
	t.Parallel()
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t))}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Outcome, 1)
	go func() { done <- orch.Execute(ctx, "1", "f__hang", `{}`, time.Minute) }()
	time.AfterFunc(100*time.Millisecond, cancel)
	select {
	case out := <-done:
		if out.Failure != tools.FailCanceled {
			t.Errorf("outcome = %+v", out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Execute kept waiting after its context was cancelled")
	}
}

func TestASchemaReachesTheModelAsTheServerWroteIt(t *testing.T) {
	t.Parallel()
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t))}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	tool, ok := orch.Tool("f__lookup")
	if !ok || !strings.Contains(string(tool.Schema), `"oneOf"`) {
		t.Fatalf("f__lookup schema = %s (ok=%v)", tool.Schema, ok)
	}
	ctx := context.Background()
	if out := orch.Execute(ctx, "1", "f__lookup", `{"path":"a","id":1}`, 0); out.Failure != tools.FailInvalidArgs {
		t.Fatalf("both path and id were accepted: %+v", out)
	}
	if out := orch.Execute(ctx, "2", "f__lookup", `{"id":7}`, 0); !out.OK() || out.Content != "found" {
		t.Fatalf("a valid call: %+v", out)
	}
}

func TestToolWithBadSchemaIsSkippedWithAWarning(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.WarnLevel)
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t), "-bad-schema")}, fastOptions(t, nil), tools.Options{Log: zap.New(core)})
	warm(t, orch)
	if hasTool(orch, "f__broken") || !hasTool(orch, "f__echo") {
		t.Fatalf("tools = %s", toolNames(orch))
	}
	if logs.FilterMessageSnippet("schema does not compile").FilterField(zap.String("tool", "f__broken")).Len() == 0 {
		t.Errorf("no warning for the skipped tool; logs: %v", logs.All())
	}
}

func TestServerExitingAtStartIsRetriedWhileOthersWork(t *testing.T) {
	t.Parallel()
	starts := filepath.Join(t.TempDir(), "starts")
	core, logs := observer.New(zapcore.WarnLevel)
	servers := map[string]config.MCPServer{
		"bad":  stdio(testServer(t), "-exit-at-start", starts),
		"good": stdio(testServer(t)),
	}
	_, orch := setup(t, servers, fastOptions(t, zap.New(core)), tools.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := orch.Warmup(ctx)
	if err == nil || !strings.Contains(err.Error(), "bad") || strings.Contains(err.Error(), "good") {
		t.Fatalf("warmup error = %v", err)
	}
	if d := leaks(err.Error(), testServer(t)); d != "" {
		t.Errorf("warmup error leaks %q: %v", d, err)
	}
	if got := run(t, orch, "good__echo", `{"message":"fine"}`); got != "Echo: fine" {
		t.Errorf("good echo = %q", got)
	}
	wait.Eventually(t, "three start attempts", func() bool {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "\n") >= 3
	}, wait.Within(10*time.Second))
	if logs.FilterMessage("MCP server failed to start").FilterField(zap.String("mcp_server", "bad")).Len() == 0 {
		t.Errorf("no warning logged for the failing server: %v", logs.All())
	}
	if out := orch.Execute(context.Background(), "1", "bad__echo", `{}`, time.Second); out.Failure != tools.FailUnknownTool {
		t.Errorf("a down server's tools should be absent: %+v", out)
	}
}

func TestListChangedRefreshesToolsAndNotifies(t *testing.T) {
	t.Parallel()
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t))}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	if hasTool(orch, "f__added") {
		t.Fatal("f__added exists before add_tool")
	}
	gen := orch.Generation()
	run(t, orch, "f__add_tool", `{}`)
	wait.Eventually(t, "f__added to appear", func() bool { return hasTool(orch, "f__added") }, wait.Within(10*time.Second))
	if orch.Generation() <= gen {
		t.Error("the orchestrator was not notified")
	}
	if got := run(t, orch, "f__added", `{}`); got != "I was added" {
		t.Errorf("added = %q", got)
	}
}

func TestAllowedAndDeniedGlobsFilterTools(t *testing.T) {
	t.Parallel()
	srv := stdio(testServer(t))
	srv.ToolsAllow = []string{"*_file", "echo"}
	srv.ToolsDeny = []string{"delete_*"}
	_, orch := setup(t, map[string]config.MCPServer{"f": srv}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	if got, want := toolNames(orch), "f__echo f__read_file f__write_file"; got != want {
		t.Errorf("tools = %q, want %q", got, want)
	}
}

func TestNamesCollidingWithinAServerGetSuffixes(t *testing.T) {
	t.Parallel()
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t))}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	a, b := run(t, orch, "f__get_thing", `{}`), run(t, orch, "f__get_thing_2", `{}`)
	if a == b || (a != "dot" && a != "space") || (b != "dot" && b != "space") {
		t.Errorf("get_thing = %q, get_thing_2 = %q: each remote tool should keep its own name", a, b)
	}
	tl, _ := orch.Tool("f__get_thing_2")
	if tl.Remote != "get thing" && tl.Remote != "get.thing" {
		t.Errorf("Remote = %q", tl.Remote)
	}
}

// httpFake serves the fake server over streamable HTTP, accepting only
// requests that carry the bearer token.
func httpFake(t *testing.T, token string, seen *atomic.Int64) *httptest.Server {
	h := mcpserver.NewStreamableHTTPServer(fakeserver.New(fakeserver.Options{}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		seen.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestHeadersReachAnHTTPServer(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	ts := httpFake(t, "s3cret", &seen)
	srv := config.MCPServer{Type: "http", URL: ts.URL, Headers: map[string]config.Secret{"Authorization": "Bearer s3cret"}}
	_, orch := setup(t, map[string]config.MCPServer{"h": srv}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	if got := run(t, orch, "h__echo", `{"message":"authorised"}`); got != "Echo: authorised" {
		t.Errorf("echo = %q", got)
	}
	if seen.Load() == 0 {
		t.Error("no request carried the token")
	}
}

func TestUnreachableURLErrorNamesNoHost(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	srv := config.MCPServer{Type: "http", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}
	_, orch := setup(t, map[string]config.MCPServer{"gone": srv}, fastOptions(t, nil), tools.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := orch.Warmup(ctx)
	if err == nil {
		t.Fatal("warmup of an unreachable server succeeded")
	}
	if d := leaks(err.Error(), fmt.Sprint(port)); d != "" {
		t.Errorf("error leaks %q: %v", d, err)
	}
}

func TestServerGoingAwayMidLifeGivesACleanError(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	ts := httpFake(t, "tok", &seen)
	srv := config.MCPServer{Type: "http", URL: ts.URL, Headers: map[string]config.Secret{"Authorization": "Bearer tok"}}
	_, orch := setup(t, map[string]config.MCPServer{"h": srv}, fastOptions(t, nil), tools.Options{})
	warm(t, orch)
	ts.CloseClientConnections()
	ts.Close()
	out := orch.Execute(context.Background(), "1", "h__echo", `{"message":"x"}`, 10*time.Second)
	if out.OK() {
		t.Fatalf("call to a closed server succeeded: %+v", out)
	}
	if d := leaks(out.Content, strings.TrimPrefix(ts.URL, "http://")); d != "" {
		t.Errorf("error leaks %q: %s", d, out.Content)
	}
	// Either the call reached the dead server (a failure whose cause stays
	// for the log) or the server's death was noticed first and its tools
	// withdrawn (the model is told the tool is not there): both are clean.
	if out.Err == nil && out.Failure != tools.FailUnknownTool {
		t.Errorf("the raw cause should stay reachable for logs: %+v", out)
	}
}

func TestBadServerNameIsRefused(t *testing.T) {
	t.Parallel()
	if _, err := NewRegistry(map[string]config.MCPServer{"no spaces": stdio("true")}, Options{}); err == nil {
		t.Fatal("NewRegistry accepted a bad server name")
	}
}

func TestFailedHealthProbeRestartsTheServer(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	o := fastOptions(t, zap.New(core))
	o.ProbeInterval = 300 * time.Millisecond
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t))}, o, tools.Options{})
	warm(t, orch)
	run(t, orch, "f__freeze", `{}`)
	wait.Eventually(t, "a restart after the failed probe", func() bool {
		return logs.FilterMessage("MCP server died").Len() > 0 && logs.FilterMessage("MCP server connected").Len() >= 2
	}, wait.Within(15*time.Second))
	if got := run(t, orch, "f__echo", `{"message":"thawed"}`); got != "Echo: thawed" {
		t.Errorf("echo after restart = %q", got)
	}
}
