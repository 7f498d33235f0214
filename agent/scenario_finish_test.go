package agent

import (
	"slices"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
)

// Scenarios of the other ways a run ends: the
// finish tool and a tool's terminate result.

// finishAgent offers finish beside the test tools.
func finishAgent(a *config.Agent) { a.Tools = []string{"test__*", FinishTool} }

func TestTheFinishToolEndsTheRunWithItsNote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		format  string
		args    string
		content string
	}{
		{"the note becomes the report", config.FormatMarkdown, `{"note":"All tickets closed."}`, "All tickets closed."},
		{"without a note the report says Finished", config.FormatMarkdown, `{}`, "Finished"},
		{"a blank note counts as none", config.FormatMarkdown, `{"note":"  "}`, "Finished"},
		{"in slack-block-kit the note goes to report_content", config.FormatSlackBlockKit, `{"note":"Deployed *v2*."}`, "Deployed *v2*."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(finishAgent), withFormat(tt.format),
				script(llmtest.Call(FinishTool, tt.args)))
			res := h.run("Close the tickets.")
			wantReport(t, res, StatusSuccess, SourceFinish)
			if res.Report.Content != tt.content || res.Report.Format != tt.format {
				t.Errorf("report = %q in %s, want %q in %s", res.Report.Content, res.Report.Format, tt.content, tt.format)
			}
			if res.Err != nil {
				t.Errorf("Err = %v", res.Err)
			}
			wantTurns(t, res, 1)
			reqs := h.wantRequests(1)
			wantOpenTurn(t, reqs[0], FinalReportTool, FinishTool, "test__echo")
		})
	}
}

func TestAFinalReportCapturedInTheSameTurnAsFinishStands(t *testing.T) {
	t.Parallel()
	for _, order := range []string{"report first", "finish first"} {
		t.Run(order, func(t *testing.T) {
			t.Parallel()
			calls := []llmtest.ToolCall{
				tc(FinalReportTool, reportArgs(StatusPartial, "The real report.")),
				tc(FinishTool, `{"note":"Just finished."}`),
			}
			if order == "finish first" {
				slices.Reverse(calls)
			}
			h := newHarness(t, withAgent(finishAgent), script(llmtest.Calls(calls...)))
			res := h.run("Go.")
			wantReport(t, res, StatusPartial, SourceToolCall)
			if res.Report.Content != "The real report." {
				t.Errorf("content = %q", res.Report.Content)
			}
			wantTurns(t, res, 1)
			h.wantRequests(1)
		})
	}
}

func TestFinishAfterARefusedReportEndsWithTheNote(t *testing.T) {
	t.Parallel()
	// A refused report followed by finish: the note is the answer, since no
	// report was ever captured.
	h := newHarness(t, withAgent(finishAgent), script(
		llmtest.Call(FinalReportTool, `{"status":"success"}`),
		llmtest.Call(FinishTool, `{"note":"Gave up on the report."}`),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceFinish)
	if res.Report.Content != "Gave up on the report." {
		t.Errorf("content = %q", res.Report.Content)
	}
	wantTurns(t, res, 2)
	h.wantRequests(2)
}

func TestFinishIsOfferedOnlyToAgentsThatEnableIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"echo": echo()}), script(
		llmtest.Call(FinishTool, `{"note":"done"}`),
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Reported properly."),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	wantOpenTurn(t, reqs[0], FinalReportTool, "test__echo")
	want := tools.UnknownToolMessage(FinishTool, []tools.Tool{{Name: FinalReportTool}, {Name: "test__echo"}}, nil)
	if got := lastToolResult(t, reqs[1]); got != want {
		t.Errorf("the model was told %q, want %q", got, want)
	}
}

func TestFinishIsTheWayOutUnderRestrictedOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withAgent(func(a *config.Agent) { finishAgent(a); restricted(2)(a) }), script(
		text("Nothing to do."),
		llmtest.Call(FinishTool, `{"note":"Nothing needed doing."}`),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceFinish)
	if res.Report.Content != "Nothing needed doing." {
		t.Errorf("content = %q", res.Report.Content)
	}
	reqs := h.wantRequests(2)
	if got := injected(t, reqs[1]); !slices.Equal(got, []string{config.DefaultRestrictionMessage}) {
		t.Errorf("injected %q", got)
	}
}

func TestATerminateResultFromAToolEndsTheRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		result  tools.Result
		content string
	}{
		{"with its note", tools.Result{Terminate: true, Content: "Ticket #7 closed."}, "Ticket #7 closed."},
		{"without a note it says Finished", tools.Result{Terminate: true}, "Finished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"close": constant(tt.result), "echo": echo()}), script(
				llmtest.Calls(tc("test__echo", `{"text":"before"}`), tc("test__close", `{}`)),
			))
			res := h.run("Close the ticket.")
			wantReport(t, res, StatusSuccess, SourceToolMessage)
			if res.Report.Content != tt.content {
				t.Errorf("content = %q, want %q", res.Report.Content, tt.content)
			}
			wantTurns(t, res, 1)
			h.wantRequests(1)
			if res.ToolCalls != 2 {
				t.Errorf("tool calls = %d: the other call of the turn should still run", res.ToolCalls)
			}
		})
	}
}

func TestATerminateResultInsideABatchEndsTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"close": constant(tools.Result{Terminate: true, Content: "Closed from a batch."})}),
		withAgent(func(a *config.Agent) { a.Tools = []string{"test__*", BatchTool} }),
		script(llmtest.Call(BatchTool, `{"calls":[{"tool":"test__close","parameters":{}}]}`)))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolMessage)
	if res.Report.Content != "Closed from a batch." {
		t.Errorf("content = %q", res.Report.Content)
	}
	h.wantRequests(1)
}
