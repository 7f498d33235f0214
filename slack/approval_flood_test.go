package slack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
)

// A model can ask for many approvals in one turn, or for calls whose
// arguments are long or full of characters Slack escapes: the calls must
// still be asked in messages Slack accepts (50 blocks, 3,000 characters a
// section, about 13,000 in all), each decided on its own, rather than
// denied because the request could not be posted.
func TestApprovalFloodsFitSlack(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name  string
		calls int
		args  func(i int) string
	}{
		{"twenty calls of one turn are all asked, none denied for want of a message", 20,
			func(i int) string { return fmt.Sprintf(`{"id":"%d"}`, i) }},
		{"six calls with long arguments are all asked", 6, func(i int) string { return longArgs(i, "word ") }},
		{"arguments made of characters Slack escapes are asked", 2, func(i int) string { return longArgs(i, "<&>") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, notes, _ := approvalWorld(t, time.Minute, bottest.WithConfig(func(c *config.Config) {
				c.Agents["assistant"].MaxToolCallsPerTurn = tc.calls
			}))
			var calls []llmtest.ToolCall
			for i := range tc.calls {
				calls = append(calls, llmtest.ToolCall{Name: "notes__add_note", Arguments: tc.args(i)})
			}
			w.Model.Push(llmtest.Calls(calls...), llmtest.TextReport("All added."))
			ts := w.Slack.Mention(channel, asker, "add them all")
			var values []string
			w.Eventually("every call to be asked about", func() bool {
				values = nil
				for _, m := range approvalMessages(w, ts) {
					values = append(values, buttonValues(t, m)...)
				}
				return len(values) == tc.calls
			})
			for _, m := range approvalMessages(w, ts) {
				for _, v := range buttonValues(t, m) {
					click(t, w, m, asker, "slackbot_approve", v)
				}
			}
			w.Answered(channel, ts, "All added.")
			if got := notes.count("add_note"); got != tc.calls {
				t.Fatalf("%d of %d approved calls ran", got, tc.calls)
			}
			for _, m := range approvalMessages(w, ts) {
				if now := blocksText(messageNow(w, ts, m.TS)); strings.Contains(now, "slackbot_approve\"") {
					t.Errorf("an approval message kept its buttons: %s", now)
				}
			}
		})
	}
}

// longArgs are arguments of eight string values of 290 characters, made
// of unit repeated: as long as an approval message shows them.
func longArgs(id int, unit string) string {
	m := map[string]any{"id": fmt.Sprint(id)}
	for k := range 8 {
		m[fmt.Sprintf("v%d", k)] = strings.Repeat(unit, 290/len(unit))
	}
	b, _ := json.Marshal(m)
	return string(b)
}
