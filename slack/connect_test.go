package slack_test

import (
	"testing"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
)

const (
	stranger      = "U0EVE"     // a person of another organisation
	strangersTeam = "T0OTHERCO" // their workspace
	// foreignRefusal is what the bot tells a person of another organisation.
	foreignRefusal = "Sorry, I can only help people of this workspace's organisation."
)

// sharedWorld is a world whose channel is shared with another
// organisation, one of whose people is in it.
func sharedWorld(t *testing.T, opts ...worldOption) *world {
	t.Helper()
	w := newWorld(t, opts...)
	w.srv.ShareChannel(channel)
	w.srv.AddTeamUser(stranger, "eve", strangersTeam, "")
	return w
}

// refusedAs waits for an ephemeral message to user with text.
func (w *world) refusedAs(user, text string) {
	w.t.Helper()
	w.waitFor("an ephemeral to "+user+": "+text, func() bool {
		for _, e := range w.srv.Ephemerals() {
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
	w.srv.Mention(channel, stranger, "list our customers")
	w.refusedAs(stranger, foreignRefusal)
	w.srv.Slash(channel, stranger, "/ask", "list our customers")
	w.waitFor("both refusals", func() bool {
		n := 0
		for _, e := range w.srv.Ephemerals() {
			if e.User == stranger && e.Text == foreignRefusal {
				n++
			}
		}
		return n == 2
	})
	// The bot's own people are answered in the same channel; by the time
	// they are, the stranger's questions would have reached the model.
	w.model.Push(textReport("Here you are."))
	ts := w.srv.Mention(channel, asker, "list our customers")
	w.answered(channel, ts, "Here you are")
	if n := len(w.model.Requests()); n != 1 {
		t.Fatalf("%d model calls: a question of another organisation reached the model", n)
	}
}

func TestAStrangersClickOnAnAnswersFeedbackIsRefusedAndNotRecorded(t *testing.T) {
	t.Parallel()
	w := sharedWorld(t)
	w.model.Push(textReport("An answer."))
	ts := w.srv.Mention(channel, asker, "a question")
	thread := w.answered(channel, ts, "An answer")
	answer := botMessages(thread)[len(botMessages(thread))-1]
	positive, negative, ok := feedbackButtons(t, answer)
	if !ok {
		t.Fatalf("the answer has no feedback buttons: %s", answer.Blocks)
	}
	if _, err := w.srv.Click(channel, answer.TS, stranger, feedbackAction, negative); err != nil {
		t.Fatal(err)
	}
	w.refusedAs(stranger, foreignRefusal)
	// Ada's click after it is recorded, so the stranger's would have been by now.
	if _, err := w.srv.Click(channel, answer.TS, asker, feedbackAction, positive); err != nil {
		t.Fatal(err)
	}
	w.waitFor("Ada's feedback", func() bool { return len(w.feedbackCalls()) > 0 })
	if got := w.feedbackCalls(); len(got) != 1 || got[0] != "positive" {
		t.Fatalf("feedback recorded: %v; only Ada's positive click should be", got)
	}
}

func TestATeamListedInExternalTeamsIsAnswered(t *testing.T) {
	t.Parallel()
	w := sharedWorld(t, func(c *config.Config, _ *agent.Runner) {
		c.Slack.Allow.ExternalTeams = []string{strangersTeam}
	})
	w.model.Push(textReport("Welcome, partner."))
	ts := w.srv.Mention(channel, stranger, "hello")
	w.answered(channel, ts, "Welcome, partner")
}

func TestAPersonWhoseTeamCannotBeToldIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// An event that names no team, and users.info failing: the bot cannot
	// tell whose organisation the person is of.
	w.srv.Fail("users.info", "internal_error", 100)
	raw := `{"type":"events_api","envelope_id":"raw-noteam","payload":{"type":"event_callback","event_id":"EvNOTEAM","team_id":"T0EMULATOR",` +
		`"event":{"type":"app_mention","user":"` + asker + `","text":"<@U0BOT> hello","ts":"9.0","channel":"` + channel + `","event_ts":"9.0"}}}`
	if err := w.srv.DeliverRaw([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	w.refusedAs(asker, foreignRefusal)
	if n := len(w.model.Requests()); n != 0 {
		t.Fatalf("%d model calls for a person whose team is unknown", n)
	}
	if w.logs.FilterMessage("the asker's team could not be told; refusing").Len() == 0 {
		t.Fatal("the refusal was not logged")
	}
}

func TestAPersonOfAnotherWorkspaceOfTheBotsEnterpriseIsAnsweredAndAnotherEnterpriseIsNot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// The workspace joins an Enterprise Grid organisation; a bot started
	// after learns it from auth.test.
	w.srv.JoinEnterprise("E0ACME")
	w.shutdown()
	w.waitFor("the first bot to disconnect", func() bool { return w.srv.Connections() == 0 })
	w.replica()
	w.srv.ShareChannel(channel)
	w.srv.AddTeamUser("U0GUS", "gus", "T0SISTER", "E0ACME")
	w.srv.AddTeamUser(stranger, "eve", strangersTeam, "E0OTHER")
	w.model.Push(textReport("Hello, colleague."))
	ts := w.srv.Mention(channel, "U0GUS", "hello")
	w.answered(channel, ts, "Hello, colleague")
	w.srv.Mention(channel, stranger, "hello")
	w.refusedAs(stranger, foreignRefusal)
	if n := len(w.model.Requests()); n != 1 {
		t.Fatalf("%d model calls: the other enterprise's question reached the model", n)
	}
}
