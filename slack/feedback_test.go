package slack_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
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
func (w *world) thanked(user, ts string, times int) {
	w.t.Helper()
	w.waitFor("the thanks to "+user, func() bool {
		n := 0
		for _, e := range w.srv.Ephemerals() {
			if e.User == user && e.Text == "Thanks for the feedback." && e.ThreadTS == ts && e.Channel == channel {
				n++
			}
		}
		return n >= times
	})
}

// waitForLog waits until the bot has logged a line with message msg.
func (w *world) waitForLog(msg string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for w.logs.FilterMessage(msg).Len() == 0 {
		select {
		case <-ctx.Done():
			w.t.Fatalf("the bot never logged %q", msg)
		case <-tick.C:
		}
	}
}

func TestAnAnswerEndsWithFeedbackButtonsAndEachPersonsClickIsRecorded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.srv.AddUser("U0BOB", "bob")
	w.model.Push(slackReport([]any{map[string]any{"blocks": []any{section("Paris is the *capital*.")}}}))
	ts := w.srv.Mention(channel, asker, "what is the capital of France?")
	bot := botMessages(w.answered(channel, ts, "capital"))
	answer := bot[len(bot)-1]
	positive, negative, ok := feedbackButtons(t, answer)
	if !ok {
		t.Fatalf("the answer has no feedback buttons: %s", answer.Blocks)
	}
	id := strings.TrimPrefix(positive, "positive:")
	if id == positive || negative != "negative:"+id {
		t.Fatalf("button values %q and %q do not name one session", positive, negative)
	}
	rec, found, err := w.store.Session(w.ctx, id)
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
		if _, err := w.srv.Click(channel, answer.TS, c.user, feedbackAction, c.value); err != nil {
			t.Fatal(err)
		}
		thanks[c.user]++
		w.thanked(c.user, ts, thanks[c.user])
		rec, _, _ := w.store.Session(w.ctx, id)
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
	envs := w.srv.Envelopes()
	for i := len(envs) - 1; i >= 0; i-- {
		if envs[i].Type == "interactive" {
			if _, err := w.srv.Redeliver(envs[i].ID); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	w.waitForLog("duplicate feedback click ignored")
	if got := w.feedbackCalls(); !slices.Equal(got, []string{"positive", "negative", "negative"}) {
		t.Errorf("OnFeedback was called with %v", got)
	}
	lines := w.logs.FilterMessage("feedback recorded").All()
	if len(lines) != 3 {
		t.Fatalf("%d 'feedback recorded' lines, want 3", len(lines))
	}
	if f := lines[0].ContextMap(); f["session"] != id || f["value"] != "positive" || f["user"] != "U0BOB" {
		t.Errorf("the log line carries %v", f)
	}
	w.clicksAcked()
}

// clicksAcked waits until every click envelope has been acked.
func (w *world) clicksAcked() {
	w.t.Helper()
	w.waitFor("every click to be acked", func() bool {
		for _, e := range w.srv.Envelopes() {
			if e.Type == "interactive" && !e.Acked {
				return false
			}
		}
		return true
	})
}

func TestASplitAnswerCarriesFeedbackButtonsOnItsLastPartOnly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var b strings.Builder
	for range 120 {
		b.WriteString("## Part\n\nParagraph " + strings.Repeat("long text ", 40) + "\n\n")
	}
	b.WriteString("THE END")
	w.model.Push(textReport(b.String()))
	ts := w.srv.Mention(channel, asker, "write a lot")
	var bot []emulator.Message
	w.waitFor("the answer's last part", func() bool {
		bot = botMessages(w.srv.Thread(channel, ts))
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
	if !strings.Contains(messageText(bot[len(bot)-1]), "THE END") {
		t.Error("the buttons are not under the end of the answer")
	}
}

func TestFailedAndStoppedSessionsCarryNoFeedbackButtons(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Push(llmtest.Reply{Status: 401, ErrorType: "invalid_api_key"})
	ts := w.srv.Mention(channel, asker, "hello?")
	for _, m := range botMessages(w.answered(channel, ts, "credentials")) {
		if _, _, ok := feedbackButtons(t, m); ok {
			t.Errorf("a failure note has feedback buttons: %s", m.Blocks)
		}
	}

	before := len(w.model.Requests())
	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts2 := w.srv.Mention(channel, asker, "take your time")
	progress := w.progressMessage(ts2)
	w.model.Wait(before + 1) // the session is running: Stop can reach it
	if _, err := w.srv.Click(channel, progress.TS, asker, "slackbot_stop", stopValue(t, progress)); err != nil {
		t.Fatal(err)
	}
	for _, m := range botMessages(w.answered(channel, ts2, "Stopped by")) {
		if _, _, ok := feedbackButtons(t, m); ok {
			t.Errorf("a stopped session has feedback buttons: %s", m.Blocks)
		}
	}
}

func TestFeedbackButtonsCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	off := false
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) { c.Slack.Feedback = &off })
	w.model.Push(textReport("An answer nobody rates."))
	ts := w.srv.Mention(channel, asker, "a question")
	for _, m := range botMessages(w.answered(channel, ts, "nobody rates")) {
		if _, _, ok := feedbackButtons(t, m); ok {
			t.Errorf("slack.feedback: false, and the answer has feedback buttons: %s", m.Blocks)
		}
	}
}

func TestAFeedbackClickOnAnUnknownSessionIsAckedAndIgnored(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Buttons naming a session the store does not hold (expired, or
	// another bot's), posted in the bot's name.
	api := slackapi.New(w.srv.BotToken(), slackapi.OptionAPIURL(w.srv.APIURL()))
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
	if _, err := w.srv.Click(channel, msgTS, asker, feedbackAction, "positive:C0GENERAL-gone"); err != nil {
		t.Fatal(err)
	}
	w.waitForLog("feedback on a session this bot does not know; ignored")
	w.clicksAcked()
	// The bot still answers, and the click left no trace.
	w.model.Push(textReport("Still here."))
	ts := w.srv.Mention(channel, asker, "are you there?")
	w.answered(channel, ts, "Still here")
	if _, found, _ := w.store.Session(w.ctx, "C0GENERAL-gone"); found {
		t.Error("the click made a session record")
	}
	if n := len(w.feedbackCalls()); n != 0 || len(w.srv.Ephemerals()) != 0 {
		t.Errorf("OnFeedback called %d times, ephemerals %+v", n, w.srv.Ephemerals())
	}
}
