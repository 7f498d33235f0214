package blockkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestLenCountsUTF16Units(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "abc", "héllo", "日本語", "😀", "👨‍👩‍👧", "a😀b", "&amp;", "\xff\xfe"} {
		want := utf16Len(s) // each invalid byte is one U+FFFD, as in JSON
		if got := Len(s); got != want {
			t.Errorf("Len(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestLimitsAreMeasuredInUTF16Units(t *testing.T) {
	t.Parallel()
	emoji := func(n int) string { return strings.Repeat("😀", n) }
	cases := []struct {
		name string
		msgs func() []Message
	}{
		{"an emoji heading of 150 code points is a header of at most 150 units, the rest continues",
			func() []Message { return FromMarkdown("# " + emoji(150)) }},
		{"a paragraph of 2000 emoji is split into sections of at most 3000 units",
			func() []Message { return FromMarkdown(strings.Repeat(emoji(10)+" ", 200)) }},
		{"a repaired emoji header of 100 code points fits 150 units",
			func() []Message {
				m, _ := Repair(json.RawMessage(`[{"blocks":[{"type":"header","text":{"type":"plain_text","text":"`+emoji(100)+`"}}]}]`), "")
				return m
			}},
		{"a repaired section of 2000 emoji is split into sections of at most 3000 units",
			func() []Message {
				m, _ := Repair(json.RawMessage(`[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"`+strings.Repeat(emoji(10)+" ", 200)+`"}}]}]`), "")
				return m
			}},
		{"a repaired context text of 1500 emoji keeps each element within 2000 units",
			func() []Message {
				m, _ := Repair(json.RawMessage(`[{"blocks":[{"type":"context","elements":[{"type":"mrkdwn","text":"`+strings.Repeat(emoji(10)+" ", 150)+`"}]}]}]`), "")
				return m
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs := tc.msgs()
			if len(msgs) == 0 {
				t.Fatal("no messages")
			}
			total := 0
			for i, m := range msgs {
				texts, limits := textsOf(m)
				for k, s := range texts {
					total += strings.Count(s, "😀")
					if n := utf16Len(s); n > limits[k] {
						t.Errorf("message %d: text of %d UTF-16 units over the limit %d: %.40q…", i, n, limits[k], s)
					}
				}
			}
			if total == 0 {
				t.Error("the emoji were lost")
			}
		})
	}
}

func TestValidateMeasuresUTF16Units(t *testing.T) {
	t.Parallel()
	header := slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("😀", 76), false, false))
	if err := Validate(Message{Text: "x", Blocks: []slack.Block{header}}); err == nil {
		t.Error("a header of 76 emoji (152 UTF-16 units) passes Validate")
	}
}
