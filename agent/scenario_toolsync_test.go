package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
)

// Scenarios of a session and the shared tools as they live: tool lists
// that change while the bot runs, providers' instructions, queues and the
// response cache.

// liveBox is a provider in namespace "live" whose tool list changes, as an
// MCP server's does when it starts late or restarts, and which announces
// each change (tools.Notifier).
type liveBox struct {
	tools.Base
	instructions string

	mu       sync.Mutex
	names    []string
	queue    string
	cacheTTL time.Duration
	changed  func()
}

func (b *liveBox) Namespace() string    { return "live" }
func (b *liveBox) Instructions() string { return b.instructions }

func (b *liveBox) OnToolsChanged(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.changed = f
}

// set replaces the tool list and announces it; the orchestrator refreshes
// before set returns.
func (b *liveBox) set(names ...string) {
	b.mu.Lock()
	b.names = names
	f := b.changed
	b.mu.Unlock()
	if f != nil {
		f()
	}
}

func (b *liveBox) Tools(context.Context) ([]tools.Tool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []tools.Tool
	for _, n := range b.names {
		out = append(out, tools.Tool{Name: tools.Name("live", n), Remote: n, Description: "Live tool " + n + ".",
			Schema: json.RawMessage(anyArgs), Queue: b.queue, CacheTTL: b.cacheTTL})
	}
	return out, nil
}

func (b *liveBox) Call(_ context.Context, c tools.Call) (tools.Result, error) {
	return tools.Result{Content: "ran " + c.Name}, nil
}

func TestToolsThatAppearOrDisappearAreOfferedFromTheNextSession(t *testing.T) {
	t.Parallel()
	box := &liveBox{names: []string{"alpha"}}
	h := newHarness(t, withTools(box), withAgent(func(a *config.Agent) { a.Tools = []string{"live__*"} }), script(
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "one"), llmtest.Report(config.FormatMarkdown, StatusSuccess, "two"), llmtest.Report(config.FormatMarkdown, StatusSuccess, "three"),
	))
	h.run("First.")
	box.set("alpha", "beta") // the server restarted with a new tool
	h.run("Second.")
	box.set("beta") // and lost one
	h.run("Third.")
	reqs := h.wantRequests(3)
	wantOpenTurn(t, reqs[0], FinalReportTool, "live__alpha")
	wantOpenTurn(t, reqs[1], FinalReportTool, "live__alpha", "live__beta")
	wantOpenTurn(t, reqs[2], FinalReportTool, "live__beta")
}

func TestProviderInstructionsJoinThePromptOfAgentsOfferedTheirTools(t *testing.T) {
	t.Parallel()
	const guidance = "Always search before you fetch."
	tests := []struct {
		name  string
		globs []string
		want  bool
	}{
		{"an agent offered the provider's tools reads its instructions", []string{"live__*"}, true},
		{"an agent offered none of them does not", []string{"test__*"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			box := &liveBox{names: []string{"search"}, instructions: guidance}
			h := newHarness(t, withTools(box, toolbox{"echo": echo()}), withAgent(func(a *config.Agent) { a.Tools = tt.globs }),
				script(llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")))
			h.run("Go.")
			sys := h.wantRequests(1)[0].System
			if got := strings.Contains(sys, guidance); got != tt.want {
				t.Fatalf("instructions in the system prompt = %v, want %v:\n%s", got, tt.want, sys)
			}
			if tt.want && !strings.Contains(sys, "## Instructions for your tools\n### live tools (live__*)\n"+guidance) {
				t.Errorf("the instructions are not under their heading:\n%s", sys)
			}
		})
	}
}

func TestToolEventsAndLogsTellTheQueueAndTheCache(t *testing.T) {
	t.Parallel()
	box := &liveBox{names: []string{"lookup"}, queue: "slow", cacheTTL: time.Hour}
	h := newHarness(t, withTools(box), withAgent(func(a *config.Agent) { a.Tools = []string{"live__*"} }),
		withToolOptions(tools.Options{Queues: map[string]int{"slow": 1}}), script(
			llmtest.Call("live__lookup", `{"q":"x"}`),
			llmtest.Call("live__lookup", `{"q":"x"}`),
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."),
		))
	log, buf := bufferLogger()
	h.runner.Log = log
	wantReport(t, h.run("Go."), StatusSuccess, SourceToolCall)
	var fin []*ToolInfo
	for _, e := range h.events.ofKind(EventToolFinished) {
		if e.Tool.Name == "live__lookup" {
			fin = append(fin, e.Tool)
		}
	}
	if len(fin) != 2 {
		t.Fatalf("%d tool_finished events for live__lookup, want 2", len(fin))
	}
	if fin[0].Queue != "slow" || fin[0].Cached || fin[0].Remote != "live:lookup" {
		t.Errorf("first call = %+v, want queue slow, not cached, remote live:lookup", fin[0])
	}
	if !fin[1].Cached || fin[1].Queue != "" {
		t.Errorf("second call = %+v, want cached without waiting in the queue", fin[1])
	}
	lines := strings.Split(buf.String(), "\n")
	has := func(parts ...string) bool {
		return slices.ContainsFunc(lines, func(l string) bool {
			for _, p := range parts {
				if !strings.Contains(l, p) {
					return false
				}
			}
			return true
		})
	}
	if !has(`"level":"debug"`, `"msg":"tool_finished"`, `"queue":"slow"`, `"queue_wait":`, `"remote":"live:lookup"`) {
		t.Errorf("no tool_finished line with the queue and the remote name:\n%s", buf)
	}
	if !has(`"msg":"tool_finished"`, `"cached":true`) {
		t.Errorf("no tool_finished line for the cached call:\n%s", buf)
	}
}
