package blockkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestTableBlockCells(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, wantRows string }{
		{"plain cells are raw_text and empty cells a space",
			"| a | b |\n|---|---|\n| 1 | |",
			`[[{"type":"raw_text","text":"a"},{"type":"raw_text","text":"b"}],[{"type":"raw_text","text":"1"},{"type":"raw_text","text":" "}]]`},
		{"cell escapes are resolved and raw HTML kept as text in raw_text",
			"| x |\n|---|\n| a \\| b &amp; <c> |",
			`[[{"type":"raw_text","text":"x"}],[{"type":"raw_text","text":"a | b \u0026 \u003cc\u003e"}]]`},
		{"a link stays a live link in a rich_text cell",
			"| PR |\n|---|\n| see [#412](https://g.io/pull/412) |",
			`[[{"type":"raw_text","text":"PR"}],[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"see "},{"type":"link","url":"https://g.io/pull/412","text":"#412"}]}]}]]`},
		{"a bare URL stays a link",
			"| site |\n|---|\n| https://d.io |",
			`[[{"type":"raw_text","text":"site"}],[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"link","url":"https://d.io"}]}]}]]`},
		{"mentions stay live",
			"| who |\n|---|\n| <@U1> in <#C2> <!here> |",
			`[[{"type":"raw_text","text":"who"}],[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"user","user_id":"U1"},{"type":"text","text":" in "},{"type":"channel","channel_id":"C2"},{"type":"text","text":" "},{"type":"broadcast","range":"here"}]}]}]]`},
		{"bold, italic, strike and code keep their style",
			"| s |\n|---|\n| **b** _i_ ~~x~~ `c` |",
			`[[{"type":"raw_text","text":"s"}],[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"b","style":{"bold":true}},{"type":"text","text":" "},{"type":"text","text":"i","style":{"italic":true}},{"type":"text","text":" "},{"type":"text","text":"x","style":{"strike":true}},{"type":"text","text":" "},{"type":"text","text":"c","style":{"code":true}}]}]}]]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs := convertValid(t, tc.in)
			b, err := json.Marshal(msgs[0].Blocks[0])
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Rows json.RawMessage }
			_ = json.Unmarshal(b, &got)
			if string(got.Rows) != tc.wantRows {
				t.Errorf("rows\n got: %s\nwant: %s", got.Rows, tc.wantRows)
			}
		})
	}
}

func TestTableBlockAtTheLimits(t *testing.T) {
	t.Parallel()
	header := "|" + strings.Repeat(" h |", TableMaxCells) + "\n|" + strings.Repeat("---|", TableMaxCells) + "\n"
	rows := strings.Repeat("|"+strings.Repeat(" v |", TableMaxCells)+"\n", TableMaxRows-1)
	msgs := convertValid(t, header+rows)
	if len(msgs) != 1 || msgs[0].Blocks[0].BlockType() != "table" {
		t.Fatalf("a table of exactly %d rows of %d cells should be one table block", TableMaxRows, TableMaxCells)
	}
}

func TestAlignedTable(t *testing.T) {
	t.Parallel()
	cases := []mrkdwnCase{
		{"links keep their URL after the label in code",
			"| a |\n|---|\n| [x](https://d.io) |",
			"```\na\n----------------\nx (https://d.io)\n```"},
		{"right-aligned numbers line up on the right",
			"| n |\n|--:|\n| 5 |\n| 500 |",
			"```\n  n\n---\n  5\n500\n```"},
		{"emoji take two columns",
			"| e | x |\n|---|---|\n| 🙂 | 1 |\n| ab | 2 |",
			"```\ne   x\n--  -\n🙂  1\nab  2\n```"},
	}
	runMrkdwnCases(t, cases)
}

func TestDisplayWidthMeasuresEmojiAndWideCharactersByGraphemeCluster(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		"abc": 3, "名前": 4, "ｱ": 1, "Ｆ": 2, "e\u0301": 1, "a\u200bb": 2, "🙂": 2, "✓": 1,
		"❤\ufe0f": 2, "⚠\ufe0f": 2, // an emoji presentation selector makes it an emoji
		"👨\u200d👩\u200d👧": 2,                    // a ZWJ sequence is one emoji
		"🇫🇷":              2, "👍🏽": 2, "🧑‍💻": 2, // flags, skin tones and newer emoji
		"한국어": 6, "１２３": 6,
	} {
		if got := displayWidth(s); got != want {
			t.Errorf("displayWidth(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestTablesTooWideForColumnsWrapOrBecomeLists(t *testing.T) {
	t.Parallel()
	md := func(rows ...[]string) string {
		var b strings.Builder
		for i, r := range rows {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
			if i == 0 {
				b.WriteString(strings.Repeat("|---", len(r)) + "|\n")
			}
		}
		return b.String()
	}
	repeat := func(s string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	sectionTexts := func(msgs []Message) string {
		var parts []string
		for _, m := range msgs {
			for _, b := range m.Blocks {
				if s, ok := b.(*slack.SectionBlock); ok && s.Text != nil {
					parts = append(parts, s.Text.Text)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	long := strings.TrimSpace(strings.Repeat("a long description of the service ", 5))
	wide := md([]string{"Name", "Description", "Owner"}, []string{"alpha", long, "dana"}, []string{"beta", "short", "lee"})
	cases := []struct {
		name  string
		text  func() string
		code  bool     // a code block (else a list)
		words []string // words the text must keep
	}{
		{"a cell too wide for the code table wraps between words", func() string { return Mrkdwn(wide) }, true,
			[]string{"alpha", "description", "service", "dana", "beta", "lee"}},
		{"a table of many wide columns becomes a list of its rows",
			func() string { return Mrkdwn(md(repeat("header", 12), repeat("some value here", 12))) }, false, []string{"header", "some value here"}},
		{"a word too long for its column makes the table a list",
			func() string { return Mrkdwn(md([]string{"a", "b"}, []string{strings.Repeat("x", 100), "y"})) }, false, []string{strings.Repeat("x", 100), "y"}},
		{"FromMarkdown's table over 20 columns is a list of its rows",
			func() string { return sectionTexts(convertValid(t, md(repeat("h", 21), repeat("cell value", 21)))) }, false, []string{"cell value"}},
		{"a repaired table over 20 columns becomes a list, not a padded code block",
			func() string {
				row := `["` + strings.Join(repeat("some value here", 21), `","`) + `"]`
				return sectionTexts(repairOne(t, `{"type":"table","rows":[`+row+`,`+row+`]}`))
			}, false, []string{"some value here"}},
		{"a repaired table with a row too long for a table block wraps in a code block",
			func() string {
				return sectionTexts(repairOne(t, `{"type":"table","rows":[["Name","Notes"],["alpha","`+strings.Repeat("word ", 2100)+`"]]}`))
			}, true, []string{"alpha", "word"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text := tc.text()
			if got := strings.Contains(text, "```"); got != tc.code {
				t.Errorf("code block = %v, want %v:\n%.600s", got, tc.code, text)
			}
			for _, line := range strings.Split(text, "\n") {
				if w := displayWidth(line); tc.code && w > tableWidth+len("```") {
					t.Fatalf("a code line of %d columns:\n%.200s", w, line)
				}
				if !tc.code && strings.Contains(line, "    ") {
					t.Fatalf("a list line padded with spaces:\n%.200s", line)
				}
			}
			for _, w := range tc.words {
				if !strings.Contains(text, w) {
					t.Errorf("%q lost:\n%.600s", w, text)
				}
			}
		})
	}
}
