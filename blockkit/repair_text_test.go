package blockkit

import (
	"testing"

	"github.com/slack-go/slack"
)

// firstText returns the text object of the first block of the first
// message: a header's or section's text, or a context's first element.
func firstText(t *testing.T, msgs []Message) *slack.TextBlockObject {
	t.Helper()
	switch b := msgs[0].Blocks[0].(type) {
	case *slack.HeaderBlock:
		return b.Text
	case *slack.SectionBlock:
		return b.Text
	case *slack.ContextBlock:
		if tx, ok := b.ContextElements.Elements[0].(*slack.TextBlockObject); ok {
			return tx
		}
	}
	t.Fatalf("first block %T holds no text object", msgs[0].Blocks[0])
	return nil
}

// wantFirstText checks the type and text of the first text object.
func wantFirstText(typ, text string) func(t *testing.T, msgs []Message) {
	return func(t *testing.T, msgs []Message) {
		t.Helper()
		if got := firstText(t, msgs); got.Type != typ || got.Text != text {
			t.Errorf("text object %s %q, want %s %q", got.Type, got.Text, typ, text)
		}
	}
}

func TestRepairShowsMarkdownInPlainTextAsPlainTextKeepingLinkAddresses(t *testing.T) {
	t.Parallel()
	block := func(b string) string { return `[{"blocks":[` + b + `]}]` }
	runRepairTests(t, []repairTest{
		{name: "Markdown in a plain_text section reads as plain text, the link's address after its label",
			messages: block(`{"type":"section","text":{"type":"plain_text","text":"**Bold** in plain text and a [link](https://docs.example.com/plain)"}}`),
			hasNot:   []string{"**", "]("}, kinds: []string{"markdown_converted"},
			check: wantFirstText(slack.PlainTextType, "Bold in plain text and a link (https://docs.example.com/plain)")},
		{name: "Markdown in a plain_text context element reads as plain text",
			messages: block(`{"type":"context","elements":[{"type":"plain_text","text":"see the [runbook](https://r.example.com/x) **now**"}]}`),
			check:    wantFirstText(slack.PlainTextType, "see the runbook (https://r.example.com/x) now")},
		{name: "a Markdown link in a header keeps its address after its label",
			messages: block(`{"type":"header","text":{"type":"plain_text","text":"Release [notes](https://x.example.com/n)"}}`),
			check:    wantFirstText(slack.PlainTextType, "Release notes (https://x.example.com/n)")},
		{name: "a header written as Markdown keeps its link's address",
			messages: block(`{"type":"header","text":{"type":"markdown","text":"**Q3** [numbers](https://x.io)"}}`),
			check:    wantFirstText(slack.PlainTextType, "Q3 numbers (https://x.io)")},
		{name: "a link whose label is its address shows the address once",
			messages: block(`{"type":"section","text":{"type":"plain_text","text":"**Docs**: [https://d.io/a](https://d.io/a)"}}`),
			check:    wantFirstText(slack.PlainTextType, "Docs: https://d.io/a")},
		{name: "a mail link shows its address without mailto",
			messages: block(`{"type":"section","text":{"type":"plain_text","text":"**Mail** [ops](mailto:ops@x.io)"}}`),
			check:    wantFirstText(slack.PlainTextType, "Mail ops (ops@x.io)")},
		{name: "plain_text without Markdown is kept as written",
			messages: block(`{"type":"section","text":{"type":"plain_text","text":"*Deploy* 2 * 3 ~done~"}}`),
			check:    wantFirstText(slack.PlainTextType, "*Deploy* 2 * 3 ~done~")},
	})
}

func TestRepairDecodesEntitiesWrittenInPlainTextOnce(t *testing.T) {
	t.Parallel()
	header := func(s string) string {
		return `[{"blocks":[{"type":"header","text":{"type":"plain_text","text":` + q(s) + `}}]}]`
	}
	cases := []struct {
		name, in, block, notification string
	}{
		{"an ampersand the model escaped shows as an ampersand and is escaped once in the notification",
			"R&D sync: roadmap &amp; staffing", "R&D sync: roadmap & staffing", "R&amp;D sync: roadmap &amp; staffing"},
		{"escaped angle brackets show as brackets", "p95 &lt; 200ms &gt; p50", "p95 < 200ms > p50", "p95 &lt; 200ms &gt; p50"},
		{"an entity's text escaped once shows as the entity's text", "the page shows &amp;amp; raw", "the page shows &amp; raw", "the page shows &amp;amp; raw"},
		{"text without entities is kept", "a < b & c", "a < b & c", "a &lt; b &amp; c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs, _ := Repair([]byte(header(tc.in)), "")
			checkMessages(t, msgs, hasLiteralEntity(tc.in))
			if got := firstText(t, msgs).Text; got != tc.block {
				t.Errorf("header %q, want %q", got, tc.block)
			}
			if got := msgs[0].Text; got != tc.notification {
				t.Errorf("notification %q, want %q", got, tc.notification)
			}
		})
	}
}

func TestRepairUnescapesOnlyTextEscapedTwiceThroughout(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
	}{
		{"a text whose every entity is escaped twice is unescaped once",
			"latency &amp;gt; 2s &amp;amp; rising", "latency &gt; 2s &amp; rising"},
		{"a text escaped three times is unescaped to one escape",
			"a &amp;amp;lt; b", "a &lt; b"},
		{"a text that also holds a single escape is escaped correctly: its &amp;amp; shows the text &amp;",
			"The HTML shows &amp;amp; where it should show &amp; in the footer.",
			"The HTML shows &amp;amp; where it should show &amp; in the footer."},
		{"a single &lt; beside a double escape keeps the double escape",
			"&lt;br&gt; is written &amp;lt;br&amp;gt; in the source", "&lt;br&gt; is written &amp;lt;br&amp;gt; in the source"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs := repairOne(t, `{"type":"section","text":{"type":"mrkdwn","text":`+q(tc.in)+`}}`)
			checkMessages(t, msgs, true)
			if got := firstText(t, msgs).Text; got != tc.want {
				t.Errorf("section %q, want %q", got, tc.want)
			}
		})
	}
}
