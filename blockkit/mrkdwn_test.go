package blockkit

import "testing"

// mrkdwnCase is one conversion with its expected output written out in full.
type mrkdwnCase struct {
	name, in, want string
}

func runMrkdwnCases(t *testing.T, cases []mrkdwnCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Mrkdwn(tc.in); got != tc.want {
				t.Errorf("Mrkdwn(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMrkdwnEscaping(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"every greater-than sign is escaped", "a > b > c", "a &gt; b &gt; c"},
		{"ampersand and less-than are escaped", "fish & chips < steak", "fish &amp; chips &lt; steak"},
		{"Markdown entities are decoded, then re-escaped for Slack", "AT&amp;T &copy; &#35;1 &lt;tag&gt;", "AT&amp;T © #1 &lt;tag&gt;"},
		{"an unknown entity stays literal text", "&bogus; here", "&amp;bogus; here"},
		{"a literal greater-than starting a line cannot become a quote", `\> not a quote`, "\u200b&gt; not a quote"},
		{"nothing else is entity-encoded", `quotes "and" 'apostrophes'`, `quotes "and" 'apostrophes'`},
	})
}

func TestMrkdwnKeepsSlackTokens(t *testing.T) {
	t.Parallel()
	tokens := []string{
		"<https://x.com|label>", "<https://x.com>", "<mailto:a@b.com|a@b.com>",
		"<@U123>", "<@U123|name>", "<@W0ABC>", "<#C123>", "<#C123|general>",
		"<!here>", "<!channel>", "<!everyone>", "<!subteam^S123>", "<!subteam^S123|@team>",
		"<!date^1392734382^{date}|fallback>", "<!date^1392734382^{date_short} at {time}|Feb 18>",
		"<https://x.com/a_b_c?q=1&amp;r=2|a *label* with_underscores>",
	}
	var cases []mrkdwnCase
	for _, tok := range tokens {
		cases = append(cases,
			mrkdwnCase{"token " + tok + " survives inside a sentence", "ping " + tok + " now", "ping " + tok + " now"},
			mrkdwnCase{"token " + tok + " survives at the start of a paragraph", tok + " please look", tok + " please look"},
		)
	}
	cases = append(cases,
		mrkdwnCase{"a token inside emphasis keeps its bytes", "**see <@U123|bob>**", "*see <@U123|bob>*"},
		mrkdwnCase{"a token on its own line is a paragraph, not an HTML block", "<!channel>\nrelease is out", "<!channel>\nrelease is out"},
		mrkdwnCase{"a lowercase ID is not a Slack token and is escaped", "<@u123>", "&lt;@u123&gt;"},
		mrkdwnCase{"a backslash-escaped token is shown, not sent as a mention", `\<@U123>`, "&lt;@U123&gt;"},
		mrkdwnCase{"a token with an empty label is an autolink whose bar is encoded", "<https://x.com|>", "<https://x.com%7C>"},
		mrkdwnCase{"a date token needs its fallback", "<!date^1392734382^{date}>", "&lt;!date^1392734382^{date}&gt;"},
	)
	runMrkdwnCases(t, cases)
}

func TestMrkdwnEscapesRawHTML(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"inline tags are shown as text", "<b>bold</b> and <span class=\"x\">y</span>", "&lt;b&gt;bold&lt;/b&gt; and &lt;span class=\"x\"&gt;y&lt;/span&gt;"},
		{"an HTML block is shown as text", "<div>\nhi *there*\n</div>", "&lt;div&gt;\nhi ∗there∗\n&lt;/div&gt;"},
		{"an HTML comment block is hidden, as Markdown renderers hide it", "a\n\n<!-- note -->\n\nb", "a\n\nb"},
		{"an inline HTML comment is hidden", "a <!-- note --> b", "a  b"},
		{"a br tag is a line break", "one<br>two<br />three", "one\ntwo\nthree"},
		{"a br tag at the end of a line breaks it once", "one<br>\ntwo", "one\ntwo"},
	})
}

func TestMrkdwnCode(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"a code span keeps its bytes except & < >", "run `a_b *c* ~d~ x<y && z>w` now", "run `a_b *c* ~d~ x&lt;y &amp;&amp; z&gt;w` now"},
		{"a Slack token inside code is shown, never sent", "`<!here>` and `<@U123>`", "`&lt;!here&gt;` and `&lt;@U123&gt;`"},
		{"a code span with a backtick becomes a preformatted span", "use `` a`b `` here", "use ```a`b``` here"},
		{"a code span starting with a backtick is kept apart from the fence", "``` `tick` ```", "```\u200b`tick`\u200b```"},
		{"a code span touching a word gets a zero-width space", "foo`bar`baz", "foo\u200b`bar`\u200bbaz"},
		{"a fenced block drops its language and keeps its bytes", "```go\nx := a_b * c\n\n  <b>&</b>\n```", "```\nx := a_b * c\n\n  &lt;b&gt;&amp;&lt;/b&gt;\n```"},
		{"an indented code block becomes a fenced one", "    indented *code*\n", "```\nindented *code*\n```"},
		{"three backticks inside code cannot close the block", "````\nbefore\n```\nafter\n````", "```\nbefore\n``\u200b`\nafter\n```"},
		{"an empty code block is dropped", "```\n```", ""},
		{"an unclosed fence runs to the end", "```\nopen", "```\nopen\n```"},
	})
}

func TestMrkdwnEmphasis(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"bold italic and strike map to mrkdwn markers", "**b** *i* _i_ ~~s~~ ~s~", "*b* _i_ _i_ ~s~ ~s~"},
		{"bold inside italic keeps both markers", "*it **bold** it*", "_it *bold* it_"},
		{"bold inside bold writes one pair of markers", "**a **b** c**", "*a b c*"},
		{"bold italic together nest cleanly", "***both***", "_*both*_"},
		{"intraword bold gets zero-width spaces", "foo**bar**baz", "foo\u200b*bar*\u200bbaz"},
		{"CJK bold gets zero-width spaces", "中文**粗体**中文", "中文\u200b*粗体*\u200b中文"},
		{"emphasis next to punctuation needs no zero-width space", "(**bold**).", "(*bold*)."},
		{"adjacent emphasis is kept apart", "**a**_b_", "*a*\u200b_b_"},
		{"emphasis across a line break is closed and reopened", "**bold\nacross**", "*bold*\n*across*"},
		{"emphasis around a link wraps the link", "**see [docs](https://d.io)**", "*see <https://d.io|docs>*"},
		{"emphasis around an image wraps its link", "**![](https://i.io/x.png)**", "*<https://i.io/x.png>*"},
	})
}

func TestMrkdwnKeepsLiteralMarkers(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"snake_case stays intact", "use snake_case_names here", "use snake_case_names here"},
		{"a URL with underscores stays intact", "see https://x.com/a_b_c/d_e", "see <https://x.com/a_b_c/d_e>"},
		{"escaped asterisks stay literal", `\*not italic\*`, "∗not italic∗"},
		{"escaped underscores stay literal", `\_not italic\_`, "＿not italic＿"},
		{"escaped tildes stay literal", `\~not struck\~`, "∼not struck∼"},
		{"escaped backticks stay literal", "\\`not code\\`", "‵not code‵"},
		{"a lone asterisk between spaces is plain text", "2 * 3 = 6", "2 * 3 = 6"},
		{"a lone tilde has no partner and stays", "about ~5 minutes", "about ~5 minutes"},
		{"an unmatched Markdown marker with a partner is neutralised", "*a and b* c*", "_a and b_ c∗"},
		{"asterisk between words is plain text", "a*b", "a*b"},
	})
}

func TestMrkdwnLineBreaks(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"two trailing spaces are a newline", "one  \ntwo", "one\ntwo"},
		{"a trailing backslash is a newline, not a stray backslash", "one\\\ntwo", "one\ntwo"},
		{"a soft break keeps the author's newline", "one\ntwo", "one\ntwo"},
		{"paragraphs are separated by an empty line", "one\n\n\n\ntwo", "one\n\ntwo"},
	})
}

func TestMrkdwnLinks(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"a link becomes url|label", "[docs](https://d.io/x)", "<https://d.io/x|docs>"},
		{"a bar in the label is replaced", "[a|b](https://d.io)", "<https://d.io|a∣b>"},
		{"bar, angle brackets and spaces in the URL are percent-encoded", `[x](<https://d.io/a|b\>c d>)`, "<https://d.io/a%7Cb%3Ec%20d|x>"},
		{"an ampersand in the URL is entity-escaped", "[q](https://d.io/?a=1&b=2)", "<https://d.io/?a=1&amp;b=2|q>"},
		{"label markup is flattened", "[**bold** _it_ `code`](https://d.io)", "<https://d.io|bold it code>"},
		{"special characters in the label are escaped", "[a < b & c](https://d.io)", "<https://d.io|a &lt; b &amp; c>"},
		{"a label equal to the URL is dropped", "[https://d.io](https://d.io)", "<https://d.io>"},
		{"an empty label links the bare URL", "[](https://d.io)", "<https://d.io>"},
		{"a relative link keeps only its label", "see [the docs](/docs/x) and [top](#top)", "see the docs and top"},
		{"a javascript link keeps only its label", "[x](javascript:alert(1))", "x"},
		{"a reference link resolves", "[docs][d]\n\n[d]: https://d.io", "<https://d.io|docs>"},
		{"an image becomes a link with its alt text", "![a *diagram*](https://i.io/d.png)", "<https://i.io/d.png|a diagram>"},
		{"an image without alt text links the bare URL", "![](https://i.io/d.png)", "<https://i.io/d.png>"},
		{"a bare URL is linked", "go to https://d.io/a_b now", "go to <https://d.io/a_b> now"},
		{"a www address is linked over http", "www.d.io", "<http://www.d.io|www.d.io>"},
		{"an email address is linked with mailto", "mail a@b.io", "mail <mailto:a@b.io|a@b.io>"},
		{"an angle-bracket autolink is kept", "<https://d.io>", "<https://d.io>"},
	})
}

func TestMrkdwnBlocks(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"a heading becomes a bold line", "# Title", "*Title*"},
		{"bold inside a heading adds no stray markers", "## A **big** _deal_", "*A big _deal_*"},
		{"a link inside a heading stays a link", "### See [docs](https://d.io)", "*See <https://d.io|docs>*"},
		{"a setext heading becomes a bold line", "Title\n=====", "*Title*"},
		{"a thematic break becomes a line", "a\n\n---\n\nb", "a\n\n────────────────\n\nb"},
		{"bullets become bullet characters", "- one\n- two", "• one\n• two"},
		{"nested bullets are indented with ◦ then ▪", "- a\n  - b\n    - c\n      - d", "• a\n    ◦ b\n        ▪ c\n            ▪ d"},
		{"ordered items keep their numbers", "1. one\n2. two", "1. one\n2. two"},
		{"an ordered list keeps its start number", "3. three\n4. four", "3. three\n4. four"},
		{"a bullet list nested in an ordered one is indented", "1. one\n   - sub\n2. two", "1. one\n    ◦ sub\n2. two"},
		{"task items become ballot boxes", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"ordered task items keep their numbers", "1. [x] done", "1. ☑ done"},
		{"a loose list stays compact", "- one\n\n- two", "• one\n• two"},
		{"an item's second paragraph is indented", "- one\n\n  more\n- two", "• one\n    more\n• two"},
		{"a code block in a list keeps its bytes unindented", "- run:\n\n  ```\n  make\n  ```", "• run:\n    ```\nmake\n```"},
		{"a quote keeps > on every line", "> one\n> two", "> one\n> two"},
		{"a quote with paragraphs keeps > on the empty line", "> one\n>\n> two", "> one\n>\n> two"},
		{"a list inside a quote keeps its >", "> - a\n> - b", "> • a\n> • b"},
		{"a nested quote is flattened to one level", "> a\n>> b", "> a\n>\n> b"},
		{"a quote inside a list starts the line with >", "- item\n\n  > quoted", "• item\n>     quoted"},
		{"emphasis across lines in a quote is reopened after >", "> **a\n> b**", "> *a*\n> *b*"},
	})
}

func TestMrkdwnTables(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"a table becomes an aligned code block without pipes",
			"| Name | Count |\n|------|------:|\n| apples | 3 |\n| kiwis | 12 |",
			"```\nName    Count\n------  -----\napples      3\nkiwis      12\n```"},
		{"a centred column is centred",
			"| a | mid |\n|---|:---:|\n| x | y |",
			"```\na  mid\n-  ---\nx   y\n```"},
		{"cell markup is removed, specials escaped and link URLs kept",
			"| **k** | v |\n|---|---|\n| `a<b` | [l](https://x.io) |",
			"```\nk    v\n---  ----------------\na&lt;b  l (https://x.io)\n```"},
		{"an empty header still gets a rule",
			"| |\n|-|\n| x |",
			"```\n\n-\nx\n```"},
		{"a short row is padded",
			"| a | b |\n|---|---|\n| 1 |",
			"```\na  b\n-  -\n1\n```"},
		{"wide characters keep the columns aligned",
			"| 名前 | n |\n|---|---|\n| ab | 1 |",
			"```\n名前  n\n----  -\nab    1\n```"},
	})
}

func TestMrkdwnOfEmptyInputIsEmpty(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "   ", "\n\n", "[d]: https://d.io"} {
		if got := Mrkdwn(in); got != "" {
			t.Errorf("Mrkdwn(%q) = %q, want empty", in, got)
		}
	}
}

func TestPlainTextKeepsWordsAndWhereLinksLead(t *testing.T) {
	t.Parallel()
	cases := []mrkdwnCase{
		{"markup is removed", "# A **big** _deal_ ~~x~~", "A big deal x"},
		{"links and images keep their label and address", "[docs](https://d.io) and ![alt](https://i.io/a.png)", "docs (https://d.io) and alt (https://i.io/a.png)"},
		{"bare links keep their URL", "see https://d.io and <https://e.io>", "see https://d.io and https://e.io"},
		{"nothing is escaped", "a < b & c > d", "a < b & c > d"},
		{"escapes are resolved", `\*literal\* &amp; more`, "*literal* & more"},
		{"code keeps its content without fences", "`x<y`\n\n```\nfn()\n```", "x<y\n\nfn()"},
		{"Slack tokens read as mentions", "<@U1> <@U2|bob> <#C1|general> <!here> <!subteam^S1|@ops> <!date^1^{date}|today> <https://d.io|site>", "@U1 @bob #general @here @ops today site (https://d.io)"},
		{"inline HTML tags are dropped", "<b>bold</b>", "bold"},
		{"lists keep bullets", "- a\n- b", "• a\n• b"},
		{"quotes lose their marker", "> quoted", "quoted"},
		{"rules are dropped", "a\n\n---\n\nb", "a\n\nb"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := plainKeepingLinks(tc.in); got != tc.want {
				t.Errorf("plainKeepingLinks(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
		})
	}
}
