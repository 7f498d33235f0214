package agent

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
)

// Scenarios of the limits that force the final turn: max_turns, the
// context guard, agent__task_status. A turn is one model call plus the tool
// calls it made.

func TestAModelThatNeverReportsGetsAFinalTurnAndOneRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tool   fn
		status string
		source Source
		// content is the report's content, or for a synthetic report its reason.
		content string
		err     error
	}{
		{"the last successful tool result is adopted as a partial report",
			echo(), StatusPartial, SourceToolMessage, "echo: 2", nil},
		{"without any successful tool the report is a synthetic failure that says why",
			failing("backend down"), StatusFailure, SourceSynthetic,
			"The model did not deliver a final report, even when asked for it on its last turn.", errNoReport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"work": tt.tool}), withAgent(func(a *config.Agent) { a.MaxTurns = 3 }), script(
				llmtest.Call("test__work", `{"text":"1"}`),
				llmtest.Call("test__work", `{"text":"2"}`),
				llmtest.Call("test__work", `{"text":"3"}`), // final turn: refused
				llmtest.Call("test__work", `{"text":"4"}`), // the retry: refused
			))
			res := h.run("Work for ever.")
			wantReport(t, res, tt.status, tt.source)
			if res.Report.Content != tt.content {
				t.Errorf("report content = %q, want %q", res.Report.Content, tt.content)
			}
			if tt.source == SourceSynthetic && res.Report.Reason != tt.content {
				t.Errorf("reason = %q, want %q", res.Report.Reason, tt.content)
			}
			if !errors.Is(res.Err, tt.err) || (tt.err == nil) != (res.Err == nil) {
				t.Errorf("Err = %v, want %v", res.Err, tt.err)
			}
			wantTurns(t, res, 4)
			reqs := h.wantRequests(4)
			wantOpenTurn(t, reqs[0], FinalReportTool, "test__work")
			wantOpenTurn(t, reqs[1], FinalReportTool, "test__work")
			wantFinalOnly(t, reqs[2])
			wantFinalOnly(t, reqs[3])
			if got := injected(t, reqs[1]); len(got) != 0 {
				t.Errorf("turn 2 injected %q", got)
			}
			if got := injected(t, reqs[2]); !slices.Equal(got, []string{maxTurnsFinalMessage}) {
				t.Errorf("final turn injected %q, want the max-turns message", got)
			}
			if got := injected(t, reqs[3]); !slices.Equal(got, []string{maxTurnsFinalMessage, finalRetryMessage}) {
				t.Errorf("retry injected %q, want the max-turns then the retry message", got)
			}
			finals := 0
			for _, e := range h.events.ofKind(EventTurnStarted) {
				if e.Final {
					finals++
				}
			}
			if finals != 2 {
				t.Errorf("%d turns started as final, want 2", finals)
			}
		})
	}
}

func TestAnEmptyFinalReportOnTheLastChanceIsNotAdopted(t *testing.T) {
	t.Parallel()
	// Even at the last chance, a report without an answer is refused; the
	// last tool result is better than nothing.
	h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(func(a *config.Agent) { a.MaxTurns = 2 }), script(
		llmtest.Call("test__echo", `{"text":"facts"}`),
		llmtest.Call(FinalReportTool, `{"status":"success","report_format":"markdown"}`),
		llmtest.Call(FinalReportTool, `{"status":"success","report_format":"markdown","report_content":""}`),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusPartial, SourceToolMessage)
	if res.Report.Content != "echo: facts" {
		t.Errorf("report content = %q", res.Report.Content)
	}
	wantTurns(t, res, 3)
	h.wantRequests(3)
}

func TestTaskStatusForcesTheFinalTurnOnlyWhenCompleteReadyAndDone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status TaskStatus
		forced bool
	}{
		{"completed, ready and no more tools forces it",
			TaskStatus{Status: "completed", Done: "all", Pending: "nothing", Now: "writing", ReadyForFinalReport: true, NeedToRunMoreTools: false}, true},
		{"completed but more tools to run does not",
			TaskStatus{Status: "completed", Done: "all", Pending: "check", Now: "checking", ReadyForFinalReport: true, NeedToRunMoreTools: true}, false},
		{"completed but not ready does not",
			TaskStatus{Status: "completed", Done: "most", Pending: "summary", Now: "thinking", ReadyForFinalReport: false, NeedToRunMoreTools: false}, false},
		{"in progress, even ready, does not",
			TaskStatus{Status: "in-progress", Done: "some", Pending: "rest", Now: "looking", ReadyForFinalReport: true, NeedToRunMoreTools: false}, false},
		{"starting does not",
			TaskStatus{Status: "starting", Done: "", Pending: "everything", Now: "planning"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"echo": echo()}),
				withAgent(func(a *config.Agent) { a.Tools = []string{"test__*", "agent__*"} }),
				script(llmtest.Call(TaskStatusTool, jsonArgs(tt.status)), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")))
			res := h.run("Go.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			wantTurns(t, res, 2)
			reqs := h.wantRequests(2)
			all := []string{FinalReportTool, TaskStatusTool, BatchTool, "test__echo"}
			wantOpenTurn(t, reqs[0], all...)
			wantResult := "Status recorded."
			if tt.forced {
				wantResult = "Status recorded. The task is complete: call " + FinalReportTool + " next."
				wantFinalOnly(t, reqs[1])
				if got := injected(t, reqs[1]); !slices.Equal(got, []string{taskDoneFinalMessage}) {
					t.Errorf("injected %q, want the task-done message", got)
				}
			} else {
				wantOpenTurn(t, reqs[1], all...)
				if got := injected(t, reqs[1]); len(got) != 0 {
					t.Errorf("injected %q into a turn that is not final", got)
				}
			}
			if got := lastToolResult(t, reqs[1]); got != wantResult {
				t.Errorf("the model was told %q, want %q", got, wantResult)
			}
			ev := h.events.ofKind(EventTaskStatus)
			if len(ev) != 1 || ev[0].Status == nil || !reflect.DeepEqual(*ev[0].Status, tt.status) {
				t.Errorf("task_status events = %s, want one with %+v", dump(ev), tt.status)
			}
			if len(ev) == 1 && ev[0].Turn != 1 {
				t.Errorf("task_status event on turn %d, want 1", ev[0].Turn)
			}
		})
	}
}

func TestTaskStatusWithBadArgumentsIsExplainedAndForcesNothing(t *testing.T) {
	t.Parallel()
	args := `{"status":"done","ready_for_final_report":"yes"}`
	h := newHarness(t, withAgent(func(a *config.Agent) { a.Tools = []string{TaskStatusTool} }),
		script(llmtest.Call(TaskStatusTool, args), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	_, want := tools.ParseArguments(TaskStatusTool, args, builtinSchemas[TaskStatusTool])
	if got := lastToolResult(t, reqs[1]); got != want || want == "" {
		t.Errorf("the model was told:\n%s\nwant:\n%s", got, want)
	}
	wantOpenTurn(t, reqs[1], FinalReportTool, TaskStatusTool)
	if n := len(h.events.ofKind(EventTaskStatus)); n != 0 {
		t.Errorf("%d task_status events for a refused call", n)
	}
}

// smallWindow leaves a budget of 2800 tokens: the prompt and the tools fit,
// a few thousand words do not.
func smallWindow(a *config.Agent) {
	a.ContextWindow, a.MaxOutputTokens, a.ContextBuffer = 4000, 1000, 200
}

func TestTheContextGuardForcesTheFinalTurn(t *testing.T) {
	t.Parallel()
	words := strings.Repeat("lorem ipsum dolor sit amet ", 1000)

	t.Run("on the first turn when the prompt does not fit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(smallWindow),
			script(llmtest.Report(config.FormatMarkdown, StatusPartial, "Too much to read.")))
		res := h.run("Summarise: " + words)
		wantReport(t, res, StatusPartial, SourceToolCall)
		wantTurns(t, res, 1)
		reqs := h.wantRequests(1)
		wantFinalOnly(t, reqs[0])
		if got := injected(t, reqs[0]); !slices.Equal(got, []string{contextFinalMessage}) {
			t.Errorf("injected %q, want the context message", got)
		}
		if !h.events.hasNotice("final turn: " + contextFinalMessage) {
			t.Errorf("no notice of the forced final turn: %q", h.events.notices())
		}
	})

	t.Run("on the next turn when a tool result fills the window", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, withTools(toolbox{"read": constant(tools.Result{Content: words}), "echo": echo()}), withAgent(smallWindow),
			script(llmtest.Call("test__read", `{}`), llmtest.Report(config.FormatMarkdown, StatusPartial, "Read part of it.")))
		res := h.run("Read the file.")
		wantReport(t, res, StatusPartial, SourceToolCall)
		wantTurns(t, res, 2)
		reqs := h.wantRequests(2)
		wantOpenTurn(t, reqs[0], FinalReportTool, "test__echo", "test__read")
		wantFinalOnly(t, reqs[1])
		if got := injected(t, reqs[1]); !slices.Equal(got, []string{contextFinalMessage}) {
			t.Errorf("injected %q, want the context message", got)
		}
	})

	t.Run("and a model that still does not report gets a synthetic failure", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, withAgent(smallWindow), script(text(""), text("")))
		res := h.run("Summarise: " + words)
		wantReport(t, res, StatusFailure, SourceSynthetic)
		if !errors.Is(res.Err, errNoReport) {
			t.Errorf("Err = %v", res.Err)
		}
		reqs := h.wantRequests(2)
		if got := injected(t, reqs[1]); !slices.Equal(got, []string{contextFinalMessage, finalRetryMessage}) {
			t.Errorf("injected %q", got)
		}
	})
}
