package blockkit

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFileTextIsTheAnswerAsMarkdownWithTokensAsWords(t *testing.T) {
	t.Parallel()
	msgs, _ := Repair(json.RawMessage(`[
		{"blocks":[{"type":"header","text":{"type":"plain_text","text":"Deploy report"}},
			{"type":"section","text":{"type":"mrkdwn","text":"*Done* &amp; green, <!channel> ask <@U0ADA>; see <https://ci.example/run/1|the run> or <https://ci.example/x>"}}]},
		{"blocks":[{"type":"divider"},
			{"type":"table","rows":[[{"type":"raw_text","text":"host"},{"type":"raw_text","text":"a|b"}],[{"type":"raw_text","text":"web-1"},{"type":"raw_text","text":"ok"}]]},
			{"type":"rich_text","elements":[{"type":"rich_text_preformatted","elements":[{"type":"text","text":"make deploy"}]},
				{"type":"rich_text_list","style":"bullet","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"one"}]}]}]},
			{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Click"},"action_id":"a"}]}]}
	]`), "")
	got := FileText(msgs)
	for _, want := range []string{
		"## Deploy report\n\n",
		"*Done* & green, @channel ask @U0ADA; see [the run](https://ci.example/run/1) or https://ci.example/x",
		"\n\n---\n\n",
		"| host | a\\|b |\n| --- | --- |\n| web-1 | ok |",
		"```\nmake deploy\n```",
		"- one",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("FileText lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"<!channel>", "<@U0ADA>", "&amp;", "Click"} {
		if strings.Contains(got, not) {
			t.Errorf("FileText holds %q:\n%s", not, got)
		}
	}
}
