package html

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit"
)

const report = "# Release notes\n\n" +
	"The **build** is _green_; see [the dashboard](https://ci.example/run?id=7&x=1).\n\n" +
	"## Changes\n\n" +
	"- faster `go test`\n  - nested point\n- fixed <script>alert(1)</script>\n\n" +
	"1. first\n2. second\n\n" +
	"| Package | Coverage |\n|---|---:|\n| blockkit | 91% |\n| slack | 84% |\n\n" +
	"```go\nif a < b && *p {\n}\n```\n\n> Ship it.\n"

func TestFromMarkdownMessageRendersItsStructure(t *testing.T) {
	t.Parallel()
	msgs := blockkit.FromMarkdown(report)
	var out strings.Builder
	for _, m := range msgs {
		if err := blockkit.Validate(m); err != nil {
			t.Fatalf("FromMarkdown made an invalid message: %v", err)
		}
		blocks, err := json.Marshal(slack.Blocks{BlockSet: m.Blocks})
		if err != nil {
			t.Fatal(err)
		}
		got := string(Message(blocks, m.Text))
		checkHTML(t, got)
		if strings.Contains(got, "unsupported") || strings.Contains(got, "bk-error") {
			t.Errorf("a block the bot produces was not drawn:\n%s", got)
		}
		out.WriteString(got)
	}
	got := out.String()

	for _, want := range []string{
		`<div class="bk-header">Release notes</div>`,
		`<div class="bk-header">Changes</div>`,
		`The <b>build</b> is <i>green</i>; see <a class="bk-link" href="https://ci.example/run?id=7&amp;x=1" target="_blank" rel="noopener noreferrer">the dashboard</a>.`,
		`<span class="bk-li">• faster <code class="bk-code">go test</code></span>`,
		`<span class="bk-li">• fixed &lt;script&gt;alert(1)&lt;/script&gt;</span>`,
		`<span class="bk-li">1. first</span><br><span class="bk-li">2. second</span>`,
		`<td class="bk-cell">blockkit</td><td class="bk-cell bk-align-right">91%</td>`,
		"<pre class=\"bk-pre\">if a &lt; b &amp;&amp; *p {\n}</pre>",
		`<blockquote class="bk-quote">Ship it.</blockquote>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if n := strings.Count(got, "<tr>"); n != 3 {
		t.Errorf("table has %d rows, want 3 (header and two):\n%s", n, got)
	}
	if regexp.MustCompile(`<span class="bk-li">\s+◦ nested point</span>`).FindString(got) == "" {
		t.Errorf("nested list item lost its indent:\n%s", got)
	}
	if strings.Contains(got, "|---") || strings.Contains(got, "**") {
		t.Errorf("Markdown syntax leaked into the page:\n%s", got)
	}
}
