package agent

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
)

// Scenarios of sub-agents: an agent's `agents:` offered as agent__<name>
// tools, each call a nested session whose report is the result.

func TestASubAgentsReportIsTheCallersToolResult(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(agentNamed("planner", "researcher"),
			askWithID("call_r", "researcher", "Find the answer to life."),
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "The researcher says 42.")),
		as(agentNamed("researcher"), subReport(StatusSuccess, "It is 42.")),
	})
	res := h.run("What is the answer?")
	wantReport(t, res, StatusSuccess, SourceToolCall)

	planner, researcher := h.requestsOf("planner"), h.requestsOf("researcher")
	if len(planner) != 2 || len(researcher) != 1 {
		t.Fatalf("model calls: planner %d, researcher %d; want 2 and 1", len(planner), len(researcher))
	}
	wantOpenTurn(t, planner[0], FinalReportTool, SubAgentPrefix+"researcher")
	def := planner[0].Tools[1]
	if !strings.Contains(def.Description, "The researcher of the team.") || !strings.Contains(def.Description, "sees nothing of this conversation") {
		t.Errorf("the sub-agent's tool description = %q", def.Description)
	}
	var schema struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(def.Schema, &schema); err != nil || !slices.Equal(schema.Required, []string{"prompt"}) {
		t.Errorf("the sub-agent's schema = %s", def.Schema)
	}
	if got := toolResultFor(t, planner[1], "call_r"); got != "It is 42." {
		t.Errorf("the planner read %q, want the researcher's report", got)
	}
	// The researcher sees its task only, and answers in sub-agent format.
	if msgs := researcher[0].Messages; len(msgs) != 1 || msgs[0].Content != "Find the answer to life." {
		t.Errorf("the researcher was sent %s", dump(msgs))
	}
	if !strings.Contains(researcher[0].System, `report_format "sub-agent"`) {
		t.Errorf("the researcher's prompt does not ask for the sub-agent format:\n%s", researcher[0].System)
	}

	// Its events reach the caller's observer, named and placed.
	evs := h.events.eventsOf("researcher")
	if len(evs) == 0 {
		t.Fatal("no events from the researcher")
	}
	for _, e := range evs {
		if !slices.Equal(e.Path, []string{"planner", "researcher"}) || e.Parent != "call_r" || e.Session == res.SessionID {
			t.Errorf("researcher %s event: path %v parent %q session %q", e.Kind, e.Path, e.Parent, e.Session)
		}
	}
	for _, e := range h.events.eventsOf("planner") {
		if !slices.Equal(e.Path, []string{"planner"}) || e.Parent != "" {
			t.Errorf("planner %s event: path %v parent %q", e.Kind, e.Path, e.Parent)
		}
	}
	for _, e := range h.events.ofKind(EventToolFinished) {
		if e.Tool.Name == SubAgentPrefix+"researcher" && (e.Tool.Namespace != "subagent" || !e.Tool.OK) {
			t.Errorf("the sub-agent call's event = %+v", e.Tool)
		}
	}
}

func TestAFailedSubAgentIsAnErrorResultTheCallerCanRecoverFrom(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(agentNamed("planner", "researcher"), askWithID("call_r", "researcher", "Find it."), llmtest.Report(config.FormatMarkdown, StatusPartial, "Could not find it.")),
		as(agentNamed("researcher"), subReport(StatusFailure, "Nothing found.")),
	}, overAnthropic()) // Anthropic's tool_result carries is_error
	wantReport(t, h.run("Find it."), StatusPartial, SourceToolCall)
	i := slices.IndexFunc(toolResults(h.requestsOf("planner")[1]), func(m llm.Message) bool {
		return m.ToolCallID != "" && m.IsError && m.Content == "Nothing found."
	})
	if i < 0 {
		t.Errorf("the planner did not read the failed report as an error: %s", dump(h.requestsOf("planner")[1].Messages))
	}
}

func TestSubAgentUsageAndCostAddUpInTheCaller(t *testing.T) {
	t.Parallel()
	use := func(r llmtest.Reply, in, out int) llmtest.Reply {
		r.Usage = &llmtest.Usage{Input: in, Output: out}
		return r
	}
	h := newTeam(t, []member{
		as(agentNamed("planner", "researcher"), use(ask("researcher", "Look."), 1000, 50), use(llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."), 1200, 60)),
		as(agentNamed("researcher", "fetcher"), use(ask("fetcher", "Fetch."), 500, 20), use(subReport(StatusSuccess, "Looked."), 600, 30)),
		as(agentNamed("fetcher"), use(subReport(StatusSuccess, "Fetched."), 100, 10)),
	})
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	in, out := 1000+1200+500+600+100, 50+60+20+30+10
	if res.Usage.InputTokens != in || res.Usage.OutputTokens != out || math.Abs(res.Usage.CostUSD-costOf(in, out)) > 1e-12 {
		t.Errorf("usage = %+v, want %d/%d at %g", res.Usage, in, out, costOf(in, out))
	}
	done := map[string]Event{}
	for _, e := range h.events.ofKind(EventSessionDone) {
		done[e.Agent] = e
	}
	for name, want := range map[string][2]int{"planner": {in, out}, "researcher": {500 + 600 + 100, 20 + 30 + 10}, "fetcher": {100, 10}} {
		u := done[name].Usage
		if u == nil || u.InputTokens != want[0] || u.OutputTokens != want[1] || math.Abs(u.CostUSD-costOf(want[0], want[1])) > 1e-12 {
			t.Errorf("%s session_done usage = %+v, want %d/%d with its sub-agents'", name, u, want[0], want[1])
		}
	}
}

func TestTheSubAgentsTreeHangsUnderItsCall(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(agentNamed("planner", "researcher"), ask("researcher", "Look."), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")),
		as(agentNamed("researcher"), llmtest.Call("test__echo", `{"text":"hi"}`), subReport(StatusSuccess, "Looked.")),
	}, withTools(toolbox{"echo": echo()}))
	res := h.run("Go.")
	call := findOp(res.Tree, "tool", SubAgentPrefix+"researcher")
	if call == nil || len(call.Children) != 1 {
		t.Fatalf("no sub-agent call with one child in the tree:\n%s", dump(res.Tree))
	}
	child := call.Children[0]
	if child.Kind != "session" || child.Name != "researcher" || !child.OK || child.End.IsZero() {
		t.Errorf("the call's child = %s %q ok=%v", child.Kind, child.Name, child.OK)
	}
	if got := opNames(child); !slices.Equal(got, []string{"turn turn 1", "turn turn 2"}) {
		t.Errorf("the researcher's session holds %v", got)
	}
	if findOp(child, "tool", "test__echo") == nil {
		t.Errorf("the researcher's tool call is not in its subtree:\n%s", dump(child))
	}
	ids := map[int]bool{}
	var walk func(*OpSnapshot)
	walk = func(s *OpSnapshot) {
		if ids[s.ID] {
			t.Errorf("node id %d appears twice", s.ID)
		}
		ids[s.ID] = true
		for _, c := range s.Children {
			walk(c)
		}
	}
	walk(res.Tree)
	// The researcher's events point into the same tree.
	for _, e := range h.events.eventsOf("researcher") {
		if e.Op != nil && e.Op.Root().ID() != 0 {
			t.Errorf("a researcher event's node is not in the caller's tree")
		}
	}
}

func TestACycleOfSubAgentsIsRefusedWhenItWouldRun(t *testing.T) {
	t.Parallel()
	// Built in code, so that no configuration check stands in the way.
	h := newTeam(t, []member{
		as(agentNamed("planner", "researcher"), ask("researcher", "Look."), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")),
		as(agentNamed("researcher", "planner"), askWithID("call_back", "planner", "Plan."), subReport(StatusSuccess, "Did it myself.")),
	})
	wantReport(t, h.run("Go."), StatusSuccess, SourceToolCall)
	if n := len(h.requestsOf("planner")); n != 2 {
		t.Errorf("the planner made %d model calls, want 2: it must not run again inside the researcher", n)
	}
	got := toolResultFor(t, h.requestsOf("researcher")[1], "call_back")
	if !strings.Contains(got, "planner → researcher → planner") || !strings.HasPrefix(got, "Refused") {
		t.Errorf("the refusal %q does not name the chain", got)
	}
}

func TestSubAgentsNestOnlyToTheMaximumDepth(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(agentNamed("a", "b"), ask("b", "B."), llmtest.Report(config.FormatMarkdown, StatusSuccess, "A done.")),
		as(agentNamed("b", "c"), ask("c", "C."), subReport(StatusSuccess, "B done.")),
		as(agentNamed("c", "d"), askWithID("call_d", "d", "D."), subReport(StatusSuccess, "C done.")),
		as(agentNamed("d"), subReport(StatusSuccess, "D done.")),
	})
	h.runner.MaxDepth = 3
	wantReport(t, h.run("Go."), StatusSuccess, SourceToolCall)
	if n := len(h.requestsOf("d")); n != 0 {
		t.Errorf("d ran at depth 4 (%d model calls)", n)
	}
	got := toolResultFor(t, h.requestsOf("c")[1], "call_d")
	if !strings.Contains(got, "at most 3 deep") || !strings.Contains(got, "a → b → c → d") {
		t.Errorf("the refusal %q does not say why", got)
	}
	if evs := h.events.eventsOf("c"); len(evs) == 0 || !slices.Equal(evs[0].Path, []string{"a", "b", "c"}) {
		t.Errorf("c did not run at depth 3")
	}
}

func TestTheDefaultDepthIsThree(t *testing.T) {
	t.Parallel()
	r := &Runner{}
	if why := r.refuse([]string{"a", "b"}, "c"); why != "" {
		t.Errorf("depth 3 refused: %s", why)
	}
	if why := r.refuse([]string{"a", "b", "c"}, "d"); why == "" {
		t.Errorf("depth 4 allowed")
	}
	if config.DefaultMaxAgentDepth != 3 {
		t.Errorf("config.DefaultMaxAgentDepth = %d", config.DefaultMaxAgentDepth)
	}
}

func TestSubAgentsRunInsideABatchAndInParallel(t *testing.T) {
	t.Parallel()
	meet := newBarrier(2)
	batch := llmtest.Call(BatchTool, jsonArgs(map[string]any{"calls": []map[string]any{
		{"tool": SubAgentPrefix + "left", "parameters": map[string]any{"prompt": "Go left."}},
		{"tool": SubAgentPrefix + "right", "parameters": map[string]any{"prompt": "Go right."}},
	}}))
	planner := agentNamed("planner", "left", "right")
	planner.Tools = []string{BatchTool}
	h := newTeam(t, []member{
		as(planner, batch, llmtest.Report(config.FormatMarkdown, StatusSuccess, "Both back.")),
		// Each waits at the barrier until the other arrives: run one
		// after the other, they would never get there.
		as(agentNamed("left"), llmtest.Call("test__meet", `{"who":"left"}`), subReport(StatusSuccess, "Left is clear.")),
		as(agentNamed("right"), llmtest.Call("test__meet", `{"who":"right"}`), subReport(StatusSuccess, "Right is clear.")),
	}, withTools(toolbox{"meet": meet.meet()}))
	wantReport(t, h.run("Look both ways."), StatusSuccess, SourceToolCall)
	got := lastToolResult(t, h.requestsOf("planner")[1])
	want := "=== [1] agent__left (ok) ===\nLeft is clear.\n=== [2] agent__right (ok) ===\nRight is clear."
	if got != want {
		t.Errorf("the batch result = %q, want %q", got, want)
	}
	for _, name := range []string{"left", "right"} {
		if evs := h.events.eventsOf(name); len(evs) == 0 || !strings.Contains(evs[0].Parent, ".") {
			t.Errorf("%s's events do not name the batch's inner call as parent", name)
		}
	}
}

func TestCancellingTheCallerStopsTheSubAgent(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	var once sync.Once
	stuck := fn{anyArgs, func(ctx context.Context, _ map[string]any) (tools.Result, error) {
		once.Do(func() { close(entered) })
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}}
	h := newTeam(t, []member{
		as(agentNamed("planner", "researcher"), ask("researcher", "Look.")),
		as(agentNamed("researcher"), llmtest.Call("test__stuck", `{}`)),
	}, withTools(toolbox{"stuck": stuck}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	res := h.runCtx(ctx, "Go.")
	wantReport(t, res, StatusFailure, SourceSynthetic)
	if !errors.Is(res.Err, context.Canceled) {
		t.Errorf("err = %v, want cancelled", res.Err)
	}
	var childDone *Event
	for _, e := range h.events.eventsOf("researcher") {
		if e.Kind == EventSessionDone {
			childDone = &e
		}
	}
	if childDone == nil || !strings.Contains(childDone.Err, "canceled") {
		t.Errorf("the researcher's session did not end cancelled: %+v", childDone)
	}
}

func TestASubAgentsLogLinesSayWhereItSits(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(agentNamed("planner", "researcher"), askWithID("call_r", "researcher", "Look."), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")),
		as(agentNamed("researcher"), llmtest.Call("test__echo", `{"text":"hi"}`), subReport(StatusSuccess, "Looked.")),
	}, withTools(toolbox{"echo": echo()}))
	log, buf := infoLogger()
	h.runner.Log = log
	h.run("Go.")
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
	if !has(`"msg":"session_done"`, `"agent":"researcher"`, `"path":["planner","researcher"]`, `"parent_call":"call_r"`) {
		t.Errorf("the researcher's session_done does not say where it sits:\n%s", buf)
	}
	if !has(`"msg":"tool response"`, `"agent":"researcher"`, `"tool":"test__echo"`) {
		t.Errorf("the researcher's tool call is not logged with its agent:\n%s", buf)
	}
	if !has(`"level":"info"`, `"msg":"tool_finished"`, `"agent":"planner"`, `"tool":"agent__researcher"`, `"namespace":"subagent"`) {
		t.Errorf("the sub-agent call has no info line of its own:\n%s", buf)
	}
}

func TestASubAgentKeepsTimeForItsReportWithinTheCallersTimeLimit(t *testing.T) {
	t.Parallel()
	stuck := fn{anyArgs, func(ctx context.Context, _ map[string]any) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}}
	planner := agentNamed("planner", "researcher")
	planner.MaxSessionDuration = config.Duration(3 * time.Second)
	researcher := agentNamed("researcher")
	researcher.MaxSessionDuration = config.Duration(time.Hour) // bounded by the planner's instead
	researcher.ToolTimeout = config.Duration(time.Hour)
	h := newTeam(t, []member{
		as(planner, askWithID("call_r", "researcher", "Look."), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")),
		as(researcher, llmtest.Call("test__stuck", `{}`), subReport(StatusPartial, "Ran out of time; partial answer.")),
	}, withTools(toolbox{"stuck": stuck}))
	start := time.Now()
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if d := time.Since(start); d >= 3*time.Second {
		t.Errorf("the run took %s, past the planner's limit", d)
	}
	got := toolResultFor(t, h.requestsOf("planner")[1], "call_r")
	if got != "Ran out of time; partial answer." {
		t.Errorf("the planner read %q, want the researcher's own report", got)
	}
	last := h.requestsOf("researcher")[1]
	wantFinalOnly(t, last)
}
