package blockkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// repairOne repairs one message of blocks given as JSON.
func repairOne(t *testing.T, blocks string) []Message {
	t.Helper()
	msgs, _ := Repair(json.RawMessage(`[{"blocks":[`+blocks+`]}]`), "")
	return msgs
}

func TestNotificationTextIsEscapedOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		msgs func(t *testing.T) []Message
		want string
	}{
		{"plain_text specials in a header are escaped in the notification",
			func(t *testing.T) []Message {
				return repairOne(t, `{"type":"header","text":{"type":"plain_text","text":"a < b & c"}}`)
			}, "a &lt; b &amp; c"},
		{"plain_text specials in a context element are escaped in the notification",
			func(t *testing.T) []Message {
				return repairOne(t, `{"type":"context","elements":[{"type":"plain_text","text":"x > y"}]}`)
			}, "x &gt; y"},
		{"plain_text fields are escaped in the notification",
			func(t *testing.T) []Message {
				return repairOne(t, `{"type":"section","fields":[{"type":"plain_text","text":"p95 < 200ms"}]}`)
			}, "p95 &lt; 200ms"},
		{"table cells are escaped in the notification",
			func(t *testing.T) []Message {
				return repairOne(t, `{"type":"table","rows":[["a > b","c & d"]]}`)
			}, "a &gt; b c &amp; d"},
		{"an entity the model escaped twice is shown once, in the block and the notification",
			func(t *testing.T) []Message {
				return repairOne(t, `{"type":"section","text":{"type":"mrkdwn","text":"latency &amp;gt; 2s &amp;amp; rising"}}`)
			}, "latency &gt; 2s &amp; rising"},
		{"a single tilde in Markdown stays in the notification",
			func(t *testing.T) []Message { return FromMarkdown("~5 minutes left") }, "~5 minutes left"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs := tc.msgs(t)
			if len(msgs) == 0 {
				t.Fatal("no messages")
			}
			checkMessages(t, msgs, false)
			if got := msgs[0].Text; got != tc.want {
				t.Errorf("notification text = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMrkdwnInCodeIsNotEscapedTwice(t *testing.T) {
	t.Parallel()
	msgs := repairOne(t, `{"type":"section","text":{"type":"mrkdwn","text":"**Fix**: use `+"`a &lt; b &amp;&amp; c`"+` and\n`+"```go\\nif x &lt; 1 {}\\n```"+`"}}`)
	checkMessages(t, msgs, false)
	got := msgs[0].Blocks[0].(*slack.SectionBlock).Text.Text
	for _, want := range []string{"`a &lt; b &amp;&amp; c`", "if x &lt; 1 {}"} {
		if !strings.Contains(got, want) {
			t.Errorf("section %q does not hold %q", got, want)
		}
	}
}

func TestTildeStaysWhereSlackWouldNotStrike(t *testing.T) {
	t.Parallel()
	runMrkdwnCases(t, []mrkdwnCase{
		{"tildes that cannot close stay tildes", "about ~5 min and ~10 min", "about ~5 min and ~10 min"},
		{"home paths keep their tildes", "copy ~/a to ~/b", "copy ~/a to ~/b"},
	})
	t.Run("a heading too long for a header keeps its tilde in the continuation", func(t *testing.T) {
		t.Parallel()
		msgs := convertValid(t, "# "+strings.Repeat("x", 148)+" done in ~5 min")
		rest := msgs[0].Blocks[1].(*slack.SectionBlock).Text.Text
		if !strings.Contains(rest, "~5 min") {
			t.Errorf("continuation %q lost the tilde", rest)
		}
	})
}
