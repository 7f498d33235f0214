package agent

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
)

// Scenarios of tool calls going wrong: the model must learn what happened
// and the session must go on.

// modelMessage is what tools.ParseArguments tells the model about args for
// a tool with the given schema ("" for none).
func modelMessage(t *testing.T, name, args, schema string) string {
	t.Helper()
	var s *tools.Schema
	if schema != "" {
		var err error
		if s, err = tools.CompileSchema([]byte(schema)); err != nil {
			t.Fatal(err)
		}
	}
	_, msg := tools.ParseArguments(name, args, s)
	if msg == "" {
		t.Fatalf("ParseArguments accepts %s", args)
	}
	return msg
}

func TestBadToolCallsAreExplainedToTheModelAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	unknown := tools.UnknownToolMessage("test__nope", []tools.Tool{{Name: FinalReportTool}, {Name: "test__echo"}}, nil)
	tests := []struct {
		name    string
		call    llmtest.Reply
		want    string
		failure tools.Failure
	}{
		{"malformed JSON split across stream chunks",
			llmtest.Reply{ChunkSize: 3, ToolCalls: []llmtest.ToolCall{tc("test__echo", `{"text": "pi`)}},
			modelMessage(t, "test__echo", `{"text": "pi`, ""), tools.FailBadJSON},
		{"JSON with trailing garbage",
			llmtest.Call("test__echo", `{"text":"a"} {"text":"b"}`),
			modelMessage(t, "test__echo", `{"text":"a"} {"text":"b"}`, ""), tools.FailBadJSON},
		{"arguments that are an array",
			llmtest.Call("test__echo", `["ping"]`),
			modelMessage(t, "test__echo", `["ping"]`, ""), tools.FailBadJSON},
		{"a tool that does not exist",
			llmtest.Call("test__nope", `{}`), unknown, tools.FailUnknownTool},
		{"arguments of the wrong type",
			llmtest.Call("test__echo", `{"text": 5}`),
			modelMessage(t, "test__echo", `{"text": 5}`, textArgs), tools.FailInvalidArgs},
		{"a missing required argument",
			llmtest.Call("test__echo", ``),
			modelMessage(t, "test__echo", ``, textArgs), tools.FailInvalidArgs},
		{"an argument the schema does not allow",
			llmtest.Call("test__echo", `{"text":"a","loud":true}`),
			modelMessage(t, "test__echo", `{"text":"a","loud":true}`, textArgs), tools.FailInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ran atomic.Int32
			box := toolbox{"echo": echo()}
			inner := box["echo"].call
			box["echo"] = fn{textArgs, func(ctx context.Context, a map[string]any) (tools.Result, error) {
				ran.Add(1)
				return inner(ctx, a)
			}}
			h := newHarness(t, withTools(box), script(tt.call, llmtest.Report(config.FormatMarkdown, StatusSuccess, "Recovered.")))
			res := h.run("Go.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			wantTurns(t, res, 2)
			reqs := h.wantRequests(2)
			if got := lastToolResult(t, reqs[1]); got != tt.want {
				t.Errorf("the model was told:\n%s\nwant:\n%s", got, tt.want)
			}
			if ran.Load() != 0 {
				t.Errorf("the tool ran %d times on bad arguments", ran.Load())
			}
			fin := h.events.ofKind(EventToolFinished)
			if len(fin) == 0 || fin[0].Tool.Failure != string(tt.failure) || fin[0].Tool.OK {
				t.Errorf("first tool_finished event = %+v, want failure %s", fin, tt.failure)
			}
		})
	}
}

func TestToolFailuresReachTheModelAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tool    func(t *testing.T) fn
		want    string
		failure tools.Failure
	}{
		{"a tool that hangs ignoring its context is stopped at the timeout",
			hanging, "tool test__it did not answer within 50ms and was stopped. Try a narrower request, or continue without it.", tools.FailTimeout},
		{"a tool that panics is reported as crashed",
			func(*testing.T) fn { return panicking("kaboom") }, "tool test__it crashed: kaboom", tools.FailPanic},
		{"a tool that returns an error",
			func(*testing.T) fn { return failing("disk on fire") }, "tool test__it failed: disk on fire", tools.FailError},
		{"a tool that reports its own failure",
			func(*testing.T) fn { return constant(tools.Result{Content: "no such ticket: #42", IsError: true}) }, "no such ticket: #42", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t,
				withTools(toolbox{"it": tt.tool(t)}),
				withAgent(func(a *config.Agent) {
					if strings.Contains(tt.want, "did not answer") {
						a.ToolTimeout = config.Duration(50 * time.Millisecond)
					}
				}),
				script(llmtest.Call("test__it", `{}`), llmtest.Report(config.FormatMarkdown, StatusFailure, "The tool failed.")))
			res := h.run("Use the tool.")
			wantReport(t, res, StatusFailure, SourceToolCall)
			wantTurns(t, res, 2)
			reqs := h.wantRequests(2)
			if got := lastToolResult(t, reqs[1]); got != tt.want {
				t.Errorf("the model was told %q, want %q", got, tt.want)
			}
			fin := h.events.ofKind(EventToolFinished)
			if len(fin) == 0 || fin[0].Tool.OK || fin[0].Tool.Failure != string(tt.failure) {
				t.Errorf("first tool_finished event = %+v, want a failure %q", fin[0].Tool, tt.failure)
			}
		})
	}
}

func TestAToolThatReturnsNothingStillAnswersTheCall(t *testing.T) {
	t.Parallel()
	for _, w := range []wire{wireOpenAI, wireAnthropic} {
		t.Run(string(w), func(t *testing.T) {
			t.Parallel()
			opts := []option{withTools(toolbox{"quiet": constant(tools.Result{})}),
				script(llmtest.Call("test__quiet", `{}`), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Nothing came back."))}
			if w == wireAnthropic {
				opts = append(opts, overAnthropic())
			}
			h := newHarness(t, opts...)
			res := h.run("Go.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			reqs := h.wantRequests(2)
			if n := len(toolResults(reqs[1])); n != 1 {
				t.Errorf("the call got %d results, want 1", n)
			}
		})
	}
}

func TestCallsBeyondMaxToolCallsPerTurnAreRefused(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	box := toolbox{"count": fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) {
		ran.Add(1)
		return tools.Result{Content: "counted"}, nil
	}}}
	h := newHarness(t, withTools(box), withAgent(func(a *config.Agent) { a.MaxToolCallsPerTurn = 2 }), script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "c1", Name: "test__count", Arguments: `{}`},
			{ID: "c2", Name: "test__count", Arguments: `{}`},
			{ID: "c3", Name: "test__count", Arguments: `{}`},
		}},
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Counted twice."),
	))
	res := h.run("Count three times.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	if got := toolResultFor(t, reqs[1], "c1") + "|" + toolResultFor(t, reqs[1], "c2"); got != "counted|counted" {
		t.Errorf("first two results = %q", got)
	}
	want := "Not run: at most 2 tool calls are run per turn. Call it again in the next turn if you still need it."
	if got := toolResultFor(t, reqs[1], "c3"); got != want {
		t.Errorf("the third call got %q, want %q", got, want)
	}
	if ran.Load() != 2 {
		t.Errorf("the tool ran %d times, want 2", ran.Load())
	}
}

func TestToolCallsOfOneTurnRunInParallel(t *testing.T) {
	t.Parallel()
	b := newBarrier(2)
	h := newHarness(t, withTools(toolbox{"meet": b.meet()}), script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "a", Name: "test__meet", Arguments: `{"who":"a"}`},
			{ID: "b", Name: "test__meet", Arguments: `{"who":"b"}`},
		}},
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Both met."),
	))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := h.runCtx(ctx, "Meet.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	// Results come back in the model's order, each paired with its call.
	res1 := toolResults(reqs[1])
	if len(res1) != 2 || res1[0].ToolCallID != "a" || res1[0].Content != "met a" || res1[1].ToolCallID != "b" || res1[1].Content != "met b" {
		t.Errorf("tool results = %s, want met a then met b", dump(res1))
	}
}

func TestTwoFinalReportsInOneTurnKeepTheFirstAndTellTheSecondItWasIgnored(t *testing.T) {
	// Not parallel: it changes GOMAXPROCS. The model's order must decide
	// which report stands, not which goroutine happens to run first; on one
	// P the scheduler runs the goroutine started last first, so a
	// first-come capture shows there every time, and on all Ps sometimes.
	for i := range 20 {
		procs := runtime.NumCPU()
		if i%2 == 0 {
			procs = 1
		}
		prev := runtime.GOMAXPROCS(procs)
		h := newHarness(t, script(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "first", Name: FinalReportTool, Arguments: reportArgs(StatusSuccess, "First answer.")},
			{ID: "second", Name: FinalReportTool, Arguments: reportArgs(StatusPartial, "Second answer.")},
		}}))
		res := h.run("Answer.")
		runtime.GOMAXPROCS(prev)
		wantReport(t, res, StatusSuccess, SourceToolCall)
		if res.Report.Content != "First answer." {
			t.Fatalf("run %d: report = %q, want the first one", i, res.Report.Content)
		}
		wantTurns(t, res, 1)
		h.wantRequests(1)
		var results []string
		for _, m := range res.Messages {
			if m.Role == llm.RoleTool {
				results = append(results, m.ToolCallID+": "+m.Content)
			}
		}
		want := []string{"first: Final report captured.", "second: A final report was already delivered in this session; this one is ignored."}
		if !slices.Equal(results, want) {
			t.Fatalf("run %d: tool results = %q, want %q", i, results, want)
		}
		if n := len(h.events.ofKind(EventFinalReport)); n != 1 {
			t.Fatalf("run %d: %d final_report events", i, n)
		}
	}
}

func TestOnTheFinalTurnOnlyTheFinalReportMayBeCalled(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	box := toolbox{"echo": fn{textArgs, func(context.Context, map[string]any) (tools.Result, error) {
		ran.Add(1)
		return tools.Result{Content: "echo"}, nil
	}}}
	h := newHarness(t, withTools(box), withAgent(func(a *config.Agent) { a.MaxTurns = 1 }), script(
		llmtest.Call("test__echo", `{"text":"sneak"}`),
		llmtest.Report(config.FormatMarkdown, StatusPartial, "Out of turns."),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusPartial, SourceToolCall)
	wantTurns(t, res, 2)
	reqs := h.wantRequests(2)
	wantFinalOnly(t, reqs[0])
	wantFinalOnly(t, reqs[1])
	if got, want := lastToolResult(t, reqs[1]), "Only "+FinalReportTool+" can be called now. Deliver your answer with it."; got != want {
		t.Errorf("the model was told %q, want %q", got, want)
	}
	if ran.Load() != 0 {
		t.Errorf("a tool ran on the final turn")
	}
	if got := injected(t, reqs[0]); !slices.Equal(got, []string{maxTurnsFinalMessage}) {
		t.Errorf("first request injected %q", got)
	}
	if got := injected(t, reqs[1]); !slices.Equal(got, []string{maxTurnsFinalMessage, finalRetryMessage}) {
		t.Errorf("retry request injected %q", got)
	}
}

// batchAgent offers agent__batch beside the test tools.
func batchAgent(a *config.Agent) { a.Tools = []string{"test__*", BatchTool} }

func TestBatchRunsItsCallsInParallelAndJoinsTheResultsInOrder(t *testing.T) {
	t.Parallel()
	b := newBarrier(2)
	h := newHarness(t, withTools(toolbox{"meet": b.meet(), "echo": echo()}), withAgent(batchAgent), script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_batch", Name: BatchTool, Arguments: jsonArgs(map[string]any{"calls": []any{
			map[string]any{"tool": "test__meet", "parameters": map[string]any{"who": "a"}},
			map[string]any{"tool": "test__echo", "parameters": map[string]any{"text": "between"}},
			map[string]any{"tool": "test__meet", "parameters": map[string]any{"who": "b"}},
		}})}}},
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Batch done."),
	))
	// Sequential calls would wait at the barrier until the tool timeout:
	// the deadline makes such a regression fail rather than hang.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := h.runCtx(ctx, "Meet twice.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	wantOpenTurn(t, reqs[0], FinalReportTool, BatchTool, "test__echo", "test__meet")
	want := "=== [1] test__meet (ok) ===\nmet a\n=== [2] test__echo (ok) ===\necho: between\n=== [3] test__meet (ok) ===\nmet b"
	if got := toolResultFor(t, reqs[1], "call_batch"); got != want {
		t.Errorf("batch result:\n%s\nwant:\n%s", got, want)
	}

	// Every inner call is a tool event under the batch, and a child of the
	// batch's node in the operation tree.
	var inner []string
	for _, e := range h.events.ofKind(EventToolFinished) {
		switch e.Tool.Name {
		case FinalReportTool:
		case BatchTool:
			if e.Tool.Parent != "" {
				t.Errorf("the batch itself has parent %q", e.Tool.Parent)
			}
		default:
			if e.Tool.Parent != "call_batch" {
				t.Errorf("inner call %s has parent %q, want call_batch", e.Tool.Name, e.Tool.Parent)
			}
			inner = append(inner, e.Tool.ID)
		}
	}
	slices.Sort(inner)
	if !slices.Equal(inner, []string{"call_batch.1", "call_batch.2", "call_batch.3"}) {
		t.Errorf("inner call ids = %q", inner)
	}
	turn1 := res.Tree.Children[0]
	var batchOp *OpSnapshot
	for _, c := range turn1.Children {
		if c.Kind == "tool" && c.Name == BatchTool {
			batchOp = c
		}
	}
	if batchOp == nil || len(batchOp.Children) != 3 {
		t.Fatalf("turn 1 has no batch node with three children: %s", dump(turn1))
	}
}

func TestBatchRefusesNestingAndTheFinalReportAndReportsUnknownTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(batchAgent), script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_batch", Name: BatchTool, Arguments: jsonArgs(map[string]any{"calls": []any{
			map[string]any{"tool": "test__echo", "parameters": map[string]any{"text": "x"}},
			map[string]any{"tool": BatchTool, "parameters": map[string]any{"calls": []any{map[string]any{"tool": "test__echo", "parameters": map[string]any{"text": "y"}}}}},
			map[string]any{"tool": FinalReportTool, "parameters": map[string]any{"status": "success", "report_format": "markdown", "report_content": "Smuggled."}},
			map[string]any{"tool": "test__nope", "parameters": map[string]any{}},
			map[string]any{"tool": "test__echo", "parameters": map[string]any{"text": 5}},
		}})}}},
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "The real answer."),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if res.Report.Content != "The real answer." {
		t.Errorf("report = %q: a final report inside a batch was adopted", res.Report.Content)
	}
	wantTurns(t, res, 2)
	reqs := h.wantRequests(2)
	unknown := tools.UnknownToolMessage("test__nope", []tools.Tool{{Name: FinalReportTool}, {Name: BatchTool}, {Name: "test__echo"}}, nil)
	want := "=== [1] test__echo (ok) ===\necho: x\n" +
		"=== [2] agent__batch (error) ===\nagent__batch cannot be nested.\n" +
		"=== [3] agent__final_report (error) ===\nagent__final_report cannot be called inside agent__batch; call it on its own.\n" +
		"=== [4] test__nope (error) ===\n" + unknown + "\n" +
		"=== [5] test__echo (error) ===\n" + modelMessage(t, "test__echo", `{"text":5}`, textArgs)
	if got := toolResultFor(t, reqs[1], "call_batch"); got != want {
		t.Errorf("batch result:\n%s\nwant:\n%s", got, want)
	}
}

func TestBatchRefusesMoreCallsThanATurnAllows(t *testing.T) {
	t.Parallel()
	call := map[string]any{"tool": "test__echo", "parameters": map[string]any{"text": "x"}}
	h := newHarness(t, withTools(toolbox{"echo": echo()}),
		withAgent(func(a *config.Agent) { batchAgent(a); a.MaxToolCallsPerTurn = 2 }),
		script(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_batch", Name: BatchTool, Arguments: jsonArgs(map[string]any{"calls": []any{call, call, call}})}}},
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."),
		))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	if got, want := toolResultFor(t, reqs[1], "call_batch"), "agent__batch accepts at most 2 calls; you sent 3. Split them over several turns."; got != want {
		t.Errorf("the model was told %q, want %q", got, want)
	}
}

func TestBuiltinsAreOfferedOnlyWhenAGlobMatchesThem(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"echo": echo()}), script(
		llmtest.Call(BatchTool, `{"calls":[{"tool":"test__echo","parameters":{"text":"x"}}]}`),
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	wantOpenTurn(t, reqs[0], FinalReportTool, "test__echo")
	unknown := tools.UnknownToolMessage(BatchTool, []tools.Tool{{Name: FinalReportTool}, {Name: "test__echo"}}, nil)
	if got := lastToolResult(t, reqs[1]); got != unknown {
		t.Errorf("calling a built-in that is not offered got %q, want %q", got, unknown)
	}
	if strings.Contains(reqs[0].System, BatchTool) {
		t.Errorf("the system prompt mentions %s, which is not offered", BatchTool)
	}
}

func TestAnOversizedToolResultIsCutAndFlagged(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789", 100)
	h := newHarness(t, withToolOptions(tools.Options{MaxResultBytes: 200}), withTools(toolbox{"big": constant(tools.Result{Content: big})}),
		script(llmtest.Call("test__big", `{}`), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Read it.")))
	res := h.run("Read.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	got := lastToolResult(t, reqs[1])
	if len(got) > 200 || !strings.HasPrefix(got, "0123") || !strings.HasSuffix(got, "789") {
		t.Errorf("the model received %d bytes: %q", len(got), got)
	}
	fin := h.events.ofKind(EventToolFinished)
	if len(fin) == 0 || !fin[0].Tool.Oversize || fin[0].Tool.ResultBytes != len(got) || !fin[0].Tool.OK {
		t.Errorf("tool_finished = %+v", fin[0].Tool)
	}
}
