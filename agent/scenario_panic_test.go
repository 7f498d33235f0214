package agent

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// Scenarios of panics during tool calls: whether the tool itself panics
// or the bot does while the call runs (here an observer, as a playground's
// side panel is), the call that panicked becomes an error result for the
// model, the other calls keep their results, and the session goes on.

// panicWhile returns an observer that panics when the call to tool starts.
func panicWhile(tool string) Observer {
	return func(e Event) {
		if e.Kind == EventToolStarted && e.Tool.Name == tool {
			panic("a bug while " + tool + " runs")
		}
	}
}

// panicOnEvery returns an observer that panics on every event of the call
// to tool, the end it is told of after a panic included.
func panicOnEvery(tool string) Observer {
	return func(e Event) {
		if e.Tool != nil && e.Tool.Name == tool {
			panic("a bug on every event of " + tool)
		}
	}
}

// panicCases are the ways a call to test__boom panics.
var panicCases = []struct {
	name  string
	boom  fn
	watch Observer
	// logged is the log line the panic leaves, "" when the tool's own
	// crash is reported through its result alone.
	logged string
	// says is what the model is told about the call.
	says string
}{
	{"the tool itself panics", panicking("kaboom"), nil, "", "tool test__boom crashed: kaboom"},
	{"the bot panics while the call runs", echo(), panicWhile("test__boom"), "tool call panicked", "the bot hit an internal error"},
	{"the bot panics on every event of the call", echo(), panicOnEvery("test__boom"), "tool call panicked", "the bot hit an internal error"},
}

func TestAPanicInOneCallOfABatchBecomesThatCallsErrorWhileTheOtherCallsAndTheSessionGoOn(t *testing.T) {
	t.Parallel()
	for _, c := range panicCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"echo": echo(), "boom": c.boom}), withAgent(batchAgent), script(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_batch", Name: BatchTool, Arguments: jsonArgs(map[string]any{"calls": []any{
					map[string]any{"tool": "test__echo", "parameters": map[string]any{"text": "before"}},
					map[string]any{"tool": "test__boom", "parameters": map[string]any{"text": "boom"}},
					map[string]any{"tool": "test__echo", "parameters": map[string]any{"text": "after"}},
				}})}}},
				llmtest.Report(config.FormatMarkdown, StatusSuccess, "Two of three answered."),
			))
			log, buf := bufferLogger()
			h.runner.Log, h.watch = log, c.watch
			res := h.run("Ask all three.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			if res.Err != nil {
				t.Errorf("the session ended with an error: %v", res.Err)
			}
			reqs := h.wantRequests(2)
			got := toolResultFor(t, reqs[1], "call_batch")
			for _, want := range []string{
				"=== [1] test__echo (ok) ===\necho: before\n",
				"=== [2] test__boom (error) ===\n",
				"=== [3] test__echo (ok) ===\necho: after",
				c.says,
			} {
				if !strings.Contains(got, want) {
					t.Errorf("the batch's result lacks %q:\n%s", want, got)
				}
			}
			wantPanicLogged(t, buf.String(), c.logged)
			wantCallFinished(t, h, res, "call_batch.2")
		})
	}
}

func TestAPanicInATurnsOnlyToolCallBecomesItsErrorAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	for _, c := range panicCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"boom": c.boom}), withAgent(func(a *config.Agent) { a.Tools = []string{"test__*"} }), script(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_boom", Name: "test__boom", Arguments: `{"text":"boom"}`}}},
				llmtest.Report(config.FormatMarkdown, StatusSuccess, "Answered without it."),
			))
			log, buf := bufferLogger()
			h.runner.Log, h.watch = log, c.watch
			res := h.run("Ask it.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			if res.Err != nil {
				t.Errorf("the session ended with an error: %v", res.Err)
			}
			wantTurns(t, res, 2)
			reqs := h.wantRequests(2)
			results := toolResults(reqs[1])
			if len(results) != 1 || results[0].ToolCallID != "call_boom" || !strings.Contains(results[0].Content, c.says) {
				t.Errorf("the model was not told the call failed; tool results: %s", dump(results))
			}
			wantPanicLogged(t, buf.String(), c.logged)
			wantCallFinished(t, h, res, "call_boom")
		})
	}
}

// wantPanicLogged checks that the log holds line once, with the stack
// (nothing when line is "").
func wantPanicLogged(t *testing.T, logs, line string) {
	t.Helper()
	if line == "" {
		return
	}
	if n := strings.Count(logs, `"msg":"`+line+`"`); n != 1 {
		t.Errorf("%q logged %d times, want once:\n%s", line, n, logs)
	}
	if !strings.Contains(logs, `"stack":"goroutine`) {
		t.Errorf("the panic's stack is not in the log:\n%s", logs)
	}
}

// wantCallFinished checks that the call with id is reported finished, as
// failed, and that the session's tree holds no node still running: no
// view shows the call running after it panicked.
func wantCallFinished(t *testing.T, h *harness, res *Result, id string) {
	t.Helper()
	var finished []*ToolInfo
	for _, e := range h.events.ofKind(EventToolFinished) {
		if e.Tool.ID == id {
			finished = append(finished, e.Tool)
		}
	}
	if len(finished) != 1 || finished[0].OK {
		t.Errorf("call %s: %d finished events (want one, failed): %s", id, len(finished), dump(finished))
	}
	walk(res.Tree, func(s *OpSnapshot) {
		if s.End.IsZero() {
			t.Errorf("the %s node %s is still running in the session's final tree", s.Kind, s.Name)
		}
	})
}
