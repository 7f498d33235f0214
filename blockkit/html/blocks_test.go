package html

import "testing"

func TestBlocksRender(t *testing.T) {
	t.Parallel()
	runCases(t, []renderCase{
		{
			name:   "header is a bold large line of plain text",
			blocks: `[{"type":"header","text":{"type":"plain_text","text":"Q3 <report>"}}]`,
			want:   []string{`<div class="bk-header">Q3 &lt;report&gt;</div>`},
		},
		{
			name:   "section with mrkdwn text formats it",
			blocks: `[{"type":"section","text":{"type":"mrkdwn","text":"*bold* text"}}]`,
			want:   []string{`<div class="bk-section"><div class="bk-section-body"><div class="bk-mrkdwn"><b>bold</b> text</div>`},
		},
		{
			name:   "section with plain text keeps stars and breaks lines",
			blocks: `[{"type":"section","text":{"type":"plain_text","text":"*not bold*\nnext"}}]`,
			want:   []string{`<div class="bk-plain">*not bold*<br>next</div>`},
			reject: []string{"<b>"},
		},
		{
			name: "section fields are a two-column grid",
			blocks: `[{"type":"section","fields":[{"type":"mrkdwn","text":"*Owner*\nAda"},
				{"type":"plain_text","text":"Due"}]}]`,
			want: []string{`<div class="bk-fields"><div class="bk-field"><div class="bk-mrkdwn"><b>Owner</b><br>Ada</div></div><div class="bk-field"><div class="bk-plain">Due</div></div></div>`},
		},
		{
			name: "section image accessory sits beside the text",
			blocks: `[{"type":"section","text":{"type":"mrkdwn","text":"hi"},
				"accessory":{"type":"image","image_url":"https://img.example/a.png","alt_text":"a cat"}}]`,
			want: []string{`<div class="bk-accessory"><img class="bk-accessory-img" src="https://img.example/a.png" alt="a cat" loading="lazy"></div>`},
		},
		{
			name: "section button accessory carries its action",
			blocks: `[{"type":"section","text":{"type":"mrkdwn","text":"hi"},
				"accessory":{"type":"button","text":{"type":"plain_text","text":"Open"},"action_id":"open","value":"v1"}}]`,
			want: []string{`<button class="bk-button" type="button" data-action-id="open" data-value="v1">Open</button>`},
		},
		{
			name: "context is small grey text and images",
			blocks: `[{"type":"context","elements":[{"type":"mrkdwn","text":"by _bot_"},
				{"type":"plain_text","text":"2 min"},{"type":"image","image_url":"https://img.example/i.png","alt_text":"icon"}]}]`,
			want: []string{
				`<div class="bk-context"><div class="bk-mrkdwn">by <i>bot</i></div><div class="bk-plain">2 min</div>`,
				`<img class="bk-context-img" src="https://img.example/i.png" alt="icon" loading="lazy">`,
			},
		},
		{
			name:   "divider is a rule",
			blocks: `[{"type":"divider"}]`,
			want:   []string{`<hr class="bk-divider">`},
		},
		{
			name: "image block has its title and alt text",
			blocks: `[{"type":"image","image_url":"https://img.example/chart.png","alt_text":"sales chart",
				"title":{"type":"plain_text","text":"Sales"}}]`,
			want: []string{
				`<figcaption class="bk-image-title">Sales</figcaption>`,
				`<img class="bk-image-img" src="https://img.example/chart.png" alt="sales chart" title="Sales" loading="lazy">`,
			},
		},
		{
			name:   "image from a slack_file url is drawn",
			blocks: `[{"type":"image","slack_file":{"url":"https://files.slack.com/x.png"},"alt_text":"x"}]`,
			want:   []string{`src="https://files.slack.com/x.png"`},
		},
		{
			name: "actions draw buttons with styles, values and links",
			blocks: `[{"type":"actions","block_id":"slackbot_progress","elements":[
				{"type":"button","text":{"type":"plain_text","text":"Stop"},"action_id":"slackbot_stop","value":"sess-1","style":"danger"},
				{"type":"button","text":{"type":"plain_text","text":"Go"},"action_id":"go","style":"primary"},
				{"type":"button","text":{"type":"plain_text","text":"Docs"},"action_id":"docs","url":"https://docs.example/"}]}]`,
			want: []string{
				`<div class="bk-actions">`,
				`<button class="bk-button bk-button-danger" type="button" data-action-id="slackbot_stop" data-value="sess-1">Stop</button>`,
				`<button class="bk-button bk-button-primary" type="button" data-action-id="go" data-value="">Go</button>`,
				`<a class="bk-button" href="https://docs.example/" target="_blank" rel="noopener noreferrer" data-action-id="docs" data-value="">Docs</a>`,
			},
		},
		{
			name:   "actions show other elements as unsupported",
			blocks: `[{"type":"actions","elements":[{"type":"static_select","action_id":"pick"}]}]`,
			want:   []string{`<div class="bk-unsupported">unsupported element: static_select</div>`},
		},
		{
			name: "table block draws every row as data with column settings",
			blocks: `[{"type":"table","column_settings":[{"align":"left"},{"align":"right","is_wrapped":true}],"rows":[
				[{"type":"raw_text","text":"Name"},{"type":"raw_text","text":"Qty"}],
				[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"apple","style":{"bold":true}}]}]},
				 {"type":"raw_number","value":3.5}],
				[null,{"type":"raw_number","value":1,"text":"one"}]]}]`,
			want: []string{
				`<table class="bk-table"><tbody><tr><td class="bk-cell">Name</td><td class="bk-cell bk-align-right bk-wrap">Qty</td></tr>`,
				`<td class="bk-cell"><div class="bk-rich"><div class="bk-rt-section"><b>apple</b></div></div></td>`,
				`<td class="bk-cell bk-align-right bk-wrap">3.5</td>`,
				`<tr><td class="bk-cell"></td><td class="bk-cell bk-align-right bk-wrap">one</td></tr></tbody></table>`,
			},
			reject: []string{"<th"},
		},
		{
			name: "data_table draws its first row as the header",
			blocks: `[{"type":"data_table","caption":"Stock","rows":[
				[{"type":"raw_text","text":"Item"}],[{"type":"raw_text","text":"pear"}]]}]`,
			want: []string{`<caption>Stock</caption><thead><tr><th class="bk-cell">Item</th></tr></thead><tbody><tr><td class="bk-cell">pear</td></tr></tbody>`},
		},
		{
			name:   "markdown block is drawn through the bot's Markdown conversion",
			blocks: `[{"type":"markdown","text":"## Plan\n**bold** and [site](https://x.example) <b>raw</b>\n\n- one"}]`,
			want: []string{
				`<div class="bk-markdown bk-mrkdwn"><b>Plan</b>`,
				`<b>bold</b> and <a class="bk-link" href="https://x.example"`,
				`&lt;b&gt;raw&lt;/b&gt;`,
				`<span class="bk-li">• one</span>`,
			},
		},
		{
			name:   "unknown block type is a visible grey box",
			blocks: `[{"type":"video","title":{"type":"plain_text","text":"v"}},{"type":"divider"}]`,
			want:   []string{`<div class="bk-unsupported">unsupported block: video</div><hr class="bk-divider">`},
		},
		{
			name:   "block without a type is a visible grey box",
			blocks: `[{"text":"x"}]`,
			want:   []string{`unsupported block: (no type)`},
		},
		{
			name:   "invalid JSON is an escaped error box with the raw text",
			blocks: `[{"type":"section" <script>`,
			want:   []string{`<div class="bk-error"><div class="bk-error-title">invalid blocks JSON:`, `<pre class="bk-error-raw">[{&#34;type&#34;:&#34;section&#34; &lt;script&gt;</pre>`},
		},
		{
			name:   "a malformed block is an error box and the others still render",
			blocks: `[{"type":"header","text":"not an object"},{"type":"divider"}]`,
			want:   []string{`invalid header block:`, `<hr class="bk-divider">`},
		},
		{
			name: "text is the fallback when there are no blocks",
			text: "*hi* &lt;there&gt;",
			want: []string{`<div class="bk-mrkdwn"><b>hi</b> &lt;there&gt;</div>`},
		},
		{
			name:   "text is not drawn when there are blocks",
			blocks: `[{"type":"divider"}]`,
			text:   "fallback",
			reject: []string{"fallback"},
		},
		{
			name: "empty message is an empty bk-message",
			want: []string{`<div class="bk-message"></div>`},
		},
	})
}
