package slack_test

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/state/redistest"
)

// TestAnEventRedeliveredInAnotherEnvelopeIsAnsweredOnceOnRedis answers a
// mention on two replicas sharing Redis, then has Slack deliver its events
// again, each in an envelope of its own (which the emulator hands to the
// other replica): Redis's dedup, which is tagged with the envelope, must
// tell the redelivery from a retry of the first delivery and drop it.
func TestAnEventRedeliveredInAnotherEnvelopeIsAnsweredOnceOnRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "redeliver:")))
	w.Replica(bottest.OnStore(dialRedis(t, srv, "redeliver:")))
	w.Model.Push(llmtest.TextReport("Once."), llmtest.TextReport("Twice?!"))
	ts := w.Slack.Mention(channel, asker, "say it once")
	w.Answered(channel, ts, "Once")
	first := map[string]bool{}
	for _, e := range w.Slack.Envelopes() {
		if e.Type == "events_api" && e.Attempt == 0 && strings.Contains(string(e.Payload), `"`+ts+`"`) {
			first[e.ID] = true
		}
	}
	if len(first) == 0 {
		t.Fatal("the mention's envelopes were not found")
	}
	redelivered := map[string]bool{}
	for id := range first {
		again, err := w.Slack.Redeliver(id)
		if err != nil {
			t.Fatal(err)
		}
		if again == id {
			t.Fatalf("the redelivery of %s came in the same envelope", id)
		}
		redelivered[again] = true
	}
	// Each redelivery is recognised as a duplicate, on whichever replica
	// it reached.
	wait.Eventually(t, "the redelivered events to be recognised as duplicates", func() bool {
		return w.Logs.FilterMessage("duplicate event ignored").Len() >= len(redelivered)
	})
	// A later question is answered with the second scripted reply: the
	// redelivery did not take it.
	ts2 := w.Slack.Mention(channel, asker, "and again")
	w.Answered(channel, ts2, "Twice")
	if n := len(w.Model.Requests()); n != 2 {
		t.Fatalf("%d model calls for two questions: the redelivered mention was answered again", n)
	}
	if n := len(bottest.BotMessages(w.Slack.Thread(channel, ts))); n != 1 {
		t.Fatalf("the first thread holds %d bot messages, want its one answer", n)
	}
}
