package slack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
)

// crowdedThread starts a thread in which asker names n people, each a
// workspace member, and returns its ts.
func (w *world) crowdedThread(n int) string {
	var names []string
	for i := range n {
		id := fmt.Sprintf("U%04dPEOPLE", i)
		w.srv.AddUser(id, fmt.Sprintf("person%d", i))
		names = append(names, "<@"+id+">")
	}
	return w.srv.Reply(channel, "", asker, "Meeting with "+strings.Join(names, " "))
}

func TestAThreadNamingSixtyPeopleAsksSlackAboutAtMostTwenty(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	root := w.crowdedThread(60)
	var prompt string
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			prompt += m.Content + "\n"
		}
		return textReport("Noted.")
	})
	w.srv.Reply(channel, root, asker, "<@"+w.srv.BotUserID()+"> who is coming?")
	w.answered(channel, root, "Noted.")
	if n := len(w.srv.Calls("users.info")); n > 20 {
		t.Errorf("users.info was called %d times for one session; at most 20", n)
	}
	if !strings.Contains(prompt, "@person0") {
		t.Errorf("the first names were not resolved:\n%s", prompt)
	}
}

func TestAUsersInfoThatHangsCostsTheSessionOneBoundedWait(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	root := w.crowdedThread(5)
	w.srv.Hang("users.info", 100)
	w.model.Push(textReport("Answered without names."))
	w.srv.Reply(channel, root, asker, "<@"+w.srv.BotUserID()+"> who is coming?")
	w.answered(channel, root, "Answered without names.")
	if n := len(w.srv.Calls("users.info")); n != 1 {
		t.Errorf("users.info was tried %d times after one hung; want 1", n)
	}
}
