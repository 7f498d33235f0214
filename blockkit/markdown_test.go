package blockkit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// convertValid converts markdown and fails the test unless every message
// passes Validate: FromMarkdown promises that for any input.
func convertValid(t *testing.T, markdown string) []Message {
	t.Helper()
	msgs := FromMarkdown(markdown)
	for i, m := range msgs {
		if err := Validate(m); err != nil {
			t.Fatalf("message %d of %d does not validate: %v", i, len(msgs), err)
		}
	}
	return msgs
}

func messagesJSON(t *testing.T, msgs []Message) string {
	t.Helper()
	var parts []string
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

func TestFromMarkdownLayout(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"a heading becomes a header block with its markup removed",
			"# A **big** `deal`\n\nBody text.",
			`{"text":"A big deal Body text.","blocks":[{"type":"header","text":{"type":"plain_text","text":"A big deal","emoji":true}},{"type":"section","text":{"type":"mrkdwn","text":"Body text."}}]}`},
		{"consecutive paragraphs, lists and quotes share one section",
			"One **bold**.\n\n- a\n- b\n\n> quoted",
			`{"text":"One bold. • a • b quoted","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"One *bold*.\n\n• a\n• b\n\n\u003e quoted"}}]}`},
		{"fenced code becomes a section holding a code block",
			"```python\nprint(1 < 2)\n```",
			`{"text":"print(1 \u0026lt; 2)","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"` + "```" + `\nprint(1 \u0026lt; 2)\n` + "```" + `"}}]}`},
		{"a rule becomes a divider between sections",
			"above\n\n---\n\nbelow",
			`{"text":"above below","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"above"}},{"type":"divider"},{"type":"section","text":{"type":"mrkdwn","text":"below"}}]}`},
		{"rules at the start and end of a message are dropped",
			"---\n\ntext\n\n***",
			`{"text":"text","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"text"}}]}`},
		{"a table becomes a table block and ends its message",
			"Intro.\n\n| Name | Qty |\n|---|--:|\n| apple | 3 |\n| | 4 |\n\nAfter.",
			`{"text":"Intro. Name Qty apple 3 4","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Intro."}},{"type":"table","rows":[[{"type":"raw_text","text":"Name"},{"type":"raw_text","text":"Qty"}],[{"type":"raw_text","text":"apple"},{"type":"raw_text","text":"3"}],[{"type":"raw_text","text":" "},{"type":"raw_text","text":"4"}]],"column_settings":[{"align":"left","is_wrapped":false},{"align":"right","is_wrapped":false}]}]}` + "\n" +
				`{"text":"After.","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"After."}}]}`},
		{"a second table goes to the next message",
			"| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |",
			`{"text":"a 1","blocks":[{"type":"table","rows":[[{"type":"raw_text","text":"a"}],[{"type":"raw_text","text":"1"}]]}]}` + "\n" +
				`{"text":"b 2","blocks":[{"type":"table","rows":[[{"type":"raw_text","text":"b"}],[{"type":"raw_text","text":"2"}]]}]}`},
		{"Slack tokens and escapes reach the section and read well in the fallback",
			"Hi <@U1|bob> & <!here>: see <https://d.io|docs>",
			`{"text":"Hi @bob \u0026amp; @here: see docs","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Hi \u003c@U1|bob\u003e \u0026amp; \u003c!here\u003e: see \u003chttps://d.io|docs\u003e"}}]}`},
		{"a heading nested in a quote stays a bold line",
			"> # Quoted title\n> body",
			`{"text":"Quoted title body","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"\u003e *Quoted title*\n\u003e\n\u003e body"}}]}`},
		{"a heading with a Slack token stays a bold line so the token still works",
			"# Ask <@U1|bob> or see <https://d.io|docs>",
			`{"text":"Ask @bob or see docs","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Ask \u003c@U1|bob\u003e or see \u003chttps://d.io|docs\u003e*"}}]}`},
		{"a heading with a link stays a bold line so the link still works",
			"## See [the docs](https://d.io) now\n\nBody.",
			`{"text":"See the docs now Body.","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*See \u003chttps://d.io|the docs\u003e now*\n\nBody."}}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := messagesJSON(t, convertValid(t, tc.in)); got != tc.want {
				t.Errorf("FromMarkdown(%q)\n got: %s\nwant: %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestFromMarkdownClampsLongHeadings(t *testing.T) {
	t.Parallel()
	words := strings.Repeat("word ", 40) // 200 characters
	msgs := convertValid(t, "# "+words+"end")
	header := msgs[0].Blocks[0].(*slack.HeaderBlock).Text.Text
	if n := Len(header); n > HeaderTextMax {
		t.Fatalf("header is %d characters", n)
	}
	wantHead := strings.Repeat("word ", 29) + "word…" // 149 characters and the ellipsis
	if header != wantHead {
		t.Errorf("header = %q, want %q", header, wantHead)
	}
	rest := msgs[0].Blocks[1].(*slack.SectionBlock).Text.Text
	wantRest := "*…" + strings.Repeat("word ", 10) + "end*"
	if rest != wantRest {
		t.Errorf("continuation = %q, want %q", rest, wantRest)
	}
}

func TestFromMarkdownHeadingContinuationKeepsMarkersLiteral(t *testing.T) {
	t.Parallel()
	msgs := convertValid(t, "# "+strings.Repeat("x", 148)+" a_b *c* & d")
	rest := msgs[0].Blocks[1].(*slack.SectionBlock).Text.Text
	if want := "*…a_b c &amp; d*"; rest != want {
		t.Errorf("continuation = %q, want %q", rest, want)
	}
}

func TestFromMarkdownSplitsLongText(t *testing.T) {
	t.Parallel()
	para := strings.TrimSpace(strings.Repeat("lorem ipsum dolor sit amet ", 40)) // ~1080 chars
	in := strings.Repeat(para+"\n", 8)                                           // one paragraph of 8 lines, ~8.6k chars
	msgs := convertValid(t, in)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	var words []string
	for i, b := range msgs[0].Blocks {
		text := b.(*slack.SectionBlock).Text.Text
		if n := Len(text); n > SectionTextMax {
			t.Errorf("section %d is %d characters", i, n)
		}
		words = append(words, strings.Fields(text)...)
	}
	if len(msgs[0].Blocks) < 3 {
		t.Errorf("got %d sections, want at least 3", len(msgs[0].Blocks))
	}
	if got, want := strings.Join(words, " "), strings.Join(strings.Fields(in), " "); got != want {
		t.Error("the sections together lose or change words")
	}
}

func TestFromMarkdownStartsNewMessagePastFiftyBlocks(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for i := range 60 {
		fmt.Fprintf(&sb, "## Heading %d\n\nParagraph %d.\n\n", i, i)
	}
	msgs := convertValid(t, sb.String())
	if len(msgs) != 3 {
		t.Fatalf("got %d messages, want 3", len(msgs))
	}
	next := 0
	for i, m := range msgs {
		if len(m.Blocks) > MaxBlocks {
			t.Errorf("message %d has %d blocks", i, len(m.Blocks))
		}
		if _, ok := m.Blocks[len(m.Blocks)-1].(*slack.HeaderBlock); ok {
			t.Errorf("message %d ends with a header, apart from its content", i)
		}
		for _, b := range m.Blocks {
			if h, ok := b.(*slack.HeaderBlock); ok {
				if want := fmt.Sprintf("Heading %d", next); h.Text.Text != want {
					t.Fatalf("header %q out of order, want %q", h.Text.Text, want)
				}
				next++
			}
		}
	}
	if next != 60 {
		t.Errorf("got %d headers, want 60", next)
	}
	if want := "Heading 0 Paragraph 0. Heading 1 Paragraph 1."; !strings.HasPrefix(msgs[0].Text, want) {
		t.Errorf("first fallback = %q, want it to start with %q", msgs[0].Text, want)
	}
}

func TestFromMarkdownStartsNewMessagePastCharBudget(t *testing.T) {
	t.Parallel()
	para := strings.TrimSpace(strings.Repeat("abcdefghi ", 200)) // 1999 characters
	in := strings.Repeat(para+"\n\n", 10)
	msgs := convertValid(t, in)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	total := 0
	for i, m := range msgs {
		chars := 0
		for _, b := range m.Blocks {
			chars += Len(b.(*slack.SectionBlock).Text.Text)
		}
		if chars > MaxMessageChars {
			t.Errorf("message %d holds %d characters", i, chars)
		}
		total += len(m.Blocks)
	}
	if total != 10 {
		t.Errorf("got %d sections, want one per paragraph (10)", total)
	}
}

func TestFromMarkdownFallsBackToCodeForOversizedTables(t *testing.T) {
	t.Parallel()
	row := func(cells int, text string) string {
		return "|" + strings.Repeat(" "+text+" |", cells) + "\n"
	}
	sep := func(cells int) string { return "|" + strings.Repeat("---|", cells) + "\n" }
	cases := []struct {
		name string
		in   string
	}{
		{"a table over 100 rows becomes a code block", row(2, "h") + sep(2) + strings.Repeat(row(2, "v"), 100)},
		{"a table over 20 columns becomes a code block", row(21, "h") + sep(21) + row(21, "v")},
		{"a table over the cell character cap becomes a code block", row(2, "h") + sep(2) + strings.Repeat(row(2, strings.TrimSpace(strings.Repeat("xxxxx ", 10))), 90)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, m := range convertValid(t, tc.in) {
				for _, b := range m.Blocks {
					s, ok := b.(*slack.SectionBlock)
					if !ok {
						t.Fatalf("got a %s block, want only code sections", b.BlockType())
					}
					if !strings.HasPrefix(s.Text.Text, "```\n") || strings.Contains(s.Text.Text, "|") {
						t.Fatalf("section is not a pipe-free code block: %.60q", s.Text.Text)
					}
				}
			}
		})
	}
}

func TestFromMarkdownOfNoVisibleContentIsNoMessages(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "  \n\t\n", "---", "[ref]: https://d.io", "```\n\n```"} {
		if msgs := FromMarkdown(in); len(msgs) != 0 {
			t.Errorf("FromMarkdown(%q) = %d messages, want none", in, len(msgs))
		}
	}
}

func TestFromMarkdownFallbackIsShortAndPlain(t *testing.T) {
	t.Parallel()
	msgs := convertValid(t, "**Summary:** "+strings.Repeat("many words here ", 30))
	text := msgs[0].Text
	if n := Len(text); n > fallbackChars || !strings.HasSuffix(text, "…") {
		t.Errorf("fallback is %d characters %q, want at most %d ending in …", n, text, fallbackChars)
	}
	if !strings.HasPrefix(text, "Summary: many words here") {
		t.Errorf("fallback = %q, want plain text from the start", text)
	}
}

func TestMessageJSONRoundTrips(t *testing.T) {
	t.Parallel()
	msgs := convertValid(t, "# Title\n\nText *x*\n\n---\n\nMore\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n| l |\n|---|\n| [a](https://x.io) **b** <@U1> |")
	for _, m := range msgs {
		first, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back Message
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatal(err)
		}
		second, _ := json.Marshal(back)
		if string(first) != string(second) {
			t.Errorf("round trip changed the message\nfirst:  %s\nsecond: %s", first, second)
		}
		if err := ValidateJSON(first); err != nil {
			t.Errorf("ValidateJSON rejects what Validate accepts: %v", err)
		}
	}
}

func TestMessageWithoutBlocksOmitsThem(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(Message{Text: "hi"})
	if string(b) != `{"text":"hi"}` {
		t.Errorf("got %s", b)
	}
}

func TestFromMarkdownConvertsEveryCorpusDocumentToValidMessages(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/corpus/*.md")
	if len(files) == 0 {
		t.Fatal("no documents in testdata/corpus: the corpus is part of the repository")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			msgs := convertValid(t, string(data))
			if len(msgs) == 0 {
				t.Fatal("no messages")
			}
			for i, m := range msgs {
				payload, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				if err := ValidateJSON(payload); err != nil {
					t.Fatalf("message %d validates but its JSON does not: %v", i, err)
				}
			}
		})
	}
}
