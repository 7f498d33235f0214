package html

import "testing"

// richBlock wraps rich text elements in a rich_text block.
func richBlock(elements string) string {
	return `[{"type":"rich_text","elements":[` + elements + `]}]`
}

func TestRichTextRenders(t *testing.T) {
	t.Parallel()
	names := Options{UserName: func(id string) string { return "ada" }}
	runCases(t, []renderCase{
		{
			name: "section text styles nest",
			blocks: richBlock(`{"type":"rich_text_section","elements":[
				{"type":"text","text":"b","style":{"bold":true}},{"type":"text","text":"i","style":{"italic":true}},
				{"type":"text","text":"s","style":{"strike":true}},{"type":"text","text":"*c*","style":{"code":true}},
				{"type":"text","text":"all","style":{"bold":true,"italic":true,"strike":true,"code":true}},
				{"type":"text","text":"line\nbreak"}]}`),
			want: []string{
				`<div class="bk-rich"><div class="bk-rt-section"><b>b</b><i>i</i><s>s</s><code class="bk-code">*c*</code>`,
				`<b><i><s><code class="bk-code">all</code></s></i></b>line<br>break</div></div>`,
			},
		},
		{
			name: "links, mentions, emoji, broadcasts and dates",
			blocks: richBlock(`{"type":"rich_text_section","elements":[
				{"type":"link","url":"https://x.example","text":"site","style":{"bold":true}},
				{"type":"link","url":"https://y.example"},
				{"type":"link","url":"javascript:alert(1)","text":"bad"},
				{"type":"user","user_id":"U1"},{"type":"channel","channel_id":"C2"},
				{"type":"usergroup","usergroup_id":"S3"},
				{"type":"emoji","name":"thumbsup","unicode":"1f44d"},{"type":"emoji","name":"flag-us","unicode":"1f1fa-1f1f8"},
				{"type":"emoji","name":"party_parrot"},
				{"type":"broadcast","range":"here"},
				{"type":"date","timestamp":0,"format":"{date}","fallback":"Jan 1"},
				{"type":"date","timestamp":86400,"format":"{date}"},
				{"type":"color","value":"#ff0000"},
				{"type":"canvas","id":"F1"}]}`),
			opts: names,
			want: []string{
				`<b><a class="bk-link" href="https://x.example" target="_blank" rel="noopener noreferrer">site</a></b>`,
				`href="https://y.example" target="_blank" rel="noopener noreferrer">https://y.example</a>`,
				`<span class="bk-link-refused" title="link not followed: javascript:alert(1)">bad</span>`,
				`<span class="bk-mention bk-mention-user" data-id="U1">@ada</span>`,
				`<span class="bk-mention bk-mention-channel" data-id="C2">#C2</span>`,
				`<span class="bk-mention bk-mention-usergroup" data-id="S3">@S3</span>`,
				`<span class="bk-emoji" title=":thumbsup:">👍</span>`,
				`title=":flag-us:">🇺🇸</span>`,
				`title=":party_parrot:">:party_parrot:</span>`,
				`<span class="bk-mention bk-mention-broadcast">@here</span>`,
				`<span class="bk-date">Jan 1</span>`,
				`<span class="bk-date">1970-01-02 00:00 UTC</span>`,
				`<span class="bk-color">#ff0000</span>`,
				`<span class="bk-unsupported bk-inline">unsupported element: canvas</span>`,
			},
		},
		{
			name: "bullet and ordered lists keep their indent and start",
			blocks: richBlock(`{"type":"rich_text_list","style":"bullet","elements":[
					{"type":"rich_text_section","elements":[{"type":"text","text":"a"}]}]},
				{"type":"rich_text_list","style":"bullet","indent":1,"elements":[
					{"type":"rich_text_section","elements":[{"type":"text","text":"b"}]}]},
				{"type":"rich_text_list","style":"ordered","offset":2,"elements":[
					{"type":"rich_text_section","elements":[{"type":"text","text":"third"}]}]},
				{"type":"rich_text_list","style":"ordered","indent":40,"elements":[]}`),
			want: []string{
				`<ul class="bk-rt-list bk-indent-0"><li>a</li></ul>`,
				`<ul class="bk-rt-list bk-indent-1"><li>b</li></ul>`,
				`<ol class="bk-rt-list bk-indent-0" start="3"><li>third</li></ol>`,
				`<ol class="bk-rt-list bk-indent-8"></ol>`,
			},
		},
		{
			name: "preformatted keeps newlines and drops styles",
			blocks: richBlock(`{"type":"rich_text_preformatted","elements":[
				{"type":"text","text":"if a < b {\n\t*x*\n}","style":{"bold":true}}]}`),
			want:   []string{"<pre class=\"bk-pre\">if a &lt; b {\n\t*x*\n}</pre>"},
			reject: []string{"<b>", "<br>"},
		},
		{
			name:   "quote is a blockquote",
			blocks: richBlock(`{"type":"rich_text_quote","elements":[{"type":"text","text":"wise <words>"}]}`),
			want:   []string{`<blockquote class="bk-quote">wise &lt;words&gt;</blockquote>`},
		},
		{
			name:   "unknown rich text container is a visible box",
			blocks: richBlock(`{"type":"rich_text_card"}`),
			want:   []string{`unsupported rich text element: rich_text_card`},
		},
		{
			name:   "malformed rich text is an error box",
			blocks: `[{"type":"rich_text","elements":"nope"}]`,
			want:   []string{`invalid rich_text block:`},
		},
		{
			name:   "invalid emoji code points fall back to the shortcode",
			blocks: richBlock(`{"type":"rich_text_section","elements":[{"type":"emoji","name":"x","unicode":"d800"}]}`),
			want:   []string{`>:x:</span>`},
		},
	})
}
