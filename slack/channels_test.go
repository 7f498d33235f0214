package slack_test

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
)

// denySecret denies the channel named secret, by name.
var denySecret = bottest.WithConfig(func(c *config.Config) { c.Slack.Routing.Deny = []string{"#secret"} })

// rejections counts the rejection messages user was shown.
func rejections(w *bottest.World, user string) int {
	n := 0
	for _, e := range w.Slack.Ephemerals() {
		if e.User == user && e.Text == config.DefaultRejectionMessage {
			n++
		}
	}
	return n
}

func TestADenyRuleByNameFollowsTheNameThroughRenames(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, denySecret)
	w.Slack.AddChannel("C0SECRET", "secret", true)
	w.Slack.AddChannel("C0LOBBY", "lobby", true)
	w.Slack.Mention("C0SECRET", asker, "what is in here?")
	w.Eventually("the rejection in #secret", func() bool { return rejections(w, asker) == 1 })

	// #secret becomes #open, and #lobby takes the name #secret: the rule
	// follows the name, as the rename events tell it.
	w.Slack.RenameChannel("C0SECRET", "open")
	w.Slack.RenameChannel("C0LOBBY", "secret")
	w.Model.Push(llmtest.TextReport("The open channel is answered."))
	ts := w.Slack.Mention("C0SECRET", asker, "and now?")
	w.Answered("C0SECRET", ts, "The open channel is answered")
	w.Slack.Mention("C0LOBBY", asker, "and here?")
	w.Eventually("the rejection in the new #secret", func() bool { return rejections(w, asker) == 2 })
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls; only the question in the renamed channel should reach the model", n)
	}
}

func TestAChannelCreatedUnderADeniedNameIsDenied(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) { c.Slack.Routing.Deny = []string{"#secret-*"} }))
	w.Eventually("the channel list to be read", func() bool { return len(w.Slack.Calls("conversations.list")) > 0 })
	w.Slack.CreateChannel("C0NEW", "secret-plans", asker)
	// conversations.info now fails for it, so only the created event can
	// have named it.
	w.Slack.Fail("conversations.info", "internal_error", 100)
	w.Slack.AddChannel("C0NEW", "secret-plans", true) // the bot is invited
	w.Slack.Mention("C0NEW", asker, "what are the plans?")
	w.Eventually("the rejection", func() bool { return rejections(w, asker) == 1 })
	if !refusedBecause(w, "channel denied by slack.routing.deny") {
		t.Fatal("the channel was not denied by its name")
	}
	if n := len(w.Model.Requests()); n != 0 {
		t.Fatalf("%d model calls in a denied channel", n)
	}
}

func TestAChannelWhoseNameCannotBeResolvedIsDeniedWhileADenyRuleIsByName(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, denySecret)
	// A private channel the bot is not in: conversations.info and
	// conversations.list both keep it from the bot, so its name is
	// unknown. It may well be #secret.
	w.Slack.AddPrivateChannel("G0HIDDEN", "secret", false)
	w.Slack.Slash("G0HIDDEN", asker, "/ask", "what is in here?")
	w.Eventually("the refusal to be logged", func() bool {
		return refusedBecause(w, "channel name unknown while slack.routing.deny has rules by name")
	})
	// A DM is still answered: it has no name to resolve.
	w.Model.Push(llmtest.TextReport("In private."))
	dm, ts := w.Slack.DM(asker, "hello")
	w.Answered(dm, ts, "In private")
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls; the question from the unresolvable channel reached the model", n)
	}
}

func TestAChannelWhoseNameCannotBeResolvedIsAnsweredWhenEveryDenyRuleIsById(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) { c.Slack.Routing.Deny = []string{"C0SECRET"} }))
	w.Slack.AddPrivateChannel("G0HIDDEN", "hidden", false)
	w.Model.Push(llmtest.TextReport("Answered in your DM."))
	w.Slack.Slash("G0HIDDEN", asker, "/ask", "what is in here?")
	w.Eventually("the answer in the DM", func() bool {
		for _, m := range w.Slack.BotMessages("D" + asker) {
			if strings.Contains(bottest.MessageText(m), "Answered in your DM") {
				return true
			}
		}
		return false
	})
}

// refusedBecause reports whether a request was refused for why.
func refusedBecause(w *bottest.World, why string) bool {
	for _, e := range w.Logs.FilterMessage("request refused").All() {
		if e.ContextMap()["why"] == why {
			return true
		}
	}
	return false
}
