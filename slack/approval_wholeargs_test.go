package slack_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// Arguments too long to show whole in an approval message are attached
// whole (masked and redacted as shown) as a file in the thread before the
// message, which says so: whoever decides can read all of what would run.
// When the file cannot be attached, the message says that instead.
func TestAnApprovalsShortenedArgumentsAreAttachedWhole(t *testing.T) {
	t.Parallel()
	tail := "the-end-of-the-long-text"
	long := strings.Repeat("lorem ipsum ", 500) + tail
	args := `{"id":"7","text":"` + long + `","api_key":"sk-live-abcdefghijklmnopqrstuvwxyz0123456789"}`

	t.Run("attached", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__add_note", args), llmtest.TextReport("Added."))
		ts := w.Slack.Mention(channel, asker, "add a long note")
		m := awaitApproval(w, ts, 1)
		var file emulator.Upload
		for _, u := range w.Slack.Uploads(channel) {
			if u.ThreadTS == ts && strings.HasPrefix(u.Name, "arguments-") {
				file = u
			}
		}
		whole := string(file.Data)
		if !strings.Contains(whole, tail) || strings.Contains(whole, "abcdefghijklmnopqrstuvwxyz0123456789") {
			t.Fatalf("the attached arguments (%d bytes) lack the tail or show the key: %.200q", len(whole), whole)
		}
		if strings.Contains(string(m.Blocks), tail) {
			t.Fatal("the message shows the whole arguments: the test needs them shortened")
		}
		if !strings.Contains(blocksText(m), "the whole are in the file "+file.Name) {
			t.Errorf("the approval message does not point at %s: %s", file.Name, blocksText(m))
		}
		msgs := w.Slack.Thread(channel, ts)
		if !slices.ContainsFunc(msgs, func(x emulator.Message) bool { return x.TS == file.TS }) || file.TS > m.TS {
			t.Errorf("the file (%s) is not in the thread before the approval message (%s)", file.TS, m.TS)
		}
		click(t, w, m, asker, "slackbot_approve", "")
		w.Answered(channel, ts, "Added.")
		if notes.count("add_note") != 1 {
			t.Fatalf("add_note ran %d times", notes.count("add_note"))
		}
	})

	t.Run("not attached", func(t *testing.T) {
		t.Parallel()
		w, _, _ := approvalWorld(t, time.Minute)
		w.Slack.SetScopes("app_mentions:read", "chat:write", "im:history", "channels:history", "users:read", "usergroups:read") // no files:write
		w.Model.Push(llmtest.Call("notes__add_note", args), llmtest.TextReport("Not added."))
		ts := w.Slack.Mention(channel, asker, "add a long note")
		m := awaitApproval(w, ts, 1)
		if !strings.Contains(blocksText(m), "the whole could not be attached") {
			t.Errorf("the approval message does not say its arguments are incomplete: %s", blocksText(m))
		}
		click(t, w, m, asker, "slackbot_deny", "")
		w.Answered(channel, ts, "Not added.")
	})
}
