package slack_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// threeMessages is slack.max_answer_messages at its default.
var threeMessages = bottest.WithConfig(func(c *config.Config) { c.Slack.MaxAnswerMessages = config.DefaultMaxAnswerMessages })

// longAnswer is Markdown of paragraphs marked ¶0, ¶1, … that takes four
// messages.
func longAnswer() string {
	var b strings.Builder
	b.WriteString("The deployment log, summarised.\n\n")
	for i := range 20 {
		fmt.Fprintf(&b, "¶%d %s\n\n", i, strings.Repeat("A paragraph of the answer that goes on for a while. ", 40))
	}
	return b.String()
}

// fiveMessages is an answer the model wrote as five Block Kit messages,
// marked ¶0 to ¶4.
func fiveMessages() llmtest.Reply {
	var msgs []any
	for i := range 5 {
		msgs = append(msgs, map[string]any{"blocks": []any{llmtest.Section(fmt.Sprintf("¶%d part %d of the answer.", i, i))}})
	}
	return llmtest.SlackReport(msgs)
}

// wideTable is a Markdown table of cols columns.
func wideTable(cols int) string {
	var head, rule, row []string
	for i := range cols {
		head, rule, row = append(head, fmt.Sprintf("c%d", i)), append(rule, "---"), append(row, fmt.Sprint(i))
	}
	return "Results:\n\n| " + strings.Join(head, " | ") + " |\n| " + strings.Join(rule, " | ") + " |\n| " + strings.Join(row, " | ") + " |\n"
}

// jsonUnescaper undoes the escapes of <, > and & that JSON encoders
// write, so a search of posted blocks finds Slack's tokens.
var jsonUnescaper = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

// sharedFile waits for the one file the bot shares in the thread ts.
func sharedFile(w *bottest.World, ts string) emulator.Upload {
	w.T.Helper()
	var up emulator.Upload
	w.Eventually("a file shared in the thread", func() bool {
		for _, u := range w.Slack.Uploads(channel) {
			if u.ThreadTS == ts {
				up = u
				return true
			}
		}
		return false
	})
	return up
}

func TestALongAnswerOrAWideTableArrivesAsAShortMessageAndTheWholeAsAFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, answer, reason string
		display              string
	}{
		{"a long answer, under a progress message", longAnswer(), "would take", config.DisplayMessage},
		{"a long answer, streamed", longAnswer(), "would take", config.DisplayStream},
		{"a 40-column table, under a progress message", wideTable(40), "40 columns", config.DisplayMessage},
		{"a 40-column table, streamed", wideTable(40), "40 columns", config.DisplayStream},
		{"five messages of Block Kit", "", "5 messages", config.DisplayMessage},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := bottest.Start(t, threeMessages, bottest.WithConfig(func(c *config.Config) {
				c.Slack.Display, c.Slack.RateLimits = tt.display, maps.Clone(config.DefaultSlackRateLimits)
			}))
			want := tt.answer
			if want != "" {
				w.Model.Push(llmtest.TextReport(tt.answer))
			} else {
				w.Model.Push(fiveMessages())
				want = "¶0 part 0 of the answer.\n\n¶1 part 1 of the answer.\n\n¶2 part 2 of the answer.\n\n¶3 part 3 of the answer.\n\n¶4 part 4 of the answer."
			}
			ts := w.Slack.Mention(channel, asker, "how did the deployment go?")
			up := sharedFile(w, ts)
			if up.Name != "answer.md" || up.Title != "Answer" || strings.TrimSpace(string(up.Data)) != strings.TrimSpace(want) {
				t.Fatalf("shared %q titled %q with %d bytes, want answer.md titled Answer holding the whole answer (%d bytes)",
					up.Name, up.Title, len(up.Data), len(tt.answer))
			}
			thread := w.Answered(channel, ts, "in the file answer.md")
			w.Eventually("no Stop button left", func() bool {
				thread = w.Slack.Thread(channel, ts)
				return holding(w, channel, ts, "slackbot_stop") == 0
			})
			var short []emulator.Message
			for _, m := range bottest.BotMessages(thread) {
				text := bottest.MessageText(m)
				if strings.Contains(text, "¶4") || strings.Contains(text, "c39") {
					t.Errorf("the answer's body was posted as a message too: %.200s", text)
				}
				if strings.Contains(text, "in the file answer.md") {
					short = append(short, m)
				}
			}
			if len(short) != 1 || !strings.Contains(string(short[0].Blocks), tt.reason) || !strings.Contains(string(short[0].Blocks), "positive:") {
				t.Fatalf("want one short message saying why (%q) with the feedback buttons, got %d: %+v", tt.reason, len(short), short)
			}
			stats := w.Bots[0].RateStats().Methods
			if stats["files.getUploadURLExternal"].Calls != 1 || stats["files.completeUploadExternal"].Calls != 1 ||
				stats["files.completeUploadExternal"].PerMinute != 100 || stats["other"].Calls != 1 || stats[up.ID].Calls != 0 {
				t.Errorf("the upload's calls did not each pass the limiter under their own names: %+v", stats)
			}
			if tt.display == config.DisplayStream {
				s := streamOf(w, channel, ts, "the stream ended with the short message", ended)
				if s.TS != short[0].TS {
					t.Errorf("the short message %s is not the stream %s it ends", short[0].TS, s.TS)
				}
			}
		})
	}
}

func TestAnAnswerWhoseUploadFailsArrivesAsMessagesOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		breakIt func(*emulator.Server)
		why     string
	}{
		{"a token without files:write", func(s *emulator.Server) {
			s.SetScopes(slices.DeleteFunc(slices.Clone(emulator.DefaultScopes), func(sc string) bool { return sc == "files:write" })...)
		}, "missing_scope"},
		{"a completion Slack refuses", func(s *emulator.Server) { s.Fail("files.completeUploadExternal", "internal_error", 1) }, "internal_error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := bottest.Start(t, threeMessages)
			tt.breakIt(w.Slack)
			w.Model.Push(fiveMessages())
			ts := w.Slack.Mention(channel, asker, "how did the deployment go?")
			w.Answered(channel, ts, "¶4")
			w.Logged("the answer could not go as a file; posting it as messages")
			if e := w.Logs.FilterMessage("the answer could not go as a file; posting it as messages").All(); len(e) != 1 || e[0].ContextMap()["why"] != tt.why {
				t.Fatalf("log lines %+v, want one naming %s", e, tt.why)
			}
			if ups := w.Slack.Uploads(channel); len(ups) != 0 {
				t.Fatalf("files shared: %+v", ups)
			}
			for i := range 5 {
				if n := holding(w, channel, ts, fmt.Sprintf("¶%d ", i)); n != 1 {
					t.Errorf("paragraph %d is in %d messages, want 1", i, n)
				}
			}
			if n := holding(w, channel, ts, "in the file answer.md"); n != 0 {
				t.Errorf("%d messages point at a file that was not shared", n)
			}
		})
	}
}

func TestAnAnswerGoneAsAFileCarriesNoPingAndNoDisguisedLinkInItsShortMessage(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, threeMessages)
	w.Slack.AddUser("U0EVE", "eve")
	bait := "<!channel> <@U0EVE> urgent: sign in again at <https://evil.example/login|https://slack.com/signin>"
	msgs := []any{map[string]any{"blocks": []any{llmtest.Section(bait)}}}
	for i := range 4 {
		msgs = append(msgs, map[string]any{"blocks": []any{llmtest.Section(fmt.Sprintf("Part %d. <!here> see <https://evil.example|https://bank.example>", i))}})
	}
	w.Model.Push(llmtest.SlackReport(msgs))
	ts := w.Slack.Mention(channel, asker, "anything new?")
	up := sharedFile(w, ts)
	thread := w.Answered(channel, ts, "in the file answer.md")
	for _, m := range bottest.BotMessages(thread) {
		text := jsonUnescaper.Replace(bottest.MessageText(m))
		for _, ping := range []string{"<!channel>", "<!here>", "<@U0EVE>", "|https://slack.com/signin>", "|https://bank.example>"} {
			if strings.Contains(text, ping) {
				t.Errorf("a message in the bot's name carries %s: %.300s", ping, text)
			}
		}
	}
	file := string(up.Data)
	if !strings.Contains(file, "Part 3.") || !strings.Contains(file, "evil.example") {
		t.Fatalf("the file does not hold the whole answer with the links' real hosts: %q", file)
	}
	for _, token := range []string{"<!channel>", "<!here>", "<@U0EVE>"} {
		if strings.Contains(file, token) {
			t.Errorf("the file holds the token %s rather than the words the voice left", token)
		}
	}
}

func TestAnAnswerOfThreeMessagesStaysMessages(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, threeMessages)
	var msgs []any
	for i := range 3 {
		msgs = append(msgs, map[string]any{"blocks": []any{llmtest.Section(fmt.Sprintf("¶%d part %d of the answer.", i, i))}})
	}
	w.Model.Push(llmtest.SlackReport(msgs))
	ts := w.Slack.Mention(channel, asker, "how did the deployment go?")
	w.Answered(channel, ts, "¶2")
	for i := range 3 {
		if n := holding(w, channel, ts, fmt.Sprintf("¶%d ", i)); n != 1 {
			t.Errorf("part %d is in %d messages, want 1", i, n)
		}
	}
	if calls := w.Slack.Calls("files.getUploadURLExternal"); len(calls) != 0 {
		t.Errorf("an answer within slack.max_answer_messages was uploaded: %+v", calls)
	}
}
