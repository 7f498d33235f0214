package html

import (
	"encoding/json"
	"strings"
	"testing"
)

// section wraps mrkdwn text in a one-section message.
func section(text string) string {
	b, _ := json.Marshal(text)
	return `[{"type":"section","text":{"type":"mrkdwn","text":` + string(b) + `}}]`
}

func TestMrkdwnRenders(t *testing.T) {
	t.Parallel()
	names := Options{
		UserName:    func(id string) string { return map[string]string{"U1": "ada"}[id] },
		ChannelName: func(id string) string { return map[string]string{"C9": "ops"}[id] },
	}
	cases := []renderCase{
		{name: "stars are bold", text: "a *b* c", want: []string{"a <b>b</b> c"}},
		{name: "underscores are italic", text: "_it_", want: []string{"<i>it</i>"}},
		{name: "tildes are strike", text: "~gone~", want: []string{"<s>gone</s>"}},
		{name: "backticks are code", text: "run `go test`", want: []string{`run <code class="bk-code">go test</code>`}},
		{name: "code containing stars leaves them literal", text: "`a *b* _c_`", want: []string{`<code class="bk-code">a *b* _c_</code>`}, reject: []string{"<b>", "<i>"}},
		{name: "a star inside code does not close bold", text: "*x `y*` z*", want: []string{`<b>x <code class="bk-code">y*</code> z</b>`}},
		{name: "markers inside words are literal", text: "snake_case_name and 2*3*4", want: []string{"snake_case_name and 2*3*4"}, reject: []string{"<i>", "<b>"}},
		{name: "markers beside a zero-width space format", text: "x\u200b*bold*\u200by", want: []string{"<b>bold</b>"}},
		{name: "a marker before a space does not open", text: "* not bold*", reject: []string{"<b>"}},
		{name: "bold does not cross a line break", text: "*a\nb*", reject: []string{"<b>"}},
		{name: "nested italic inside bold", text: "*bold _both_*", want: []string{"<b>bold <i>both</i></b>"}},
		{name: "fenced code is a pre block", text: "before\n```\nx := *p\n<&>\n```\nafter", want: []string{`before<pre class="bk-pre">x := *p` + "\n" + `&lt;&amp;&gt;</pre>after`}},
		{name: "fenced code with entities decodes them once", text: "```a &amp;lt; b```", want: []string{`<pre class="bk-pre">a &amp;lt; b</pre>`}},
		{name: "an unclosed fence is literal", text: "```open", want: []string{"```open"}},
		{name: "quote lines are a blockquote", text: "> one\n> two\nout", want: []string{`<blockquote class="bk-quote">one<br>two</blockquote>out`}},
		{name: "an escaped quote marker still quotes, as Slack stores typed quotes", text: "&gt; typed", want: []string{`<blockquote class="bk-quote">typed</blockquote>`}},
		{name: "a zero-width space before &gt; keeps it literal", text: "\u200b&gt; no", want: []string{"\u200b&gt; no"}, reject: []string{"blockquote"}},
		{name: "bullet lines are list lines", text: "• a\n    ◦ b", want: []string{`<span class="bk-li">• a</span><br><span class="bk-li">    ◦ b</span>`}},
		{name: "numbered lines are list lines", text: "1. one\n10. ten", want: []string{`<span class="bk-li">1. one</span><br><span class="bk-li">10. ten</span>`}},
		{name: "labelled link", text: "<https://x.example/a?b=1&amp;c=2|the site>", want: []string{`<a class="bk-link" href="https://x.example/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">the site</a>`}},
		{name: "bare link shows its address", text: "<https://x.example>", want: []string{`href="https://x.example" target="_blank" rel="noopener noreferrer">https://x.example</a>`}},
		{name: "mailto link", text: "<mailto:a@b.example|mail a>", want: []string{`href="mailto:a@b.example"`}},
		{name: "bold inside a link label", text: "<https://x.example|see *this*>", want: []string{`rel="noopener noreferrer">see <b>this</b></a>`}},
		{name: "a link inside bold", text: "*<https://x.example|a_b*c>*", want: []string{`<b><a class="bk-link" href="https://x.example" target="_blank" rel="noopener noreferrer">a_b*c</a></b>`}},
		{name: "javascript link is refused and shown as text", text: "<javascript:alert(1)|click>", want: []string{`<span class="bk-link-refused" title="link not followed: javascript:alert(1)">click</span>`}, reject: []string{"<a "}},
		{name: "mixed-case javascript link is refused", text: "<JaVaScRiPt:alert(1)>", reject: []string{"<a "}},
		{name: "data and relative links are refused", text: "<data:text/html,hi|d> </x|r> <ftp://h/f|f>", reject: []string{"<a "}},
		{name: "user mention shows the id", text: "hi <@U123>", want: []string{`hi <span class="bk-mention bk-mention-user" data-id="U123">@U123</span>`}},
		{name: "user mention uses the resolver", text: "<@U1>", opts: names, want: []string{`data-id="U1">@ada</span>`}},
		{name: "channel mention with a name", text: "<#C123|general>", want: []string{`<span class="bk-mention bk-mention-channel" data-id="C123">#general</span>`}},
		{name: "channel mention uses the resolver", text: "<#C9>", opts: names, want: []string{`data-id="C9">#ops</span>`}},
		{name: "here, channel and everyone", text: "<!here> <!channel> <!everyone>", want: []string{
			`<span class="bk-mention bk-mention-broadcast">@here</span> <span class="bk-mention bk-mention-broadcast">@channel</span> <span class="bk-mention bk-mention-broadcast">@everyone</span>`}},
		{name: "user group mention", text: "<!subteam^S1|@devs>", want: []string{`data-id="S1">@devs</span>`}},
		{name: "date shows its fallback", text: "<!date^1700000000^{date}|Nov 14>", want: []string{`<span class="bk-date">Nov 14</span>`}},
		{name: "entities are decoded once and re-escaped", text: "a &amp;lt; b &lt;i&gt; &amp; c", want: []string{"a &amp;lt; b &lt;i&gt; &amp; c"}},
		{name: "emoji shortcodes stay text", text: ":tada: done", want: []string{":tada: done"}},
		{name: "newlines are line breaks", text: "a\nb\n\nc", want: []string{"a<br>b<br><br>c"}},
	}
	for i := range cases {
		cases[i].blocks = section(cases[i].text)
		cases[i].text = ""
	}
	runCases(t, cases)
}

func TestEscaping(t *testing.T) {
	t.Parallel()
	runCases(t, []renderCase{
		{
			name:   "script in mrkdwn text is text",
			blocks: section("<script>alert(1)</script>"),
			want:   []string{`<span class="bk-link-refused"`},
			reject: []string{"<script"},
		},
		{
			name:   "escaped script in mrkdwn stays text",
			blocks: section("&lt;script&gt;alert(1)&lt;/script&gt;"),
			want:   []string{"&lt;script&gt;alert(1)&lt;/script&gt;"},
		},
		{
			name:   "script in plain text is text",
			blocks: `[{"type":"header","text":{"type":"plain_text","text":"<script>x</script>"}}]`,
			want:   []string{"&lt;script&gt;x&lt;/script&gt;"},
		},
		{
			name:   "quotes in alt text cannot leave the attribute",
			blocks: `[{"type":"image","image_url":"https://i.example/a.png","alt_text":"\" onerror=\"alert(1)\" <script>"}]`,
			want:   []string{`alt="&#34; onerror=&#34;alert(1)&#34; &lt;script&gt;"`},
		},
		{
			name:   "quotes in a link address cannot leave the attribute",
			blocks: section(`<https://x.example/"><script>alert(1)</script>|x>`),
			reject: []string{`"><script`},
		},
		{
			name:   "javascript image is not loaded",
			blocks: `[{"type":"image","image_url":"javascript:alert(1)","alt_text":"pic"}]`,
			want:   []string{`<span class="bk-image-missing">[image: pic]</span>`},
			reject: []string{"<img"},
		},
		{
			name:   "javascript button url is a plain button",
			blocks: `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"<b>x</b>"},"action_id":"a\"b","value":"<v>","url":"javascript:alert(1)"}]}]`,
			want:   []string{`<button class="bk-button" type="button" data-action-id="a&#34;b" data-value="&lt;v&gt;">&lt;b&gt;x&lt;/b&gt;</button>`},
			reject: []string{"href"},
		},
		{
			name:   "a tab inside javascript is refused",
			blocks: section("<java\tscript:alert(1)|x>"),
			reject: []string{"<a "},
		},
		{
			name:   "unknown block type is escaped",
			blocks: `[{"type":"<img src=x onerror=alert(1)>"}]`,
			want:   []string{"unsupported block: &lt;img src=x onerror=alert(1)&gt;"},
		},
	})
}

func TestCSSStylesTheMarkup(t *testing.T) {
	t.Parallel()
	for _, class := range []string{
		"bk-message", "bk-header", "bk-section", "bk-fields", "bk-context", "bk-divider", "bk-image",
		"bk-code", "bk-pre", "bk-quote", "bk-table", "bk-button", "bk-button-primary", "bk-button-danger",
		"bk-mention", "bk-unsupported", "bk-error", "bk-rt-list", "bk-indent-3",
	} {
		if !strings.Contains(CSS, "."+class+"{") && !strings.Contains(CSS, "."+class+",") && !strings.Contains(CSS, "."+class+" ") {
			t.Errorf("CSS has no rule for .%s", class)
		}
	}
}
