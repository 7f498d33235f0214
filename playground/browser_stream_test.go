package playground_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack/bottest"
)

// TestInTheBrowserAStreamedSessionShowsItsTimelineAndSlacksStopEndsAnother
// runs the playground as `slackbot dev` does (slack.display: auto): a
// mention streams its work as a timeline in which the held tool is seen
// running, then the answer ends the stream with its feedback buttons; a
// second mention works slowly, and Slack's Stop on its agent session ends
// it with "Stopped by @you".
func TestInTheBrowserAStreamedSessionShowsItsTimelineAndSlacksStopEndsAnother(t *testing.T) {
	t.Parallel()
	tool := newHeldTool(t)
	auto := bottest.WithConfig(func(c *config.Config) { c.Slack.Display = config.DisplayAuto })
	w := newWorld(t, append(tool.options, auto)...)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(string(r.Body), "take your time") {
			return slow(r)
		}
		return buildThenAnswer(r)
	})
	b := newBrowser(t, w.page.URL)

	b.say("composer", "@slackbot is the build green?")
	b.waitFor("the thread pane", `[data-testid="thread-pane"]:not([hidden])`)
	const tasks = `[data-testid="thread-messages"] [data-testid="stream"] [data-testid="task"]`
	b.waitText("the tool running in the timeline", tasks+`[data-status="in_progress"] .pg-task-title`, "Build status")
	b.waitText("what the tool was asked", tasks+`[data-status="in_progress"] [data-testid="task-details"]`, `job: "unit"`)
	b.waitFor("the model's turn done before it", tasks+`[data-status="complete"]`)
	b.waitFor("Slack's Stop on the working session", `[data-testid="agent-session"][data-status="processing"] [data-testid="agent-stop"]`)
	b.waitText("the session titled with the question", `[data-testid="agent-title"]`, "is the build green?")
	tool.release()

	ended := thread + ` [data-testid="stream"][data-open="false"]`
	b.waitFor("the answer ending the stream, with its feedback buttons", ended+` .bk-feedback-positive[data-action-id="slackbot_feedback"]`)
	b.waitText("the answer", ended, "The build is green.")
	js := fmt.Sprintf(`document.querySelectorAll(%q).length`, ended+` [data-testid="task"]:not([data-status="complete"])`)
	if unsettled, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](js)); err != nil || unsettled != 0 {
		t.Errorf("%d tasks not complete after the answer (%v)", unsettled, err)
	}
	b.waitFor("no Stop once the session answered", `[data-testid="agent-session"]:not([data-status="processing"]):not(:has([data-testid="agent-stop"]))`)

	b.say("composer", "@slackbot take your time")
	b.waitFor("the second session's stream", thread+` [data-testid="stream"][data-open="true"]`)
	stop := `[data-testid="agent-session"][data-status="processing"] [data-testid="agent-stop"]`
	b.waitFor("Slack's Stop on the second session", stop)
	b.waitText("the second session's title", `[data-testid="agent-title"]`, "take your time")
	w.Eventually("the second session to ask the model", func() bool {
		for _, r := range w.Model.Requests() {
			if strings.Contains(string(r.Body), "take your time") {
				return true
			}
		}
		return false
	})
	b.run("press Slack's Stop", chromedp.Click(chromedp.CSS(stop)))
	b.waitText("the stopped report", `[data-testid="thread-messages"]`, "Stopped by @you")
	b.waitFor("the stream no longer written", thread+` [data-testid="stream"][data-open="false"]`)
	b.waitFor("no Stop once stopped", `[data-testid="agent-session"]:not(:has([data-testid="agent-stop"]))`)
	// Slack halted the stream before the bot could settle its tasks: none
	// is drawn as still working.
	js = fmt.Sprintf(`document.querySelectorAll(%q).length`, thread+` [data-testid="task"]:is([data-status="in_progress"],[data-status="pending"]):not([data-halted="true"])`)
	if working, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](js)); err != nil || working != 0 {
		t.Errorf("%d tasks drawn as working after Slack's Stop (%v)", working, err)
	}
	if streams := w.Slack.Streams(playground.General); len(streams) != 2 || streams[1].StoppedBy != playground.User {
		t.Errorf("streams %+v; want the second halted by the person at the page", streams)
	}
	b.noErrors()
}
