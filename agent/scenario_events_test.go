package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// Scenarios of what a session tells the outside: events, the operation
// tree, usage and cost, logs — and never the API key.

// costOf is what testModel's prices make of a usage.
func costOf(in, out int) float64 {
	return float64(in)*priceInput/1e6 + float64(out)*priceOutput/1e6
}

func TestEventsTellTheSessionInOrderWithUsageCostAndSizes(t *testing.T) {
	t.Parallel()
	args := `{"text":"ping"}`
	h := newHarness(t, withTools(toolbox{"echo": echo()}), script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_echo", Name: "test__echo", Arguments: args}}, Usage: &llmtest.Usage{Input: 1000, Output: 50}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{tc(FinalReportTool, reportArgs(StatusSuccess, "Pong."))}, Usage: &llmtest.Usage{Input: 1200, Output: 80}},
	))
	res := h.run("Ping.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	events := h.events.all()

	// Order: started first, done last, one final report just before.
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, string(e.Kind))
	}
	n := len(events)
	if n < 3 || events[0].Kind != EventSessionStarted || events[n-1].Kind != EventSessionDone || events[n-2].Kind != EventFinalReport {
		t.Fatalf("event order = %v", kinds)
	}
	if got := len(h.events.ofKind(EventFinalReport)); got != 1 {
		t.Errorf("%d final_report events", got)
	}
	if events[n-2].Report != res.Report {
		t.Errorf("the final_report event does not carry the result's report")
	}
	for _, e := range events {
		if e.Session != res.SessionID || e.Agent != "tester" || e.Time.IsZero() {
			t.Errorf("%s event: session %q agent %q time %v", e.Kind, e.Session, e.Agent, e.Time)
		}
	}
	turns := h.events.ofKind(EventTurnStarted)
	if len(turns) != 2 || turns[0].Turn != 1 || turns[1].Turn != 2 || turns[0].Final || turns[1].Final {
		t.Errorf("turn_started events = %s", dump(turns))
	}

	// Model calls carry usage and cost.
	calls := h.events.ofKind(EventLLMCall)
	if len(calls) != 2 {
		t.Fatalf("%d llm_call events", len(calls))
	}
	for i, want := range []llm.Usage{{InputTokens: 1000, OutputTokens: 50}, {InputTokens: 1200, OutputTokens: 80}} {
		got := calls[i].LLM
		if got.Provider != "fake" || got.Model != testModel || got.Usage.InputTokens != want.InputTokens || got.Usage.OutputTokens != want.OutputTokens {
			t.Errorf("llm_call %d = %+v, want usage %+v", i+1, got, want)
		}
		if c := costOf(want.InputTokens, want.OutputTokens); math.Abs(got.Usage.CostUSD-c) > 1e-12 {
			t.Errorf("llm_call %d cost = %g, want %g", i+1, got.Usage.CostUSD, c)
		}
		if got.FinishReason != llm.FinishToolCalls || got.ToolCalls != 1 {
			t.Errorf("llm_call %d finish %s with %d tool calls", i+1, got.FinishReason, got.ToolCalls)
		}
	}
	total := costOf(2200, 130)
	if res.Usage.InputTokens != 2200 || res.Usage.OutputTokens != 130 || math.Abs(res.Usage.CostUSD-total) > 1e-12 {
		t.Errorf("result usage = %+v, want 2200/130 at %g", res.Usage, total)
	}
	done := events[n-1]
	if done.Usage == nil || *done.Usage != res.Usage || done.Result == nil {
		t.Fatalf("session_done = %+v", done)
	}
	if s := done.Result; s.Turns != 2 || s.ToolCalls != 2 || s.Status != StatusSuccess || s.Source != string(SourceToolCall) {
		t.Errorf("session summary = %+v", s)
	}
	if done.Notice != "report delivered" {
		t.Errorf("session_done notice = %q", done.Notice)
	}

	// Tool events carry names and sizes, never the contents.
	var echoDone *ToolInfo
	for _, e := range h.events.ofKind(EventToolFinished) {
		if e.Tool.Name == "test__echo" {
			echoDone = e.Tool
		}
	}
	if echoDone == nil {
		t.Fatal("no tool_finished event for test__echo")
	}
	if echoDone.ID != "call_echo" || echoDone.Namespace != "test" || !echoDone.OK || echoDone.ArgBytes != len(args) ||
		echoDone.ResultBytes != len("echo: ping") || echoDone.Failure != "" || echoDone.Parent != "" {
		t.Errorf("tool_finished = %+v", echoDone)
	}
	if started := h.events.ofKind(EventToolStarted); len(started) != 2 || started[0].Tool.Name != "test__echo" || started[0].Turn != 1 {
		t.Errorf("tool_started events = %s", dump(started))
	}

	// The operation tree: session → turns → model call and tools.
	tree := res.Tree
	if tree.Kind != "session" || tree.Name != "tester" || !tree.OK || tree.End.IsZero() || len(tree.Children) != 2 {
		t.Fatalf("tree root = %s %q ok=%v with %d children", tree.Kind, tree.Name, tree.OK, len(tree.Children))
	}
	wantShape := [][]string{{"llm fake/" + testModel, "tool test__echo"}, {"llm fake/" + testModel, "tool " + FinalReportTool}}
	for i, turn := range tree.Children {
		if turn.Kind != "turn" || turn.Name != fmt.Sprintf("turn %d", i+1) || !turn.OK || turn.End.Before(turn.Start) {
			t.Errorf("turn node %d = %s %q ok=%v", i+1, turn.Kind, turn.Name, turn.OK)
		}
		var shape []string
		for _, c := range turn.Children {
			shape = append(shape, c.Kind+" "+c.Name)
			if !c.OK || c.End.IsZero() {
				t.Errorf("node %s %q not finished ok", c.Kind, c.Name)
			}
		}
		if strings.Join(shape, ",") != strings.Join(wantShape[i], ",") {
			t.Errorf("turn %d children = %q, want %q", i+1, shape, wantShape[i])
		}
	}
	if events[0].Op.ID() != tree.ID || turns[0].Op.ID() != tree.Children[0].ID || turns[0].Op.Kind() != "turn" {
		t.Errorf("events do not point at the tree's nodes")
	}
}

func TestASyntheticReportFailsTheTreeAndSaysWhyInSessionDone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(llmtest.Reply{ErrorType: "invalid_api_key"}))
	res := h.run("Hello.")
	wantReport(t, res, StatusFailure, SourceSynthetic)
	if res.Tree.OK {
		t.Errorf("the tree of a synthetic report is OK")
	}
	done := h.events.ofKind(EventSessionDone)
	if len(done) != 1 || done[0].Notice != res.Report.Reason || done[0].Err != res.Err.Error() || done[0].Result.Source != string(SourceSynthetic) {
		t.Errorf("session_done = %s, want the reason in words and the error %q", dump(done), res.Err)
	}
	if turn := res.Tree.Children[0]; turn.OK || turn.Children[0].OK {
		t.Errorf("the failed turn and model call are marked OK")
	}
}

func TestTheAPIKeyAppearsInNoLogEventReportOrError(t *testing.T) {
	t.Parallel()
	leaky := "Incorrect API key provided: " + testKey + ". You can find your API key at https://platform.openai.com/account/api-keys."
	tests := []struct {
		name    string
		wire    wire
		replies []llmtest.Reply
	}{
		{"a session with tools, a failing tool and retries", wireOpenAI, []llmtest.Reply{
			{Status: 500, ErrorMessage: "upstream said " + testKey},
			llmtest.Calls(tc("test__echo", `{"text":"ping"}`), tc("test__fail", `{}`), tc("test__nope", `{}`)),
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Pong."),
		}},
		{"a refused key whose error message repeats it", wireOpenAI, []llmtest.Reply{{ErrorType: "invalid_api_key", ErrorMessage: leaky}}},
		{"a refused key over Anthropic", wireAnthropic, []llmtest.Reply{{ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key " + testKey}}},
		{"an Anthropic stream that breaks with the key in its error", wireAnthropic, []llmtest.Reply{
			{Text: "partial", StreamError: "api_error", ErrorMessage: "proxy saw " + testKey},
			{Text: "partial", StreamError: "api_error", ErrorMessage: "proxy saw " + testKey},
			{Text: "partial", StreamError: "api_error", ErrorMessage: "proxy saw " + testKey},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := []option{withTools(toolbox{"echo": echo(), "fail": failing("boom")}), script(tt.replies...)}
			if tt.wire == wireAnthropic {
				opts = append(opts, overAnthropic())
			}
			h := newHarness(t, opts...)
			log, buf := bufferLogger()
			h.runner.Log = log
			res := h.run("Ping.")
			if res.Report.Status == "" {
				t.Fatalf("no report")
			}
			reqs := h.srv.Requests()
			if len(reqs) == 0 || reqs[0].APIKey != testKey {
				t.Fatalf("the key was not sent to the model server")
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) < 3 || !strings.Contains(buf.String(), `"msg":"session_started"`) || !strings.Contains(buf.String(), `"msg":"session_done"`) {
				t.Errorf("the log lacks the session's lines:\n%s", buf.String())
			}
			for _, l := range lines {
				var v map[string]any
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Errorf("log line is not one JSON object: %s", l)
				}
				if strings.Contains(l, testKey) {
					t.Errorf("log line shows the key: %s", l)
				}
			}
			for _, e := range h.events.all() {
				b, err := json.Marshal(e)
				if err != nil {
					t.Fatalf("event %s does not marshal: %v", e.Kind, err)
				}
				if strings.Contains(string(b), testKey) || strings.Contains(fmt.Sprintf("%+v %+v %+v", e.LLM, e.Tool, e.Report), testKey) {
					t.Errorf("%s event shows the key: %s", e.Kind, b)
				}
			}
			rep, _ := json.Marshal(res.Report)
			if strings.Contains(string(rep), testKey) || strings.Contains(res.Report.Text(), testKey) {
				t.Errorf("the report shows the key: %s", rep)
			}
			if res.Err != nil && strings.Contains(fmt.Sprintf("%v %+v", res.Err, res.Err), testKey) {
				t.Errorf("the error shows the key: %v", res.Err)
			}
			msgs, _ := json.Marshal(res.Messages)
			if strings.Contains(string(msgs), testKey) {
				t.Errorf("the conversation shows the key")
			}
		})
	}
}

func TestHistoryAndSettingsReachTheModel(t *testing.T) {
	t.Parallel()
	temp, topP := 0.2, 0.9
	h := newHarness(t, withAgent(func(a *config.Agent) { a.Temperature, a.TopP = &temp, &topP }), script(llmtest.Report(config.FormatMarkdown, StatusSuccess, "Fine.")))
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "Hi, I am Ada."},
		{Role: llm.RoleAssistant, Content: "Hello Ada."},
	}
	res := h.runner.Run(t.Context(), Input{Agent: h.agent, History: history, Prompt: "What is my name?", Observer: h.events.observe, SessionID: "s-42"})
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if res.SessionID != "s-42" {
		t.Errorf("session id = %q", res.SessionID)
	}
	reqs := h.wantRequests(1)
	want := append(history, llm.Message{Role: llm.RoleUser, Content: "What is my name?"})
	got := reqs[0].Messages
	if len(got) != len(want) {
		t.Fatalf("messages = %s", dump(got))
	}
	for i := range want {
		if got[i].Role != want[i].Role || got[i].Content != want[i].Content {
			t.Errorf("message %d = %s %q, want %s %q", i, got[i].Role, got[i].Content, want[i].Role, want[i].Content)
		}
	}
	if reqs[0].Temperature == nil || *reqs[0].Temperature != temp || reqs[0].TopP == nil || *reqs[0].TopP != topP {
		t.Errorf("temperature/top_p = %v/%v", reqs[0].Temperature, reqs[0].TopP)
	}
	if len(res.Messages) < 4 || res.Messages[0].Role != llm.RoleSystem {
		t.Errorf("result messages do not start with the system prompt")
	}
}
