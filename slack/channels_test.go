package slack_test

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
)

// denySecret denies the channel named secret, by name.
func denySecret(c *config.Config, _ *agent.Runner) { c.Slack.Routing.Deny = []string{"#secret"} }

// rejections counts the rejection messages user was shown.
func (w *world) rejections(user string) int {
	n := 0
	for _, e := range w.srv.Ephemerals() {
		if e.User == user && e.Text == config.DefaultRejectionMessage {
			n++
		}
	}
	return n
}

func TestADenyRuleByNameFollowsTheNameThroughRenames(t *testing.T) {
	t.Parallel()
	w := newWorld(t, denySecret)
	w.srv.AddChannel("C0SECRET", "secret", true)
	w.srv.AddChannel("C0LOBBY", "lobby", true)
	w.srv.Mention("C0SECRET", asker, "what is in here?")
	w.waitFor("the rejection in #secret", func() bool { return w.rejections(asker) == 1 })

	// #secret becomes #open, and #lobby takes the name #secret: the rule
	// follows the name, as the rename events tell it.
	w.srv.RenameChannel("C0SECRET", "open")
	w.srv.RenameChannel("C0LOBBY", "secret")
	w.model.Push(textReport("The open channel is answered."))
	ts := w.srv.Mention("C0SECRET", asker, "and now?")
	w.answered("C0SECRET", ts, "The open channel is answered")
	w.srv.Mention("C0LOBBY", asker, "and here?")
	w.waitFor("the rejection in the new #secret", func() bool { return w.rejections(asker) == 2 })
	if n := len(w.model.Requests()); n != 1 {
		t.Fatalf("%d model calls; only the question in the renamed channel should reach the model", n)
	}
}

func TestAChannelCreatedUnderADeniedNameIsDenied(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) { c.Slack.Routing.Deny = []string{"#secret-*"} })
	w.waitFor("the channel list to be read", func() bool { return len(w.srv.Calls("conversations.list")) > 0 })
	w.srv.CreateChannel("C0NEW", "secret-plans", asker)
	// conversations.info now fails for it, so only the created event can
	// have named it.
	w.srv.Fail("conversations.info", "internal_error", 100)
	w.srv.AddChannel("C0NEW", "secret-plans", true) // the bot is invited
	w.srv.Mention("C0NEW", asker, "what are the plans?")
	w.waitFor("the rejection", func() bool { return w.rejections(asker) == 1 })
	if !w.refusedBecause("channel denied by slack.routing.deny") {
		t.Fatal("the channel was not denied by its name")
	}
	if n := len(w.model.Requests()); n != 0 {
		t.Fatalf("%d model calls in a denied channel", n)
	}
}

func TestAChannelWhoseNameCannotBeResolvedIsDeniedWhileADenyRuleIsByName(t *testing.T) {
	t.Parallel()
	w := newWorld(t, denySecret)
	// A private channel the bot is not in: conversations.info and
	// conversations.list both keep it from the bot, so its name is
	// unknown. It may well be #secret.
	w.srv.AddPrivateChannel("G0HIDDEN", "secret", false)
	w.srv.Slash("G0HIDDEN", asker, "/ask", "what is in here?")
	w.waitFor("the refusal to be logged", func() bool {
		return w.refusedBecause("channel name unknown while slack.routing.deny has rules by name")
	})
	// A DM is still answered: it has no name to resolve.
	w.model.Push(textReport("In private."))
	dm, ts := w.srv.DM(asker, "hello")
	w.answered(dm, ts, "In private")
	if n := len(w.model.Requests()); n != 1 {
		t.Fatalf("%d model calls; the question from the unresolvable channel reached the model", n)
	}
}

func TestAChannelWhoseNameCannotBeResolvedIsAnsweredWhenEveryDenyRuleIsById(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) { c.Slack.Routing.Deny = []string{"C0SECRET"} })
	w.srv.AddPrivateChannel("G0HIDDEN", "hidden", false)
	w.model.Push(textReport("Answered in your DM."))
	w.srv.Slash("G0HIDDEN", asker, "/ask", "what is in here?")
	w.waitFor("the answer in the DM", func() bool {
		for _, m := range w.srv.BotMessages("D" + asker) {
			if strings.Contains(messageText(m), "Answered in your DM") {
				return true
			}
		}
		return false
	})
}

// refusedBecause reports whether a request was refused for why.
func (w *world) refusedBecause(why string) bool {
	for _, e := range w.logs.FilterMessage("request refused").All() {
		if e.ContextMap()["why"] == why {
			return true
		}
	}
	return false
}
