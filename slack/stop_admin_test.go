package slack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/state/redistest"
)

// TestAnAdminsStopDeliveredToTheOtherReplicaStopsSomeoneElsesSession has
// a member of slack.admins press Stop on a session someone else asked for,
// with the click delivered to the replica that is not running it: the
// session is stopped, in the admin's name, and the admin is not refused.
func TestAnAdminsStopDeliveredToTheOtherReplicaStopsSomeoneElsesSession(t *testing.T) {
	t.Parallel()
	const admin = "U0BOSS"
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "adminstop:")), bottest.WithConfig(func(c *config.Config) { c.Slack.Admins = []string{admin} }))
	w.Replica(bottest.OnStore(dialRedis(t, srv, "adminstop:")))
	w.Slack.AddUser(admin, "boss")
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.Slack.Mention(channel, asker, "take your time")
	progress := w.ProgressMessage(channel, ts)
	w.Model.Wait(1)
	other := otherConn(w, mentionConn(w, ts))
	if _, err := w.Slack.ClickOn(other, channel, progress.TS, admin, "slackbot_stop", stopValue(t, progress)); err != nil {
		t.Fatal(err)
	}
	// The admin wrote nothing in the thread, so the note names them
	// without a ping.
	w.Answered(channel, ts, "Stopped by @boss")
	for _, e := range w.Slack.Ephemerals() {
		if e.User == admin && strings.Contains(e.Text, "Only the person who asked") {
			t.Errorf("the admin was told %q", e.Text)
		}
	}
	for _, e := range w.Slack.Envelopes() {
		if e.Type == "interactive" && e.Conn != other {
			t.Errorf("the click went to connection %d, not %d", e.Conn, other)
		}
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls for one question", n)
	}
}
