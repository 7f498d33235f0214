package slack_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

const feedbackAction = "slackbot_feedback"

// feedbackButtons finds the feedback buttons in a message: the values of
// its positive and negative buttons, and whether there are any.
func feedbackButtons(t *testing.T, m emulator.Message) (positive, negative string, ok bool) {
	t.Helper()
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Positive struct {
				Value string `json:"value"`
			} `json:"positive_button"`
			Negative struct {
				Value string `json:"value"`
			} `json:"negative_button"`
		} `json:"elements"`
	}
	if len(m.Blocks) > 0 {
		if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
			t.Fatalf("blocks of %s: %v", m.TS, err)
		}
	}
	for k, b := range blocks {
		for _, e := range b.Elements {
			if b.Type == "context_actions" && e.Type == "feedback_buttons" && e.ActionID == feedbackAction {
				if k != len(blocks)-1 {
					t.Errorf("the feedback buttons are block %d of %d; they belong last", k, len(blocks))
				}
				return e.Positive.Value, e.Negative.Value, true
			}
		}
	}
	return "", "", false
}

// thanked waits for the ephemeral thanks to user in the thread ts.
func thanked(w *bottest.World, user, ts string, times int) {
	w.T.Helper()
	w.Eventually("the thanks to "+user, func() bool {
		n := 0
		for _, e := range w.Slack.Ephemerals() {
			if e.User == user && e.Text == "Thanks for the feedback." && e.ThreadTS == ts && e.Channel == channel {
				n++
			}
		}
		return n >= times
	})
}

func TestAnAnswerEndsWithFeedbackButtonsAndEachPersonsClickIsRecorded(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Slack.AddUser("U0BOB", "bob")
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("Paris is the *capital*.")}}}))
	ts := w.Slack.Mention(channel, asker, "what is the capital of France?")
	bot := bottest.BotMessages(w.Answered(channel, ts, "capital"))
	answer := bot[len(bot)-1]
	positive, negative, ok := feedbackButtons(t, answer)
	if !ok {
		t.Fatalf("the answer has no feedback buttons: %s", answer.Blocks)
	}
	id := strings.TrimPrefix(positive, "positive:")
	if id == positive || negative != "negative:"+id {
		t.Fatalf("button values %q and %q do not name one session", positive, negative)
	}
	rec, found, err := w.Store.Session(t.Context(), id)
	if err != nil || !found || rec.Channel != channel || rec.ThreadTS != ts || rec.User != asker {
		t.Fatalf("the buttons name session %q, which the store holds as %+v (found %v, %v)", id, rec, found, err)
	}

	// Bob finds it good; then Ada does not; then Bob changes his mind.
	clicks := []struct {
		user, value string
		want        string // each person's verdict, oldest first
	}{
		{"U0BOB", positive, "U0BOB=positive"},
		{asker, negative, "U0BOB=positive U0ADA=negative"},
		{"U0BOB", negative, "U0ADA=negative U0BOB=negative"},
	}
	thanks := map[string]int{}
	for i, c := range clicks {
		if _, err := w.Slack.Click(channel, answer.TS, c.user, feedbackAction, c.value); err != nil {
			t.Fatal(err)
		}
		thanks[c.user]++
		thanked(w, c.user, ts, thanks[c.user])
		rec, _, _ := w.Store.Session(t.Context(), id)
		var got []string
		for _, f := range rec.Feedback {
			got = append(got, f.User+"="+f.Value)
			if f.At.IsZero() {
				t.Errorf("click %d: a verdict without its time: %+v", i, f)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Fatalf("after click %d the record holds %v, want %s", i, got, c.want)
		}
	}
	// The same click delivered again is recorded, thanked and counted once.
	envs := w.Slack.Envelopes()
	for i := len(envs) - 1; i >= 0; i-- {
		if envs[i].Type == "interactive" {
			if _, err := w.Slack.Redeliver(envs[i].ID); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	w.Logged("duplicate feedback click ignored")
	if got := w.Feedback(); !slices.Equal(got, []string{"positive", "negative", "negative"}) {
		t.Errorf("OnFeedback was called with %v", got)
	}
	lines := w.Logs.FilterMessage("feedback recorded").All()
	if len(lines) != 3 {
		t.Fatalf("%d 'feedback recorded' lines, want 3", len(lines))
	}
	if f := lines[0].ContextMap(); f["session"] != id || f["value"] != "positive" || f["user"] != "U0BOB" {
		t.Errorf("the log line carries %v", f)
	}
	clicksAcked(w)
}

// clicksAcked waits until every click envelope has been acked.
func clicksAcked(w *bottest.World) {
	w.T.Helper()
	w.Eventually("every click to be acked", func() bool {
		for _, e := range w.Slack.Envelopes() {
			if e.Type == "interactive" && !e.Acked {
				return false
			}
		}
		return true
	})
}

func TestASplitAnswerCarriesFeedbackButtonsOnItsLastPartOnly(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	var b strings.Builder
	for range 120 {
		b.WriteString("## Part\n\nParagraph " + strings.Repeat("long text ", 40) + "\n\n")
	}
	b.WriteString("THE END")
	w.Model.Push(llmtest.TextReport(b.String()))
	ts := w.Slack.Mention(channel, asker, "write a lot")
	var bot []emulator.Message
	w.Eventually("the answer's last part", func() bool {
		bot = bottest.BotMessages(w.Slack.Thread(channel, ts))
		return len(bot) > 0 && strings.Contains(string(bot[len(bot)-1].Blocks), feedbackAction)
	})
	if len(bot) < 2 {
		t.Fatalf("%d messages for a long answer", len(bot))
	}
	for i, m := range bot {
		if _, _, ok := feedbackButtons(t, m); ok != (i == len(bot)-1) {
			t.Errorf("message %d of %d: feedback buttons %v", i+1, len(bot), ok)
		}
	}
	if !strings.Contains(bottest.MessageText(bot[len(bot)-1]), "THE END") {
		t.Error("the buttons are not under the end of the answer")
	}
}

func TestFailedAndStoppedSessionsCarryNoFeedbackButtons(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.Reply{Status: 401, ErrorType: "invalid_api_key"})
	ts := w.Slack.Mention(channel, asker, "hello?")
	for _, m := range bottest.BotMessages(w.Answered(channel, ts, "credentials")) {
		if _, _, ok := feedbackButtons(t, m); ok {
			t.Errorf("a failure note has feedback buttons: %s", m.Blocks)
		}
	}

	before := len(w.Model.Requests())
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts2 := w.Slack.Mention(channel, asker, "take your time")
	progress := w.ProgressMessage(channel, ts2)
	w.Model.Wait(before + 1) // the session is running: Stop can reach it
	if _, err := w.Slack.Click(channel, progress.TS, asker, "slackbot_stop", stopValue(t, progress)); err != nil {
		t.Fatal(err)
	}
	for _, m := range bottest.BotMessages(w.Answered(channel, ts2, "Stopped by")) {
		if _, _, ok := feedbackButtons(t, m); ok {
			t.Errorf("a stopped session has feedback buttons: %s", m.Blocks)
		}
	}
}

func TestFeedbackButtonsCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	off := false
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) { c.Slack.Feedback = &off }))
	w.Model.Push(llmtest.TextReport("An answer nobody rates."))
	ts := w.Slack.Mention(channel, asker, "a question")
	for _, m := range bottest.BotMessages(w.Answered(channel, ts, "nobody rates")) {
		if _, _, ok := feedbackButtons(t, m); ok {
			t.Errorf("slack.feedback: false, and the answer has feedback buttons: %s", m.Blocks)
		}
	}
}

func TestAFeedbackClickOnAnUnknownSessionIsAckedAndIgnored(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	// Buttons naming a session the store does not hold (expired, or
	// another bot's), posted in the bot's name.
	api := slackapi.New(w.Slack.BotToken(), slackapi.OptionAPIURL(w.Slack.APIURL()))
	plain := func(s string) *slackapi.TextBlockObject {
		return slackapi.NewTextBlockObject("plain_text", s, true, false)
	}
	_, msgTS, err := api.PostMessage(channel, slackapi.MsgOptionText("an old answer", false), slackapi.MsgOptionBlocks(
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject("mrkdwn", "An old answer", false, false), nil, nil),
		slackapi.NewContextActionsBlock("", slackapi.NewFeedbackButtonsBlockElement(feedbackAction,
			slackapi.NewFeedbackButton(plain("👍"), "positive:C0GENERAL-gone"), slackapi.NewFeedbackButton(plain("👎"), "negative:C0GENERAL-gone")))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Slack.Click(channel, msgTS, asker, feedbackAction, "positive:C0GENERAL-gone"); err != nil {
		t.Fatal(err)
	}
	w.Logged("feedback on a session this bot does not know; ignored")
	clicksAcked(w)
	// The bot still answers, and the click left no trace.
	w.Model.Push(llmtest.TextReport("Still here."))
	ts := w.Slack.Mention(channel, asker, "are you there?")
	w.Answered(channel, ts, "Still here")
	if _, found, _ := w.Store.Session(t.Context(), "C0GENERAL-gone"); found {
		t.Error("the click made a session record")
	}
	if n := len(w.Feedback()); n != 0 || len(w.Slack.Ephemerals()) != 0 {
		t.Errorf("OnFeedback called %d times, ephemerals %+v", n, w.Slack.Ephemerals())
	}
}
