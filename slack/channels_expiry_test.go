package slack_test

import (
	"maps"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
)

// refreshOften reads the channel directory again every few milliseconds.
var refreshOften = bottest.WithBot(func(o *slack.Options) { o.ChannelRefresh = 20 * time.Millisecond })

// listFreely lifts conversations.list's budget, so that frequent refreshes
// are not paced to Slack's tier 2.
var listFreely = bottest.WithConfig(func(c *config.Config) {
	c.Slack.RateLimits = maps.Clone(config.DefaultSlackRateLimits)
	c.Slack.RateLimits["conversations.list"] = config.RateLimit{PerMinute: 600000, Burst: 1000}
})

func TestAChannelRenamedWhileTheBotMissedTheEventIsDeniedByItsNewNameAfterTheRefresh(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, refreshOften, denySecret, listFreely)
	w.Slack.AddChannel("C0LOBBY", "lobby", true)
	w.Model.Push(llmtest.TextReport("The lobby is answered."))
	ts := w.Slack.Mention("C0LOBBY", asker, "what is in here?")
	w.Answered("C0LOBBY", ts, "The lobby is answered") // the directory now holds #lobby

	// #lobby becomes #secret while the bot hears nothing of it: only a
	// refresh of the directory can tell.
	w.Slack.RenameChannelQuietly("C0LOBBY", "secret")
	n := len(w.Slack.Calls("conversations.list"))
	// The list after n was read after the rename; the one after it starts
	// once that list has become the directory.
	w.Eventually("a refresh begun after the rename to end", func() bool {
		return len(w.Slack.Calls("conversations.list")) >= n+2
	})
	w.Slack.Mention("C0LOBBY", asker, "and now?")
	w.Eventually("the rejection in the renamed channel", func() bool { return rejections(w, asker) == 1 })
	if !refusedBecause(w, "channel denied by slack.routing.deny") {
		t.Fatal("the channel was not denied by its new name")
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls; the question in the renamed channel reached the model", n)
	}
}

func TestAFailedChannelLookupIsNotRememberedAndTheNextRequestIsDeniedByName(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, denySecret)
	// A private channel the bot is not in is kept out of the directory;
	// the first conversations.info about it fails.
	w.Slack.AddPrivateChannel("G0LATE", "secret", false)
	w.Slack.Fail("conversations.info", "internal_error", 1)
	w.Slack.Slash("G0LATE", asker, "/ask", "what is in here?")
	w.Eventually("the refusal of the channel whose name is unknown", func() bool {
		return refusedBecause(w, "channel name unknown while slack.routing.deny has rules by name")
	})

	// The bot is invited: conversations.info now names the channel, and
	// the failure before must not stand for its name.
	w.Slack.AddPrivateChannel("G0LATE", "secret", true)
	w.Slack.Slash("G0LATE", asker, "/ask", "and now?")
	w.Eventually("the refusal by name", func() bool { return refusedBecause(w, "channel denied by slack.routing.deny") })
	if n := len(w.Slack.Calls("conversations.info")); n < 2 {
		t.Fatalf("conversations.info was called %d times; the failed lookup was remembered", n)
	}
	if n := len(w.Model.Requests()); n != 0 {
		t.Fatalf("%d model calls in a denied channel", n)
	}
}
