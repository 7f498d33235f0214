package slack_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// A streamed session whose call waits for approval shows it the way a
// session waiting on a person does: a "Waiting for @asker" task running
// in its timeline and its agent session suspended; once approved, the
// task is complete with the decision, the session processing again, and
// the answer ends the stream with no task left running.
func TestAStreamedSessionWaitingForApprovalIsSuspendedAndSaysForWhom(t *testing.T) {
	t.Parallel()
	w, notes, _ := approvalWorld(t, time.Minute, streamed)
	w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"7"}`), llmtest.TextReport("Deleted."))
	ts := w.Slack.Mention(channel, asker, "delete note 7")
	m := awaitApproval(w, ts, 1)

	waiting := func() (emulator.Task, bool) {
		for _, st := range w.Slack.Streams(channel) {
			if st.ThreadTS != ts {
				continue
			}
			for _, tk := range st.Tasks {
				if strings.HasPrefix(tk.Title, "Waiting for") {
					return tk, true
				}
			}
		}
		return emulator.Task{}, false
	}
	w.Eventually("the timeline to show the wait and the agent session to be suspended", func() bool {
		tk, ok := waiting()
		s, _ := w.Slack.AgentSession(channel, ts)
		return ok && tk.Status == "in_progress" && s.Status == "suspended"
	})
	if notes.count("delete_note") != 0 {
		t.Fatal("the call ran before it was approved")
	}
	click(t, w, m, asker, "slackbot_approve", "")
	w.Answered(channel, ts, "Deleted.")
	w.Eventually("the stream to end", func() bool {
		for _, st := range w.Slack.Streams(channel) {
			if st.ThreadTS == ts && st.Open {
				return false
			}
		}
		return true
	})
	tk, _ := waiting()
	if tk.Status != "complete" || !strings.EqualFold(tk.Output, "approved") {
		t.Errorf("the wait's task ended %q with %q; want complete, Approved", tk.Status, tk.Output)
	}
	for _, st := range w.Slack.Streams(channel) {
		if st.ThreadTS == ts {
			noTaskInProgress(t, st)
		}
	}
	s, _ := w.Slack.AgentSession(channel, ts)
	i := slices.Index(s.Statuses, "suspended")
	if i < 0 || !slices.Contains(s.Statuses[i+1:], "processing") {
		t.Errorf("agent session statuses %v; want suspended, then processing again", s.Statuses)
	}
}
