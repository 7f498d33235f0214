package slack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
)

// crowdedThread starts a thread in which asker names n people, each a
// workspace member, and returns its ts.
func crowdedThread(w *bottest.World, n int) string {
	var names []string
	for i := range n {
		id := fmt.Sprintf("U%04dPEOPLE", i)
		w.Slack.AddUser(id, fmt.Sprintf("person%d", i))
		names = append(names, "<@"+id+">")
	}
	return w.Slack.Reply(channel, "", asker, "Meeting with "+strings.Join(names, " "))
}

func TestAThreadNamingSixtyPeopleAsksSlackAboutAtMostTwenty(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	root := crowdedThread(w, 60)
	var prompt string
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			prompt += m.Content + "\n"
		}
		return llmtest.TextReport("Noted.")
	})
	w.Slack.Reply(channel, root, asker, "<@"+w.Slack.BotUserID()+"> who is coming?")
	w.Answered(channel, root, "Noted.")
	if n := len(w.Slack.Calls("users.info")); n > 20 {
		t.Errorf("users.info was called %d times for one session; at most 20", n)
	}
	if !strings.Contains(prompt, "@person0") {
		t.Errorf("the first names were not resolved:\n%s", prompt)
	}
}

func TestAUsersInfoThatHangsCostsTheSessionOneBoundedWait(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	root := crowdedThread(w, 5)
	w.Slack.Hang("users.info", 100)
	w.Model.Push(llmtest.TextReport("Answered without names."))
	w.Slack.Reply(channel, root, asker, "<@"+w.Slack.BotUserID()+"> who is coming?")
	w.Answered(channel, root, "Answered without names.")
	if n := len(w.Slack.Calls("users.info")); n != 1 {
		t.Errorf("users.info was tried %d times after one hung; want 1", n)
	}
}
