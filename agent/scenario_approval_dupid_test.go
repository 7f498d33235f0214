package agent

import (
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// Two calls of one turn under one id (a server that repeats or omits
// ids) are two calls to decide: the one denied does not run, whatever
// the other's decision.
func TestTwoCallsUnderOneIdAreDecidedEachOnItsOwn(t *testing.T) {
	t.Parallel()
	peer := &restPeer{}
	h := approvalHarness(t, peer,
		llmtest.Calls(llmtest.ToolCall{ID: "dup", Name: "rest__write", Arguments: `{"title":"deny-me"}`},
			llmtest.ToolCall{ID: "dup", Name: "rest__write", Arguments: `{"title":"ok"}`}),
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."))
	ap, w, _ := terminal(t)
	h.approver = ap
	answerOnWait(h, w, "n", "y")
	h.run("go") // the model service may refuse the repeated id afterwards: what ran is the point
	if peer.Writes() != 1 {
		t.Fatalf("%d writes ran; want the approved one only", peer.Writes())
	}
	if waits := h.events.ofKind(EventWaiting); len(waits) != 2 {
		t.Fatalf("%d waits; want one per call", len(waits))
	}
}
