package slack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// reacted reports whether the bot's "eyes" reaction is on the message at ts.
func reacted(w *bottest.World, ts string) bool {
	for _, r := range w.Slack.Reactions() {
		if r.TS == ts && r.Name == "eyes" {
			return true
		}
	}
	return false
}

// live reports whether a bot message in the thread still shows a Stop
// button.
func live(w *bottest.World, ts string) bool {
	for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
		if strings.Contains(string(m.Blocks), "slackbot_stop") {
			return true
		}
	}
	return false
}

// queuedBehind starts a session held by the model and a second one queued
// behind it (one session at a time), and returns the gate that releases
// the first, the second's thread and its "Queued" progress message.
func queuedBehind(t *testing.T, w *bottest.World) (*gate, string, emulator.Message) {
	t.Helper()
	g, ts := secondBehindFirst(t, w)
	var queued emulator.Message
	w.Eventually("the second question to show it is queued", func() bool {
		for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
			if strings.Contains(bottest.MessageText(m), "Queued") {
				queued = m
				return true
			}
		}
		return false
	})
	return g, ts, queued
}

var oneAtATime = bottest.WithConfig(func(c *config.Config) { c.Slack.MaxConcurrentSessions = 1 })

// Reactions only decorate: with their budget spent, a session still posts
// its progress message at once, and a finished session gives its slot
// back without waiting to take its reaction off.
func TestASpentReactionsBudgetDelaysNeitherProgressNorTheNextSession(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, oneAtATime, bottest.WithConfig(func(c *config.Config) {
		// Cosmetic calls keep half a burst: two reactions, one removal,
		// then a minute before the next.
		c.Slack.RateLimits = map[string]config.RateLimit{
			"reactions.add":    {PerMinute: 1, Burst: 4},
			"reactions.remove": {PerMinute: 1, Burst: 1},
		}
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	ts1 := w.Slack.Mention(channel, asker, "first")
	w.Answered(channel, ts1, "Answer to first")
	w.Eventually("the first question's reaction to go", func() bool { return !reacted(w, ts1) })
	// The second's reaction is added, but its removal finds no budget.
	ts2 := w.Slack.Mention(channel, asker, "second")
	w.Answered(channel, ts2, "Answer to second")
	// The third finds no budget for its reaction, and needs the second's
	// slot.
	ts3 := w.Slack.Mention(channel, asker, "third")
	w.Answered(channel, ts3, "Answer to third")
	if !reacted(w, ts2) {
		t.Fatal("the second question's reaction is gone: the removal did not wait for its budget, so the test proves nothing")
	}
	if reacted(w, ts3) {
		t.Fatal("the third question got a reaction with no budget for it")
	}
}

// Stopped while queued, during a 429: the note waits out Retry-After, and
// the reaction comes off the question.
func TestAQueuedSessionStoppedDuringA429IsStillConcluded(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, oneAtATime)
	g, ts, queued := queuedBehind(t, w)
	w.Eventually("the reaction on the second question", func() bool { return reacted(w, ts) })
	w.Slack.RateLimit("chat.update", 1, time.Second)
	if _, err := w.Slack.Click(channel, queued.TS, asker, "slackbot_stop", stopValue(t, queued)); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the progress message to say it was stopped, without its Stop button", func() bool {
		for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
			if m.TS == queued.TS {
				return strings.Contains(bottest.MessageText(m), "Stopped by") && !strings.Contains(string(m.Blocks), "slackbot_stop")
			}
		}
		return false
	})
	w.Eventually("the reaction to come off the stopped question", func() bool { return !reacted(w, ts) })
	g.open()
}

// A progress message Slack will not edit is deleted rather than left
// "Queued" with a live Stop button.
func TestAQueuedProgressMessageSlackWillNotEditIsDeleted(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, oneAtATime)
	g, ts, queued := queuedBehind(t, w)
	w.Slack.Fail("chat.update", "internal_error", 100)
	if _, err := w.Slack.Click(channel, queued.TS, asker, "slackbot_stop", stopValue(t, queued)); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the progress message to be deleted", func() bool { return !live(w, ts) })
	g.open()
}

// An answer that cannot replace its progress message is posted below it,
// and the progress message is settled.
func TestAnAnswerThatCannotReplaceItsProgressMessageIsPostedBelow(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	w.Slack.Fail("chat.update", "internal_error", 1000)
	ts := w.Slack.Mention(channel, asker, "question")
	w.Answered(channel, ts, "Answer to question")
	w.Eventually("the progress message to be settled", func() bool { return !live(w, ts) })
}

// secondBehindFirst asks a first question the model holds until the gate
// opens, then a second one, and returns the gate and the second's thread.
func secondBehindFirst(t *testing.T, w *bottest.World) (*gate, string) {
	t.Helper()
	g := newGate()
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	t.Cleanup(g.open)
	w.Slack.Mention(channel, asker, "first")
	w.Model.Wait(1)
	return g, w.Slack.Mention(channel, asker, "second")
}
