package blockkit

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitMrkdwn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"text within the limit is the only piece", "short text", 20, []string{"short text"}},
		{"empty text gives no pieces", "", 20, nil},
		{"a paragraph break in the second half wins",
			"first paragraph here\n\nsecond one", 25,
			[]string{"first paragraph here", "second one"}},
		{"a line break wins over a word break",
			"line one is long\nline two", 20,
			[]string{"line one is long", "line two"}},
		{"words are never cut",
			"alpha beta gamma delta epsilon", 16,
			[]string{"alpha beta gamma", "delta epsilon"}},
		{"an entity is never cut",
			"aaaaaaaaaaaaaa &amp;&amp;&amp; b", 18,
			[]string{"aaaaaaaaaaaaaa", "&amp;&amp;&amp; b"}},
		{"a link token is never cut",
			"see the <https://example.com/a b|the label> here", 40,
			[]string{"see the", "<https://example.com/a b|the label> here"}},
		{"a link longer than a piece is written as its label and address, never cut inside its token",
			"<https://example.com/long/path|label>", 20,
			[]string{"label", "(https://example.com", "/long/path)"}},
		{"a link longer than a piece next to text keeps every word and leaves no stray bracket",
			"see <https://example.com/a/very/long/path?x=1&amp;y=2|the report> now", 30,
			[]string{"see the report", "(https://example.com/a/very/lo", "ng/path?x=1&amp;y=2) now"}},
		{"an emoji counts as two UTF-16 units",
			"😀😀😀😀😀😀😀😀 😀😀😀😀😀😀😀😀", 20,
			[]string{"😀😀😀😀😀😀😀😀", "😀😀😀😀😀😀😀😀"}},
		{"a mention is never cut",
			"hello there <@U12345678|somebody> x", 24,
			[]string{"hello there", "<@U12345678|somebody> x"}},
		{"inline code is never cut between words",
			"some text `code with spaces` after", 24,
			[]string{"some text", "`code with spaces` after"}},
		{"a code block is closed and reopened at a code line",
			"intro\n\n```\nline one\nline two\nline three\n```\n\nafter", 30,
			[]string{"intro\n\n```\nline one\n```", "```\nline two\nline three\n```", "after"}},
		{"code lines keep their indentation across the cut",
			"```\n    indented one\n    indented two\n```", 30,
			[]string{"```\n    indented one\n```", "```\n    indented two\n```"}},
		{"a quote keeps > on every piece",
			"> first quoted line\n> second quoted line", 22,
			[]string{"> first quoted line", "> second quoted line"}},
		{"a tiny limit cuts every max runes",
			"abcdefghij", 4,
			[]string{"abcd", "efgh", "ij"}},
		{"runes are counted, not bytes",
			"éééé éééé", 4,
			[]string{"éééé", " ééé", "é"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := SplitMrkdwn(tc.in, tc.max)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SplitMrkdwn(%q, %d)\n got: %q\nwant: %q", tc.in, tc.max, got, tc.want)
			}
			for _, p := range got {
				if n := Len(p); n > tc.max {
					t.Errorf("piece %q is %d runes, over %d", p, n, tc.max)
				}
			}
		})
	}
}

// TestSplitMrkdwnKeepsStructure checks, over realistic converted text at
// several limits, what must hold for every piece.
func TestSplitMrkdwnKeepsStructure(t *testing.T) {
	t.Parallel()
	var md strings.Builder
	for i := range 30 {
		md.WriteString("Paragraph with **bold**, a [link](https://example.com/a_b?x=1&y=2), <@U123|bob> and AT&T.\n\n")
		md.WriteString("- item one & two\n- item `code <x>`\n\n")
		if i%5 == 0 {
			md.WriteString("```\nfunc f() { return a < b && c > d }\n\tindented line\n```\n\n")
		}
	}
	text := Mrkdwn(md.String())
	// The longest token in text is 45 characters: every limit leaves room.
	for _, max := range []int{50, 100, 333, 1000, SectionTextMax} {
		pieces := SplitMrkdwn(text, max)
		var words []string
		for _, p := range pieces {
			if n := Len(p); n > max {
				t.Fatalf("max %d: piece of %d runes", max, n)
			}
			if strings.Count(p, "```")%2 != 0 {
				t.Fatalf("max %d: piece leaves a code block open: %q", max, p)
			}
			if strings.Count(p, "<") != strings.Count(p, ">") {
				t.Fatalf("max %d: piece cuts a token: %q", max, p)
			}
			if i := strings.LastIndexByte(p, '&'); i >= 0 && !strings.Contains(p[i:], ";") {
				t.Fatalf("max %d: piece cuts an entity: %q", max, p)
			}
			words = append(words, strings.Fields(strings.ReplaceAll(p, "```", " "))...)
		}
		want := strings.Fields(strings.ReplaceAll(text, "```", " "))
		if !slices.Equal(words, want) {
			t.Fatalf("max %d: the pieces together lose or change words", max)
		}
	}
}
