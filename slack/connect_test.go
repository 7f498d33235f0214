package slack_test

import (
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
)

const (
	stranger      = "U0EVE"     // a person of another organisation
	strangersTeam = "T0OTHERCO" // their workspace
	// foreignRefusal is what the bot tells a person of another organisation.
	foreignRefusal = "Sorry, I can only help people of this workspace's organisation."
)

// sharedWorld is a world whose channel is shared with another
// organisation, one of whose people is in it.
func sharedWorld(t *testing.T, opts ...bottest.Option) *bottest.World {
	t.Helper()
	w := bottest.Start(t, opts...)
	w.Slack.ShareChannel(channel)
	w.Slack.AddTeamUser(stranger, "eve", strangersTeam, "")
	return w
}

// refusedAs waits for an ephemeral message to user with text.
func refusedAs(w *bottest.World, user, text string) {
	w.T.Helper()
	w.Eventually("an ephemeral to "+user+": "+text, func() bool {
		for _, e := range w.Slack.Ephemerals() {
			if e.User == user && e.Text == text {
				return true
			}
		}
		return false
	})
}

func TestAPersonOfAnotherOrganisationIsRefusedInASharedChannelWhateverWayTheyAsk(t *testing.T) {
	t.Parallel()
	w := sharedWorld(t)
	w.Slack.Mention(channel, stranger, "list our customers")
	refusedAs(w, stranger, foreignRefusal)
	w.Slack.Slash(channel, stranger, "/ask", "list our customers")
	w.Eventually("both refusals", func() bool {
		n := 0
		for _, e := range w.Slack.Ephemerals() {
			if e.User == stranger && e.Text == foreignRefusal {
				n++
			}
		}
		return n == 2
	})
	// The bot's own people are answered in the same channel; by the time
	// they are, the stranger's questions would have reached the model.
	w.Model.Push(llmtest.TextReport("Here you are."))
	ts := w.Slack.Mention(channel, asker, "list our customers")
	w.Answered(channel, ts, "Here you are")
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls: a question of another organisation reached the model", n)
	}
}

func TestAStrangersClickOnAnAnswersFeedbackIsRefusedAndNotRecorded(t *testing.T) {
	t.Parallel()
	w := sharedWorld(t)
	w.Model.Push(llmtest.TextReport("An answer."))
	ts := w.Slack.Mention(channel, asker, "a question")
	thread := w.Answered(channel, ts, "An answer")
	answer := bottest.BotMessages(thread)[len(bottest.BotMessages(thread))-1]
	positive, negative, ok := feedbackButtons(t, answer)
	if !ok {
		t.Fatalf("the answer has no feedback buttons: %s", answer.Blocks)
	}
	if _, err := w.Slack.Click(channel, answer.TS, stranger, feedbackAction, negative); err != nil {
		t.Fatal(err)
	}
	refusedAs(w, stranger, foreignRefusal)
	// Ada's click after it is recorded, so the stranger's would have been by now.
	if _, err := w.Slack.Click(channel, answer.TS, asker, feedbackAction, positive); err != nil {
		t.Fatal(err)
	}
	w.Eventually("Ada's feedback", func() bool { return len(w.Feedback()) > 0 })
	if got := w.Feedback(); len(got) != 1 || got[0] != "positive" {
		t.Fatalf("feedback recorded: %v; only Ada's positive click should be", got)
	}
}

func TestATeamListedInExternalTeamsIsAnswered(t *testing.T) {
	t.Parallel()
	w := sharedWorld(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.Allow.ExternalTeams = []string{strangersTeam}
	}))
	w.Model.Push(llmtest.TextReport("Welcome, partner."))
	ts := w.Slack.Mention(channel, stranger, "hello")
	w.Answered(channel, ts, "Welcome, partner")
}

func TestAPersonWhoseTeamCannotBeToldIsRefused(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	// An event that names no team, and users.info failing: the bot cannot
	// tell whose organisation the person is of.
	w.Slack.Fail("users.info", "internal_error", 100)
	raw := `{"type":"events_api","envelope_id":"raw-noteam","payload":{"type":"event_callback","event_id":"EvNOTEAM","team_id":"T0EMULATOR",` +
		`"event":{"type":"app_mention","user":"` + asker + `","text":"<@U0BOT> hello","ts":"9.0","channel":"` + channel + `","event_ts":"9.0"}}}`
	if err := w.Slack.DeliverRaw([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	refusedAs(w, asker, foreignRefusal)
	if n := len(w.Model.Requests()); n != 0 {
		t.Fatalf("%d model calls for a person whose team is unknown", n)
	}
	if w.Logs.FilterMessage("the asker's team could not be told; refusing").Len() == 0 {
		t.Fatal("the refusal was not logged")
	}
}

func TestAPersonOfAnotherWorkspaceOfTheBotsEnterpriseIsAnsweredAndAnotherEnterpriseIsNot(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	// The workspace joins an Enterprise Grid organisation; a bot started
	// after learns it from auth.test.
	w.Slack.JoinEnterprise("E0ACME")
	w.Shutdown()
	w.Eventually("the first bot to disconnect", func() bool { return w.Slack.Connections() == 0 })
	w.Replica()
	w.Slack.ShareChannel(channel)
	w.Slack.AddTeamUser("U0GUS", "gus", "T0SISTER", "E0ACME")
	w.Slack.AddTeamUser(stranger, "eve", strangersTeam, "E0OTHER")
	w.Model.Push(llmtest.TextReport("Hello, colleague."))
	ts := w.Slack.Mention(channel, "U0GUS", "hello")
	w.Answered(channel, ts, "Hello, colleague")
	w.Slack.Mention(channel, stranger, "hello")
	refusedAs(w, stranger, foreignRefusal)
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls: the other enterprise's question reached the model", n)
	}
}
