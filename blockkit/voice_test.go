package blockkit_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit"
)

// strict is the default voice: the asker U0ASK may be pinged, Jane is
// known by name, images.example.com is trusted, slackbot_stop is reserved.
func strict() blockkit.VoicePolicy {
	return blockkit.VoicePolicy{
		Pingable: map[string]bool{"U0ASK": true},
		Name: func(id string) string {
			if id == "U0JANE" {
				return "Jane <Doe>"
			}
			return ""
		},
		TrustedHosts:      []string{"images.example.com", "*.cdn.example.com"},
		ReservedActionIDs: []string{"slackbot_stop", "slackbot_feedback"},
	}
}

// voicedJSON is the JSON of message m (as chat.postMessage reads it) after
// Voice under p.
func voicedJSON(t *testing.T, m blockkit.Message, p blockkit.VoicePolicy) string {
	t.Helper()
	out := blockkit.Voice(m, p)
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	// Decode the \u003c escapes json.Marshal writes, so tests read tokens.
	var back any
	_ = json.Unmarshal(b, &back)
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(back)
	return sb.String()
}

// blocksOf decodes a JSON array of blocks.
func blocksOf(t *testing.T, js string) []slack.Block {
	t.Helper()
	var bs slack.Blocks
	if err := json.Unmarshal([]byte(js), &bs); err != nil {
		t.Fatalf("blocks %s: %v", js, err)
	}
	return bs.BlockSet
}

func section(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}})
	return string(b)
}

// manyOptions is the JSON of n option objects, each with a url under base.
func manyOptions(n int, base string) string {
	opts := make([]string, n)
	for i := range opts {
		opts[i] = fmt.Sprintf(`{"text":{"type":"plain_text","text":"option %d"},"value":"%d","url":"%s%d"}`, i, i, base, i)
	}
	return strings.Join(opts, ",")
}

func TestVoiceKeepsWhatTheMessageMayDoAndRewritesTheRest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		blocks    string // a JSON array of blocks
		text      string // the notification text
		policy    func(*blockkit.VoicePolicy)
		want      []string
		once      []string // each in the output exactly once
		forbidden []string
	}{
		{name: "broadcasts in mrkdwn are words", blocks: "[" + section("<!channel> <!here> <!everyone> <!here|here> <!subteam^S1> <!subteam^S2|@oncall>") + "]",
			want:      []string{"@channel @here @everyone @here @group @oncall"},
			forbidden: []string{"<!channel>", "<!here", "<!everyone>", "<!subteam"}},
		{name: "broadcasts the agent allows stay tokens", blocks: "[" + section("<!channel> and <!subteam^S1>") + "]",
			policy: func(p *blockkit.VoicePolicy) { p.AllowBroadcasts = true },
			want:   []string{"<!channel> and <!subteam^S1>"}},
		{name: "a date token stays", blocks: "[" + section("<!date^1392734382^{date}|Feb 18, 2014>") + "]",
			want: []string{"<!date^1392734382^{date}|Feb 18, 2014>"}},
		{name: "an unknown bang token is shown as written", blocks: "[" + section("<!foo>") + "]",
			want: []string{"&lt;!foo&gt;"}, forbidden: []string{"<!foo>"}},
		{name: "the asker's mention pings, a stranger's is their name and an unknown one is someone",
			blocks: "[" + section("<@U0ASK> ask <@U0JANE> and <@U0NOBODY|boss>") + "]",
			want:   []string{"<@U0ASK> ask @Jane &lt;Doe&gt; and @someone"}, forbidden: []string{"<@U0JANE>", "<@U0NOBODY"}},
		{name: "mentions: all pings everyone", blocks: "[" + section("<@U0JANE>") + "]",
			policy: func(p *blockkit.VoicePolicy) { p.PingAll = true }, want: []string{"<@U0JANE>"}},
		{name: "mentions: none pings nobody, the asker neither", blocks: "[" + section("<@U0ASK>") + "]",
			policy: func(p *blockkit.VoicePolicy) { p.Pingable = nil }, want: []string{"@someone"}, forbidden: []string{"<@U0ASK>"}},
		{name: "a channel link stays", blocks: "[" + section("<#C0123|general>") + "]", want: []string{"<#C0123|general>"}},
		{name: "a label naming another host shows the real target", blocks: "[" + section("<https://evil.example/login|https://okta.company.com> <https://evil.example|okta.company.com> <https://evil.example|Sign in at okta.company.com/sso>") + "]",
			want:      []string{"<https://evil.example/login> <https://evil.example> <https://evil.example>"},
			forbidden: []string{"okta"}},
		{name: "a label matching its host stays", blocks: "[" + section("<https://docs.example.com/a|docs.example.com> <https://x.example/y|the guide> <mailto:a@b.example|a@b.example>") + "]",
			want: []string{"<https://docs.example.com/a|docs.example.com> <https://x.example/y|the guide> <mailto:a@b.example|a@b.example>"}},
		{name: "a URL button on an untrusted host becomes a link with its host",
			blocks: `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Open"},"url":"https://evil.example/x?d=1","action_id":"go"}]}]`,
			want:   []string{`"text":"<https://evil.example/x?d=1|Open> (evil.example)"`}, forbidden: []string{`"button"`}},
		{name: "a URL button on a trusted host stays",
			blocks: `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Open"},"url":"https://a.cdn.example.com/x","action_id":"go"}]}]`,
			want:   []string{`"url":"https://a.cdn.example.com/x"`, `"type":"button"`}},
		{name: "the trusted wildcard does not cover the apex",
			blocks: `[{"type":"image","image_url":"https://cdn.example.com/p.png","alt_text":"chart"}]`,
			want:   []string{"<https://cdn.example.com/p.png|chart> (cdn.example.com)"}, forbidden: []string{`"image"`}},
		{name: "an image on an untrusted host becomes a link",
			blocks: `[{"type":"image","image_url":"https://evil.example/p.png?secret=1","alt_text":"chart"}]`,
			want:   []string{"<https://evil.example/p.png?secret=1|chart> (evil.example)"}, forbidden: []string{`"image_url"`}},
		{name: "an image on a trusted host stays",
			blocks: `[{"type":"image","image_url":"https://images.example.com/p.png","alt_text":"chart"}]`,
			want:   []string{`"image_url":"https://images.example.com/p.png"`}},
		{name: "an untrusted accessory image and button leave their section",
			blocks: `[{"type":"section","text":{"type":"mrkdwn","text":"hi"},"accessory":{"type":"image","image_url":"https://evil.example/a.png","alt_text":"a"}},` +
				`{"type":"section","text":{"type":"mrkdwn","text":"ho"},"accessory":{"type":"button","text":{"type":"plain_text","text":"B"},"url":"http://evil.example/b"}}]`,
			want: []string{"<https://evil.example/a.png|a> (evil.example)", "<http://evil.example/b|B> (evil.example)", `"text":"hi"`, `"text":"ho"`}, forbidden: []string{"accessory"}},
		{name: "an untrusted image in a context becomes a link in place",
			blocks: `[{"type":"context","elements":[{"type":"image","image_url":"https://evil.example/i.png","alt_text":"i"},{"type":"mrkdwn","text":"<!here> note"}]}]`,
			want:   []string{`"type":"context"`, "<https://evil.example/i.png|i> (evil.example)", "@here note"}, forbidden: []string{"image_url", "<!here>"}},
		{name: "fields and headers", blocks: `[{"type":"section","fields":[{"type":"mrkdwn","text":"<!channel>"},{"type":"mrkdwn","text":"<@U0JANE>"}]},{"type":"header","text":{"type":"plain_text","text":"Title"}}]`,
			want: []string{`"text":"@channel"`, `"text":"@Jane &lt;Doe&gt;"`, `"text":"Title"`}},
		{name: "a model button with a reserved action id gets another",
			blocks: `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Stop"},"action_id":"slackbot_stop","value":"x|U0ASK"}]}]`,
			want:   []string{`"action_id":"model_slackbot_stop"`}, forbidden: []string{`"action_id":"slackbot_stop"`}},
		{name: "model feedback buttons with the reserved id get another",
			blocks: `[{"type":"context_actions","elements":[{"type":"feedback_buttons","action_id":"slackbot_feedback","positive_button":{"text":{"type":"plain_text","text":"y"},"value":"positive:s"},"negative_button":{"text":{"type":"plain_text","text":"n"},"value":"negative:s"}}]}]`,
			want:   []string{`"action_id":"model_slackbot_feedback"`}},
		{name: "rich_text broadcasts, groups, strangers and disguised links",
			blocks: `[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[` +
				`{"type":"broadcast","range":"channel"},{"type":"usergroup","usergroup_id":"S1"},{"type":"user","user_id":"U0JANE"},{"type":"user","user_id":"U0ASK"},` +
				`{"type":"link","url":"https://evil.example","text":"okta.company.com"},{"type":"link","url":"https://ok.example","text":"ok.example"},{"type":"text","text":"<!channel>"}]}]}]`,
			want: []string{`{"text":"@channel","type":"text"}`, `{"text":"@group","type":"text"}`, `{"text":"@Jane <Doe>","type":"text"}`, `"user_id":"U0ASK"`,
				`{"type":"link","url":"https://evil.example"}`, `"text":"ok.example"`, `{"text":"<!channel>","type":"text"}`},
			forbidden: []string{"broadcast", "usergroup", "U0JANE", "okta"}},
		{name: "a markdown block's tokens and disguised links", blocks: `[{"type":"markdown","text":"<!here> see [https://okta.company.com](https://evil.example) or [docs](https://docs.example)"}]`,
			want: []string{"@here see [https://evil.example](https://evil.example) or [docs](https://docs.example)"}},
		{name: "a table cell's rich text", blocks: `[{"type":"table","rows":[[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"broadcast","range":"everyone"}]}]}]]}]`,
			want: []string{`"text":"@everyone"`}, forbidden: []string{"broadcast"}},
		{name: "checkbox descriptions and confirm dialogs", blocks: `[{"type":"actions","elements":[{"type":"checkboxes","action_id":"c","options":[{"text":{"type":"mrkdwn","text":"<!channel>"},"value":"v","description":{"type":"mrkdwn","text":"<@U0JANE>"}}]},` +
			`{"type":"button","text":{"type":"plain_text","text":"Go"},"action_id":"slackbot_feedback","confirm":{"title":{"type":"plain_text","text":"t"},"text":{"type":"mrkdwn","text":"<!everyone>"},"confirm":{"type":"plain_text","text":"y"},"deny":{"type":"plain_text","text":"n"}}}]}]`,
			want:      []string{`"text":"@channel"`, `"text":"@Jane &lt;Doe&gt;"`, `"text":"@everyone"`, `"action_id":"model_slackbot_feedback"`},
			forbidden: []string{"<!", "<@"}},
		{name: "the notification text follows the same rules", blocks: "[" + section("x") + "]", text: "<!channel> <@U0JANE> <https://evil.example|okta.company.com> <@U0ASK>",
			want: []string{`"text":"@channel @Jane &lt;Doe&gt; <https://evil.example> <@U0ASK>"`}},
		{name: "an untrusted video becomes a link", blocks: `[{"type":"video","video_url":"https://evil.example/v","thumbnail_url":"https://evil.example/t.png","alt_text":"v","title":{"type":"plain_text","text":"Demo"}}]`,
			want: []string{"<https://evil.example/v|Demo> (evil.example)"}, forbidden: []string{"thumbnail_url"}},
		{name: "an overflow option's untrusted url becomes a link beside the block and the option stays without it",
			blocks: `[{"type":"actions","elements":[{"type":"overflow","action_id":"more","options":[` +
				`{"text":{"type":"plain_text","text":"Docs"},"value":"d","url":"https://evil.example/x?d=1"},` +
				`{"text":{"type":"plain_text","text":"Chart"},"value":"c","url":"https://images.example.com/c"},` +
				`{"text":{"type":"plain_text","text":"Run"},"value":"r","url":"javascript:alert(1)"}]}]}]`,
			want: []string{`"type":"overflow"`, `{"text":{"text":"Docs","type":"plain_text"},"value":"d"}`, `"url":"https://images.example.com/c"`,
				`"text":"<https://evil.example/x?d=1|Docs> (evil.example)\nRun (javascript:alert(1))"`},
			once:      []string{"evil.example/x"},
			forbidden: []string{`"url":"https://evil.example`, `"url":"javascript`}},
		{name: "a select's options, option groups and initial options lose their untrusted urls, each shown once",
			blocks: `[{"type":"section","text":{"type":"mrkdwn","text":"pick"},"accessory":{"type":"static_select","action_id":"s","option_groups":[{"label":{"type":"plain_text","text":"g"},"options":[` +
				`{"text":{"type":"plain_text","text":"A"},"value":"a","url":"https://evil.example/a"}]}],` +
				`"initial_option":{"text":{"type":"plain_text","text":"A"},"value":"a","url":"https://evil.example/a"}}},` +
				`{"type":"actions","elements":[{"type":"multi_static_select","action_id":"m","options":[{"text":{"type":"plain_text","text":"B"},"value":"b","url":"http://evil.example/b"}],` +
				`"initial_options":[{"text":{"type":"plain_text","text":"B"},"value":"b","url":"http://evil.example/b"}]},` +
				`{"type":"external_select","action_id":"e","initial_option":{"text":{"type":"plain_text","text":"C"},"value":"c","url":"https://evil.example/c"}}]}]`,
			want: []string{`"type":"static_select"`, `"type":"multi_static_select"`, `"type":"external_select"`, `"text":"pick"`,
				"<https://evil.example/a|A> (evil.example)", "<http://evil.example/b|B> (evil.example)", "<https://evil.example/c|C> (evil.example)"},
			once:      []string{"evil.example/a", "evil.example/b"},
			forbidden: []string{`"url"`}},
		{name: "a hundred untrusted option urls add one section of the links it holds",
			blocks: `[{"type":"actions","elements":[{"type":"static_select","action_id":"s","options":[` + manyOptions(100, "https://evil.example/") + `]}]}]`,
			want:   []string{`<https://evil.example/0|option 0> (evil.example)\n<https://evil.example/1|option 1> (evil.example)`},
			once:   []string{`"type":"section"`, `"value":"99"`}, forbidden: []string{`"url"`, "evil.example/99|"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := strict()
			if c.policy != nil {
				c.policy(&p)
			}
			got := voicedJSON(t, blockkit.Message{Text: c.text, Blocks: blocksOf(t, c.blocks)}, p)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("want %s in\n%s", w, got)
				}
			}
			for _, o := range c.once {
				if n := strings.Count(got, o); n != 1 {
					t.Errorf("%s is %d times in\n%s", o, n, got)
				}
			}
			for _, f := range c.forbidden {
				if strings.Contains(got, f) {
					t.Errorf("%s is still in\n%s", f, got)
				}
			}
		})
	}
}

func TestVoiceLeavesTheSendersControlsAndTheInputAsTheyAre(t *testing.T) {
	t.Parallel()
	stop := slack.NewActionBlock("slackbot_progress", slack.NewButtonBlockElement("slackbot_stop", "s|U0ASK",
		slack.NewTextBlockObject(slack.PlainTextType, "Stop", false, false)))
	model := slack.NewActionBlock("", slack.NewButtonBlockElement("slackbot_stop", "s|U0ASK",
		slack.NewTextBlockObject(slack.PlainTextType, "Stop", false, false)))
	text := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "<!channel>", false, false), nil, nil)
	m := blockkit.Message{Text: "t", Blocks: []slack.Block{text, model, stop}, Controls: []slack.Block{stop}}
	out := blockkit.Voice(m, strict())
	if out.Blocks[2] != slack.Block(stop) || stop.Elements.ElementSet[0].(*slack.ButtonBlockElement).ActionID != "slackbot_stop" {
		t.Errorf("the sender's own Stop button was changed: %#v", out.Blocks[2])
	}
	if id := out.Blocks[1].(*slack.ActionBlock).Elements.ElementSet[0].(*slack.ButtonBlockElement).ActionID; id == "slackbot_stop" {
		t.Errorf("the model's button kept the reserved action id")
	}
	if text.Text.Text != "<!channel>" || model.Elements.ElementSet[0].(*slack.ButtonBlockElement).ActionID != "slackbot_stop" {
		t.Errorf("Voice modified its input")
	}
	if err := blockkit.Validate(out); err != nil {
		t.Errorf("the voiced message does not validate: %v", err)
	}
}

func TestADisguisedMarkdownLinkConvertedToMrkdwnShowsItsTarget(t *testing.T) {
	t.Parallel()
	for _, md := range []string{"Log in: [https://okta.company.com](https://evil.example/login)", "Log in: <https://evil.example/login|okta.company.com>"} {
		msgs := blockkit.FromMarkdown(md)
		if len(msgs) != 1 {
			t.Fatalf("%q: %d messages", md, len(msgs))
		}
		// The notification text shows the label as words, a link to
		// nowhere else; the blocks hold the link.
		m := msgs[0]
		m.Text = ""
		got := voicedJSON(t, m, strict())
		if strings.Contains(got, "okta") || !strings.Contains(got, "<https://evil.example/login>") {
			t.Errorf("%q posts as %s", md, got)
		}
	}
}

func TestVoiceChangesNothingInAnOrdinaryAnswer(t *testing.T) {
	t.Parallel()
	msgs := blockkit.FromMarkdown("# Report\n\nThe *build* passed; see <https://ci.example/1|ci.example> and the [log](https://ci.example/log).\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
	for _, m := range msgs {
		before, _ := json.Marshal(m)
		after, _ := json.Marshal(blockkit.Voice(m, strict()))
		if string(before) != string(after) {
			t.Errorf("an ordinary answer changed:\n%s\n%s", before, after)
		}
	}
}
