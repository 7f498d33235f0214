package playground_test

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestInTheBrowserAToolThatNeedsApprovalRunsOnceApproved mentions the bot
// whose tool (a REST POST under approval: writes) waits for a yes: the
// approval message shows in the thread with its buttons, and a click on
// Approve lets the call run and the answer come.
func TestInTheBrowserAToolThatNeedsApprovalRunsOnceApproved(t *testing.T) {
	t.Parallel()
	deploy := newDeployTool(t)
	w := newWorld(t, deploy.options...)
	w.Model.Respond(callThenSay("rest__deploy"))
	b := newBrowser(t, w.page.URL)

	b.say("composer", "@slackbot deploy the service")
	b.waitFor("the thread pane", `[data-testid="thread-pane"]:not([hidden])`)
	approve := thread + ` [data-action-id="slackbot_approve"]`
	b.waitFor("the approval message with its buttons", approve)
	b.waitFor("Deny beside it", thread+` [data-action-id="slackbot_deny"]`)
	b.waitFor("and Approve for this thread", thread+` [data-action-id="slackbot_approve_thread"]`)
	b.waitText("what the tool is", `[data-testid="thread-messages"]`, "Deploys the service.")
	if n := deploy.calls.Load(); n != 0 {
		t.Fatalf("the tool ran %d times before anyone approved it", n)
	}
	b.run("press Approve", chromedp.Click(chromedp.CSS(approve)))
	b.waitText("the answer with what the tool did", `[data-testid="thread-messages"]`, "The tool said:")
	b.waitText("the tool's result in it", `[data-testid="thread-messages"]`, "v42")
	b.waitFor("the approval message without its buttons", `[data-testid="thread-messages"]:not(:has([data-action-id="slackbot_approve"]))`)
	if n := deploy.calls.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
	b.noErrors()
}

// TestInTheBrowserAToolsQuestionIsAnsweredInAModal mentions the bot whose
// MCP tool asks for the booking's details: Answer opens the form as a
// dialog over the page, a name too short is refused under its field with
// what was typed kept, and the fixed form closes and answers the tool,
// whose answer uses the values.
func TestInTheBrowserAToolsQuestionIsAnsweredInAModal(t *testing.T) {
	t.Parallel()
	booking := newBookingTool(t)
	w := newWorld(t, booking.options...)
	w.Model.Respond(callThenSay("booking__book"))
	b := newBrowser(t, w.page.URL)

	b.say("composer", "@slackbot book me a table")
	answer := thread + ` [data-action-id="slackbot_elicit_open"]`
	b.waitFor("the tool's question with its Answer button", answer)
	b.run("press Answer", chromedp.Click(chromedp.CSS(answer)))
	const modal = `[data-testid="modal-host"] [data-testid="modal"]`
	b.waitFor("the form as a dialog", modal)
	b.waitText("the question in it", modal, "Who is the table for?")
	guests, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS(modal+` [name="field:guests"]`)))
	if err != nil || guests != "2" {
		t.Errorf("guests shows %q (%v), want the default 2", guests, err)
	}
	name := modal + ` [name="field:name"]`
	b.run("type a name too short and submit", chromedp.SendKeys(chromedp.CSS(name), "A"),
		chromedp.SetValue(chromedp.CSS(modal+` [name="field:guests"]`), "4"),
		chromedp.Click(chromedp.CSS(modal+` [data-testid="modal-submit"]`)))
	b.waitFor("the problem under the name", modal+` [data-block-id="field:name"] [data-testid="modal-error"]`)
	kept, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS(modal+` [name="field:guests"]`)))
	if err != nil || kept != "4" {
		t.Errorf("after the refusal guests shows %q (%v), want the 4 typed", kept, err)
	}
	b.run("fix the name, pick the garden and submit", chromedp.SendKeys(chromedp.CSS(name), "da"),
		chromedp.SetValue(chromedp.CSS(modal+` [name="field:table"]`), "1"),
		chromedp.Click(chromedp.CSS(modal+` [data-testid="modal-submit"]`)))
	b.waitFor("the dialog closed", `[data-testid="modal-host"]:empty`)
	b.waitText("the answer", `[data-testid="thread-messages"]`, "booking accept")
	got := booking.got()
	if len(got) != 1 {
		t.Fatalf("the tool got %d answers", len(got))
	}
	content, _ := json.Marshal(got[0].Content)
	if string(content) != `{"guests":4,"name":"Ada","table":"garden"}` {
		t.Errorf("the tool got %s", content)
	}
	b.noErrors()
}
