package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// Scenarios of routers: router__handoff-to ends the router's session and
// the run goes on with the destination, on the same request.

func TestARouterHandsTheRequestToItsDestinationWithItsNote(t *testing.T) {
	t.Parallel()
	use := func(r llmtest.Reply, in, out int) llmtest.Reply {
		r.Usage = &llmtest.Usage{Input: in, Output: out}
		return r
	}
	h := newTeam(t, []member{
		as(routerNamed("triage", "billing", "support"), use(handOffTo("billing", "They want a refund for March."), 300, 20)),
		as(agentNamed("billing"), use(llmtest.Report(config.FormatMarkdown, StatusSuccess, "Refunded."), 700, 40)),
		as(agentNamed("support")),
	})
	history := []llm.Message{{Role: llm.RoleUser, Content: "Hi, I was charged twice."}, {Role: llm.RoleAssistant, Content: "Sorry to hear that. What do you need?"}}
	ctx, cancel := context.WithTimeout(context.Background(), sessionWatchdog)
	defer cancel()
	res := h.runner.Run(ctx, Input{Agent: h.agent, History: history, Prompt: "My money back, please.", Observer: h.events.observe})
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if res.Report.Content != "Refunded." {
		t.Errorf("the answer = %q, want the destination's", res.Report.Content)
	}

	triage, billing := h.requestsOf("triage"), h.requestsOf("billing")
	if len(triage) != 1 || len(billing) != 1 {
		t.Fatalf("model calls: triage %d, billing %d; want 1 each (the router writes no report)", len(triage), len(billing))
	}
	wantOpenTurn(t, triage[0], FinalReportTool, HandoffTool)
	var schema struct {
		Properties struct {
			Agent struct {
				Enum []string `json:"enum"`
			} `json:"agent"`
		} `json:"properties"`
	}
	def := triage[0].Tools[1]
	if err := json.Unmarshal(def.Schema, &schema); err != nil || !slices.Equal(schema.Properties.Agent.Enum, []string{"billing", "support"}) {
		t.Errorf("the handoff schema = %s", def.Schema)
	}
	if !strings.Contains(def.Description, "billing: The billing of the team.") {
		t.Errorf("the handoff description does not describe the destinations: %q", def.Description)
	}
	msgs := billing[0].Messages
	if len(msgs) != 3 || msgs[0].Content != history[0].Content || msgs[1].Content != history[1].Content ||
		msgs[2].Content != "My money back, please.\n\nNote from the router: They want a refund for March." {
		t.Errorf("billing was sent %s", dump(msgs))
	}

	// One run: usage summed, the first session's id, billing under the handoff.
	if res.Usage.InputTokens != 1000 || res.Usage.OutputTokens != 60 || res.Turns != 2 {
		t.Errorf("usage %+v over %d turns, want 1000/60 over 2", res.Usage, res.Turns)
	}
	call := findOp(res.Tree, "tool", HandoffTool)
	if res.Tree.Name != "triage" || call == nil || !slices.Equal(opNames(call), []string{"session billing"}) {
		t.Errorf("tree:\n%s", dump(res.Tree))
	}
	if evs := h.events.eventsOf("triage"); len(evs) == 0 || res.SessionID != evs[0].Session {
		t.Errorf("the result's session id %q is not the router's", res.SessionID)
	}
	var routerDone *Event
	for _, e := range h.events.eventsOf("triage") {
		if e.Kind == EventFinalReport {
			t.Errorf("the router emitted a final report")
		}
		if e.Kind == EventSessionDone {
			routerDone = &e
		}
	}
	if routerDone == nil || routerDone.Notice != "handed off to billing" {
		t.Errorf("the router's session_done = %+v", routerDone)
	}
	for _, e := range h.events.eventsOf("billing") {
		if !slices.Equal(e.Path, []string{"triage", "billing"}) || e.Parent == "" {
			t.Errorf("billing %s event: path %v parent %q", e.Kind, e.Path, e.Parent)
		}
	}
}

func TestAHandoffToAnUnknownDestinationIsRefusedAndTheRouterCanFixIt(t *testing.T) {
	t.Parallel()
	bad := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_bad", Name: HandoffTool, Arguments: `{"agent":"sales"}`}}}
	h := newTeam(t, []member{
		as(routerNamed("triage", "billing", "support"), bad, handOffTo("support", "")),
		as(agentNamed("billing")),
		as(agentNamed("support"), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Restarted it.")),
	})
	res := h.run("It is broken.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	got := toolResultFor(t, h.requestsOf("triage")[1], "call_bad")
	if got != `There is no destination "sales". Hand off to one of: billing, support.` {
		t.Errorf("the refusal = %q", got)
	}
	// Without a message the prompt goes as it is.
	if msgs := h.requestsOf("support")[0].Messages; len(msgs) != 1 || msgs[0].Content != "It is broken." {
		t.Errorf("support was sent %s", dump(msgs))
	}
}

func TestHandoffsBetweenRoutersStopAtTheMaximumDepth(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(routerNamed("front", "desk"), handOffTo("desk", "")),
		as(routerNamed("desk", "expert"), llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_deep", Name: HandoffTool, Arguments: `{"agent":"expert"}`}}},
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Answered at the desk.")),
		as(agentNamed("expert"), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Expert answer.")),
	})
	h.runner.MaxDepth = 2
	res := h.run("Question.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if res.Report.Content != "Answered at the desk." {
		t.Errorf("the answer = %q, want the desk's own", res.Report.Content)
	}
	if n := len(h.requestsOf("expert")); n != 0 {
		t.Errorf("the expert ran at depth 3")
	}
	if got := toolResultFor(t, h.requestsOf("desk")[1], "call_deep"); !strings.Contains(got, "at most 2 deep") || !strings.Contains(got, "front → desk → expert") {
		t.Errorf("the refusal = %q", got)
	}
}

func TestARouterCycleIsRefused(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(routerNamed("front", "desk"), handOffTo("desk", "")),
		as(routerNamed("desk", "front"), llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_back", Name: HandoffTool, Arguments: `{"agent":"front"}`}}},
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Answered at the desk.")),
	})
	res := h.run("Question.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if got := toolResultFor(t, h.requestsOf("desk")[1], "call_back"); !strings.Contains(got, "front → desk → front") {
		t.Errorf("the refusal = %q", got)
	}
}

func TestASubAgentThatIsARouterAnswersThroughItsDestination(t *testing.T) {
	t.Parallel()
	h := newTeam(t, []member{
		as(agentNamed("planner", "triage"), askWithID("call_t", "triage", "Refund question."), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")),
		as(routerNamed("triage", "billing"), handOffTo("billing", "")),
		as(agentNamed("billing"), subReport(StatusSuccess, "Refund issued.")),
	})
	wantReport(t, h.run("Go."), StatusSuccess, SourceToolCall)
	if got := toolResultFor(t, h.requestsOf("planner")[1], "call_t"); got != "Refund issued." {
		t.Errorf("the planner read %q", got)
	}
	if !strings.Contains(h.requestsOf("billing")[0].System, `report_format "sub-agent"`) {
		t.Errorf("the destination of a nested router does not answer in the sub-agent format")
	}
}

func TestAHandoffInsideABatchIsRefused(t *testing.T) {
	t.Parallel()
	router := routerNamed("triage", "billing")
	router.Tools = []string{BatchTool}
	h := newTeam(t, []member{
		as(router, llmtest.Call(BatchTool, jsonArgs(map[string]any{"calls": []map[string]any{
			{"tool": HandoffTool, "parameters": map[string]any{"agent": "billing"}}}})), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Myself.")),
		as(agentNamed("billing")),
	})
	res := h.run("Go.")
	if res.Report.Content != "Myself." {
		t.Errorf("answer = %q", res.Report.Content)
	}
	if got := lastToolResult(t, h.requestsOf("triage")[1]); !strings.Contains(got, "cannot be called inside "+BatchTool) {
		t.Errorf("batch result = %q", got)
	}
}
