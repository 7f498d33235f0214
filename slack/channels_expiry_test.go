package slack_test

import (
	"maps"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack"
)

// refreshOften reads the channel directory again every few milliseconds.
func refreshOften(o *slack.Options) { o.ChannelRefresh = 20 * time.Millisecond }

// listFreely lifts conversations.list's budget, so that frequent refreshes
// are not paced to Slack's tier 2.
func listFreely(c *config.Config, _ *agent.Runner) {
	c.Slack.RateLimits = maps.Clone(config.DefaultSlackRateLimits)
	c.Slack.RateLimits["conversations.list"] = config.RateLimit{PerMinute: 600000, Burst: 1000}
}

func TestAChannelRenamedWhileTheBotMissedTheEventIsDeniedByItsNewNameAfterTheRefresh(t *testing.T) {
	t.Parallel()
	w := newWorldWith(t, refreshOften, denySecret, listFreely)
	w.srv.AddChannel("C0LOBBY", "lobby", true)
	w.model.Push(textReport("The lobby is answered."))
	ts := w.srv.Mention("C0LOBBY", asker, "what is in here?")
	w.answered("C0LOBBY", ts, "The lobby is answered") // the directory now holds #lobby

	// #lobby becomes #secret while the bot hears nothing of it: only a
	// refresh of the directory can tell.
	w.srv.RenameChannelQuietly("C0LOBBY", "secret")
	n := len(w.srv.Calls("conversations.list"))
	// The list after n was read after the rename; the one after it starts
	// once that list has become the directory.
	w.waitFor("a refresh begun after the rename to end", func() bool {
		return len(w.srv.Calls("conversations.list")) >= n+2
	})
	w.srv.Mention("C0LOBBY", asker, "and now?")
	w.waitFor("the rejection in the renamed channel", func() bool { return w.rejections(asker) == 1 })
	if !w.refusedBecause("channel denied by slack.routing.deny") {
		t.Fatal("the channel was not denied by its new name")
	}
	if n := len(w.model.Requests()); n != 1 {
		t.Fatalf("%d model calls; the question in the renamed channel reached the model", n)
	}
}

func TestAFailedChannelLookupIsNotRememberedAndTheNextRequestIsDeniedByName(t *testing.T) {
	t.Parallel()
	w := newWorld(t, denySecret)
	// A private channel the bot is not in is kept out of the directory;
	// the first conversations.info about it fails.
	w.srv.AddPrivateChannel("G0LATE", "secret", false)
	w.srv.Fail("conversations.info", "internal_error", 1)
	w.srv.Slash("G0LATE", asker, "/ask", "what is in here?")
	w.waitFor("the refusal of the channel whose name is unknown", func() bool {
		return w.refusedBecause("channel name unknown while slack.routing.deny has rules by name")
	})

	// The bot is invited: conversations.info now names the channel, and
	// the failure before must not stand for its name.
	w.srv.AddPrivateChannel("G0LATE", "secret", true)
	w.srv.Slash("G0LATE", asker, "/ask", "and now?")
	w.waitFor("the refusal by name", func() bool { return w.refusedBecause("channel denied by slack.routing.deny") })
	if n := len(w.srv.Calls("conversations.info")); n < 2 {
		t.Fatalf("conversations.info was called %d times; the failed lookup was remembered", n)
	}
	if n := len(w.model.Requests()); n != 0 {
		t.Fatalf("%d model calls in a denied channel", n)
	}
}
