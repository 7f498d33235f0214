package agent

import (
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
)

// A model steered by what it read tries every other road to a call that
// needs approval: none of them runs it without a person's yes.
func TestNoRoadAroundAnApproval(t *testing.T) {
	t.Parallel()
	done := llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")

	cases := []struct {
		name    string
		replies []llmtest.Reply
		setup   func(h *harness)
		// waits is how many times a person is asked (each answered "n");
		// orMore when the turn's order may ask once more.
		waits  int
		orMore bool
	}{
		{name: "a call inside agent__batch waits and a denial holds", waits: 1,
			replies: []llmtest.Reply{llmtest.Call(BatchTool, `{"calls":[{"tool":"rest__read","parameters":{}},{"tool":"rest__write","parameters":{"title":"x"}}]}`), done},
			setup:   func(h *harness) { h.agent.Tools = []string{"rest__*", BatchTool} }},
		{name: "the tool's name in another case or namespace reaches nothing", waits: 0,
			replies: []llmtest.Reply{llmtest.Calls(
				llmtest.ToolCall{Name: "REST__WRITE", Arguments: `{}`},
				llmtest.ToolCall{Name: "rest__Write", Arguments: `{}`},
				llmtest.ToolCall{Name: "write", Arguments: `{}`},
				llmtest.ToolCall{Name: "mcp__rest__write", Arguments: `{}`}), done}},
		{name: "the denied call retried with its keys reordered, spaced or escaped is refused without asking", waits: 1,
			replies: []llmtest.Reply{
				llmtest.Call("rest__write", `{"title":"x","n":1}`),
				llmtest.Calls(
					llmtest.ToolCall{Name: "rest__write", Arguments: "{\n \"n\" : 1.0 ,\t\"title\":\"\\u0078\"}"},
					llmtest.ToolCall{Name: "rest__write", Arguments: ` {"n":1e0,"title":"x"} `}),
				done},
			setup: func(h *harness) {}},
		{name: "a tool found by tools__search waits when called", waits: 1,
			replies: []llmtest.Reply{llmtest.Call(SearchTool, `{"query":"writes things"}`), llmtest.Call("rest__write", `{"title":"x"}`), done},
			setup:   func(h *harness) { h.agent.ToolSearch = config.ToolSearchAlways }},
		{name: "a tool found by tools__search and called in the same turn waits", waits: 1, orMore: true,
			replies: []llmtest.Reply{llmtest.Calls(
				llmtest.ToolCall{Name: SearchTool, Arguments: `{"query":"writes things"}`},
				llmtest.ToolCall{Name: "rest__write", Arguments: `{"title":"x"}`}),
				llmtest.Call("rest__write", `{"title":"y"}`), done},
			setup: func(h *harness) { h.agent.ToolSearch = config.ToolSearchAlways }},
		{name: "a sub-agent asked to retry a call its parent had denied is asked about again and denied", waits: 2,
			replies: []llmtest.Reply{
				llmtest.Call("rest__write", `{"title":"x"}`),
				llmtest.Call("agent__helper", `{"prompt":"write x"}`),
				llmtest.Call("rest__write", `{"title":"x"}`),
				llmtest.Report(config.FormatSubAgent, StatusSuccess, "tried"),
				done},
			setup: func(h *harness) {
				helper := testAgent()
				helper.Name, helper.Tools = "helper", []string{"rest__*"}
				h.agent.Agents = []string{"helper"}
				h.runner.Agents = map[string]*config.Agent{"helper": helper}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			peer := &restPeer{}
			h := approvalHarness(t, peer, tc.replies...)
			if tc.setup != nil {
				tc.setup(h)
			}
			ap, w, _ := terminal(t)
			h.approver = ap
			answers := make([]string, tc.waits+2)
			for i := range answers {
				answers[i] = "n"
			}
			answerOnWait(h, w, answers...)
			h.run("go")
			if peer.Writes() != 0 {
				t.Fatalf("%d writes ran without approval", peer.Writes())
			}
			if got := len(h.events.ofKind(EventWaiting)); got != tc.waits && (!tc.orMore || got != tc.waits+1) {
				t.Fatalf("asked %d times, want %d", got, tc.waits)
			}
		})
	}
}

// A cached result of a write never stands in for a call no one approved:
// the same call again is asked about again, and its denial holds.
func TestACachedWriteIsAskedAboutAgain(t *testing.T) {
	t.Parallel()
	peer := &restPeer{}
	h := newHarness(t, withTools(cachedWrites(t, peer)), withAgent(func(a *config.Agent) { a.Tools = []string{"rest__*"} }),
		script(llmtest.Call("rest__write", `{"title":"x"}`), llmtest.Call("rest__write", `{"title":"x"}`),
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")))
	ap, w, _ := terminal(t)
	h.approver = ap
	answerOnWait(h, w, "y", "n")
	h.run("go")
	reqs := h.wantRequests(3)
	if got := lastToolResult(t, reqs[2]); got != deniedMessage {
		t.Fatalf("the second, denied call gave the model %q", got)
	}
	if peer.Writes() != 1 || len(h.events.ofKind(EventWaiting)) != 2 {
		t.Fatalf("writes %d, waits %d", peer.Writes(), len(h.events.ofKind(EventWaiting)))
	}
}

// cachedWrites is approvalTools with results cached for a minute.
func cachedWrites(t *testing.T, peer *restPeer) tools.Provider {
	t.Helper()
	return approvalToolsWith(t, peer, config.Duration(time.Minute))
}
