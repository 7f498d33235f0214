package slack_test

import (
	"context"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/telemetry"
	"github.com/slackbot/slackbot/telemetry/telemetrytest"
)

// Each decision on a tool call is counted by decision and recorded on the
// trace of the turn that waited.
func TestEveryApprovalDecisionIsCountedAndTraced(t *testing.T) {
	t.Parallel()
	metrics := telemetry.NewMetrics()
	receiver := telemetrytest.NewReceiver(t)
	tracer, err := telemetry.NewTracer(config.Tracing{Endpoint: receiver.URL(), ServiceName: "slackbot-test"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tracer.Shutdown(context.Background()) })
	w, _, _ := approvalWorld(t, time.Minute, bottest.WithBot(func(o *slack.Options) { o.Metrics, o.Tracer = metrics, tracer }))
	url := telemetrytest.Serve(t, metrics, w.Bots[0].ReadyCheck())
	w.Model.Push(llmtest.Calls(llmtest.ToolCall{Name: "notes__delete_note", Arguments: `{"id":"1"}`},
		llmtest.ToolCall{Name: "notes__add_note", Arguments: `{"id":"2"}`}), llmtest.TextReport("Half."))
	ts := w.Slack.Mention(channel, asker, "both")
	m := awaitApproval(w, ts, 1)
	values := buttonValues(t, m)
	click(t, w, m, asker, "slackbot_approve", values[0])
	click(t, w, m, asker, "slackbot_deny", values[1])
	w.Answered(channel, ts, "Half.")
	wait.Eventually(t, "both decisions to be counted", func() bool {
		f := telemetrytest.Scrape(t, url+"/metrics")
		approved, _ := f.Value("slackbot_tool_approvals_total", "decision", "approved")
		denied, _ := f.Value("slackbot_tool_approvals_total", "decision", "denied")
		return approved == 1 && denied == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tracer.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tool approval", "slackbot.approval.decision", "notes__add_note denied by " + asker} {
		if !receiver.Contains(want) {
			t.Errorf("the trace does not carry %q", want)
		}
	}
}
