package slack_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
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
		llmtest.Section("Hey <!channel> <!here> <!everyone> <!subteam^S1|@oncall>: <@" + asker + "> asked, <@" + onlooker + "> and <@" + bob + "> should look."),
		llmtest.Section("Log in at <https://evil.example/login|okta.company.com> or [https://okta.company.com](https://evil.example/sso)."),
		map[string]any{"type": "image", "image_url": "https://evil.example/pixel.png?d=secret", "alt_text": "chart"},
		map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "action_id": "slackbot_stop", "value": "x|" + asker, "text": map[string]any{"type": "plain_text", "text": "Stop"}},
			map[string]any{"type": "button", "action_id": "open", "url": "https://evil.example/phish", "text": map[string]any{"type": "plain_text", "text": "Open the report"}},
		}},
	}
}

// posted is the text and blocks of the bot's messages in the thread ts as
// the emulator recorded them, with JSON's \u003c written as <.
func posted(w *bottest.World, ts string) string {
	var b strings.Builder
	for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
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
	w := bottest.Start(t)
	w.Slack.AddUser(onlooker, "eve")
	w.Slack.AddUser(bob, "bob")
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": attackerBlocks()}}))
	ts := w.Slack.Mention(channel, asker, "what's up?")
	w.Answered(channel, ts, "should look")
	got := posted(w, ts)
	lacks(t, got, "<!channel>", "<!here>", "<!everyone>", "<!subteam", "<@"+onlooker+">", "<@"+bob+">",
		"|okta", "|https://okta", "image_url", `"url":"https://evil.example/phish"`, `"action_id":"slackbot_stop"`)
	holds(t, got, "<@"+asker+">", "@channel @here @everyone @oncall", "@eve and @bob should look",
		"<https://evil.example/login>", "<https://evil.example/sso>",
		"<https://evil.example/pixel.png?d=secret|chart> (evil.example)", "<https://evil.example/phish|Open the report> (evil.example)")

	// Nothing the bot posts unfurls.
	for _, c := range w.Slack.Calls("chat.postMessage") {
		if c.Params.Get("unfurl_links") != "false" || c.Params.Get("unfurl_media") != "false" {
			t.Errorf("a post unfurls: unfurl_links=%q unfurl_media=%q", c.Params.Get("unfurl_links"), c.Params.Get("unfurl_media"))
		}
	}

	// The model's Stop button is not the bot's: no click on it stops anything.
	answer := bottest.BotMessages(w.Slack.Thread(channel, ts))
	last := answer[len(answer)-1]
	if _, err := w.Slack.Click(channel, last.TS, asker, "slackbot_stop", ""); !errors.Is(err, emulator.ErrNoSuchAction) {
		t.Errorf("the answer holds a button with the Stop action id (click: %v)", err)
	}
	// The bot's own feedback buttons still carry theirs, and work.
	positive, _, ok := feedbackButtons(t, last)
	if !ok {
		t.Fatalf("the answer lost its feedback buttons: %s", last.Blocks)
	}
	if _, err := w.Slack.Click(channel, last.TS, asker, feedbackAction, positive); err != nil {
		t.Fatal(err)
	}
	thanked(w, asker, ts, 1)
}

func TestTheRealStopButtonStillStopsASessionUnderTheVoice(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("too late")
	})
	ts := w.Slack.Mention(channel, asker, "take your time")
	p := w.ProgressMessage(channel, ts)
	if _, err := w.Slack.Click(channel, p.TS, asker, "slackbot_stop", ""); err != nil {
		t.Fatalf("the progress message's own Stop button cannot be clicked: %v", err)
	}
	w.Answered(channel, ts, "Stopped by")
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
			w := bottest.Start(t, bottest.WithConfig(func(cfg *config.Config) {
				a := cfg.Agents["assistant"]
				a.AllowBroadcasts, a.Mentions = c.broadcasts, c.mentions
			}))
			w.Slack.AddUser(onlooker, "eve")
			w.Slack.AddUser(bob, "bob")
			w.Model.Push(llmtest.TextReport("First answer."))
			ts := w.Slack.Mention(channel, asker, "first")
			w.Answered(channel, ts, "First answer")
			w.Slack.Reply(channel, ts, bob, "I was here too")
			w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": attackerBlocks()}}))
			w.Slack.Reply(channel, ts, asker, "<@"+w.Slack.BotUserID()+"> and now?")
			w.Answered(channel, ts, "should look")
			got := posted(w, ts)
			holds(t, got, c.want...)
			lacks(t, got, c.avoid...)
		})
	}
}

func TestAProgressMessageShowsTheModelsStatusWithoutBroadcastingOrPinging(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Agents["assistant"].Tools = append(c.Agents["assistant"].Tools, agent.TaskStatusTool)
	}))
	w.Slack.AddUser(onlooker, "eve")
	g := newGate()
	t.Cleanup(g.open)
	turns := 0
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		turns++
		if turns == 1 {
			return llmtest.Call(agent.TaskStatusTool, `{"status":"in-progress","done":"","pending":"more","now":"telling <!channel> and <@`+onlooker+`> at <https://evil.example|okta.company.com>","ready_for_final_report":false,"need_to_run_more_tools":true}`)
		}
		<-g.ch
		return llmtest.TextReport("Done.")
	})
	ts := w.Slack.Mention(channel, asker, "work on it")
	w.Eventually("the status in the progress message", func() bool {
		return strings.Contains(posted(w, ts), "telling")
	})
	got := posted(w, ts)
	lacks(t, got, "<!channel>", "<@"+onlooker+">", "<https://evil.example|okta")
	holds(t, got, `"action_id":"slackbot_stop"`)
	g.open()
	w.Answered(channel, ts, "Done.")
}

func TestAnEphemeralRefusalFollowsTheVoiceToo(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(cfg *config.Config) {
		cfg.Slack.Allow.Users = []string{"U0SOMEONEELSE"}
		cfg.Slack.RejectionMessage = "Not here, <!channel>; ask <@" + onlooker + ">."
	}))
	w.Slack.AddUser(onlooker, "eve")
	w.Slack.Mention(channel, asker, "let me in")
	var text string
	w.Eventually("the refusal", func() bool {
		for _, e := range w.Slack.Ephemerals() {
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
	w := bottest.Start(t, bottest.WithConfig(func(cfg *config.Config) {
		cfg.Slack.TrustedHosts = []string{"*.example.com"}
	}))
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{
		llmtest.Section("The chart:"),
		map[string]any{"type": "image", "image_url": "https://img.example.com/chart.png", "alt_text": "chart"},
		map[string]any{"type": "actions", "elements": []any{
			map[string]any{"type": "button", "action_id": "open", "url": "https://ci.example.com/run/1", "text": map[string]any{"type": "plain_text", "text": "Open the run"}}}},
	}}}))
	ts := w.Slack.Mention(channel, asker, "chart?")
	w.Answered(channel, ts, "The chart")
	holds(t, posted(w, ts), `"image_url":"https://img.example.com/chart.png"`, `"url":"https://ci.example.com/run/1"`)
}

func TestAToolsTextAdoptedAsTheAnswerShowsItsSlackTokensAsWords(t *testing.T) {
	t.Parallel()
	_, orch := everything(t, "")
	// Even an agent allowed to broadcast and ping anyone does not do it
	// with a tool's words.
	w := bottest.Start(t, bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }), bottest.WithConfig(func(cfg *config.Config) {
		a := cfg.Agents["assistant"]
		a.MaxTurns, a.AllowBroadcasts, a.Mentions = 2, true, config.MentionsAll
	}))
	w.Model.Push(
		llmtest.Call("everything__echo", `{"message":"<!channel> <@`+onlooker+`> see <https://evil.example|okta.company.com>"}`),
		llmtest.Call(agent.FinalReportTool, `{"status":"success","report_format":"slack-block-kit"}`),
		llmtest.Call(agent.FinalReportTool, `{"status":"success","report_format":"slack-block-kit","report_content":""}`),
	)
	ts := w.Slack.Mention(channel, asker, "echo it")
	w.Answered(channel, ts, "Echo:")
	got := posted(w, ts)
	lacks(t, got, "<!channel>", "<@"+onlooker+">", "|okta.company.com>")
	holds(t, got, "&lt;!channel&gt;")
}
