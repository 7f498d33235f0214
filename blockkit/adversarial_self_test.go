package blockkit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/blockkit"
)

// Self-tests: every invariant's checker catches a known-bad case (and lets a
// known-good one pass), so no check passes by being unable to fail.

func advMessage(t *testing.T, js string) blockkit.Message {
	t.Helper()
	var m blockkit.Message
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("bad test message %s: %v", js, err)
	}
	return m
}

func advHas(probs []advProblem, inv string) bool {
	for _, p := range probs {
		if p.inv == inv {
			return true
		}
	}
	return false
}

func TestAdversarialCheckersCatchKnownBad(t *testing.T) {
	t.Parallel()
	emoji := func(n int) string { return strings.Repeat("🚀", n) }
	sec := func(text string) string {
		return `{"type":"section","text":{"type":"mrkdwn","text":` + advQuote(text) + `}}`
	}
	btn := func(extra string) string {
		return `{"type":"button","text":{"type":"plain_text","text":"Go"},"action_id":"a"` + extra + `}`
	}
	opt := func(text string) string {
		return `{"text":{"type":"plain_text","text":` + advQuote(text) + `},"value":"v"}`
	}
	opts := func(n int) string {
		var o []string
		for i := range n {
			o = append(o, opt(fmt.Sprintf("o%d", i)))
		}
		return strings.Join(o, ",")
	}
	many := func(n int, s string) string { return strings.TrimSuffix(strings.Repeat(s+",", n), ",") }
	actions := func(els string) string { return `{"type":"actions","elements":[` + els + `]}` }

	t.Run("slack limits", func(t *testing.T) {
		t.Parallel()
		good := `{"text":"hi","blocks":[` + strings.Join([]string{
			`{"type":"header","text":{"type":"plain_text","text":` + advQuote(emoji(75)) + `}}`,
			sec(strings.Repeat("a", 3000)),
			`{"type":"section","fields":[` + many(10, `{"type":"mrkdwn","text":"f"}`) + `]}`,
			`{"type":"context","elements":[` + many(10, `{"type":"mrkdwn","text":"c"}`) + `]}`,
			actions(btn(`,"style":"primary","url":"https://x.io"`) + `,{"type":"overflow","action_id":"o","options":[` + opts(2) + `]},` +
				`{"type":"static_select","action_id":"s","options":[` + opts(100) + `]},{"type":"datepicker","action_id":"d","initial_date":"2024-02-29"},` +
				`{"type":"timepicker","action_id":"t","initial_time":"23:59"}`),
			`{"type":"image","image_url":"https://x.io/a.png","alt_text":"chart"}`,
			`{"type":"video","alt_text":"v","title":{"type":"plain_text","text":"t"},"video_url":"https://v.io/e","thumbnail_url":"https://v.io/t.png"}`,
			`{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"x"}]}]}`,
			`{"type":"table","rows":[[{"type":"raw_text","text":"a"}]]}`,
		}, ",") + `]}`
		var gm map[string]any
		if err := advDecode([]byte(good), &gm); err != nil {
			t.Fatal(err)
		}
		if p := advLimitProblems(gm); len(p) > 0 {
			t.Fatalf("a message within every limit is flagged: %q", p)
		}
		bad := map[string]string{
			"header of 151 ASCII characters":     `{"type":"header","text":{"type":"plain_text","text":"` + strings.Repeat("h", 151) + `"}}`,
			"header of 76 emoji (152 UTF-16)":    `{"type":"header","text":{"type":"plain_text","text":` + advQuote(emoji(76)) + `}}`,
			"mrkdwn header":                      `{"type":"header","text":{"type":"mrkdwn","text":"h"}}`,
			"section of 3001":                    sec(strings.Repeat("a", 3001)),
			"section of 1501 emoji":              sec(emoji(1501)),
			"empty section text":                 `{"type":"section","text":{"type":"mrkdwn","text":""}}`,
			"field of 2001":                      `{"type":"section","fields":[{"type":"mrkdwn","text":"` + strings.Repeat("f", 2001) + `"}]}`,
			"11 fields":                          `{"type":"section","fields":[` + many(11, `{"type":"mrkdwn","text":"f"}`) + `]}`,
			"11 context elements":                `{"type":"context","elements":[` + many(11, `{"type":"mrkdwn","text":"c"}`) + `]}`,
			"context element of 2001":            `{"type":"context","elements":[{"type":"plain_text","text":"` + strings.Repeat("c", 2001) + `"}]}`,
			"block_id of 256":                    `{"type":"divider","block_id":"` + strings.Repeat("b", 256) + `"}`,
			"button text of 76":                  actions(`{"type":"button","text":{"type":"plain_text","text":"` + strings.Repeat("b", 76) + `"}}`),
			"button url of 3001":                 actions(btn(`,"url":"https://x.io/` + strings.Repeat("u", 2990) + `"`)),
			"button style success":               actions(btn(`,"style":"success"`)),
			"26 buttons":                         actions(many(26, `{"type":"button","text":{"type":"plain_text","text":"b"}}`)),
			"duplicate action_id":                actions(btn("") + "," + btn("")),
			"overflow with 1 option":             actions(`{"type":"overflow","options":[` + opts(1) + `]}`),
			"overflow with 6 options":            actions(`{"type":"overflow","options":[` + opts(6) + `]}`),
			"select without options":             actions(`{"type":"static_select","placeholder":{"type":"plain_text","text":"p"}}`),
			"select with 101 options":            actions(`{"type":"multi_static_select","options":[` + opts(101) + `]}`),
			"option text of 76":                  actions(`{"type":"static_select","options":[` + opt(strings.Repeat("o", 76)) + `]}`),
			"datepicker tomorrow":                actions(`{"type":"datepicker","initial_date":"tomorrow"}`),
			"datepicker 2023-02-29":              actions(`{"type":"datepicker","initial_date":"2023-02-29"}`),
			"timepicker 24:00":                   actions(`{"type":"timepicker","initial_time":"24:00"}`),
			"input element in actions":           actions(`{"type":"plain_text_input","action_id":"i"}`),
			"video without title":                `{"type":"video","alt_text":"v","video_url":"https://v.io/e","thumbnail_url":"https://v.io/t.png"}`,
			"video without thumbnail_url":        `{"type":"video","alt_text":"v","title":{"type":"plain_text","text":"t"},"video_url":"https://v.io/e"}`,
			"image without alt_text":             `{"type":"image","image_url":"https://x.io/a.png"}`,
			"image with a file URL":              `{"type":"image","image_url":"file:///tmp/a.png","alt_text":"a"}`,
			"context image without alt_text":     `{"type":"context","elements":[{"type":"image","image_url":"https://x.io/a.png"}]}`,
			"empty rich_text":                    `{"type":"rich_text","elements":[]}`,
			"rich_text with a paragraph element": `{"type":"rich_text","elements":[{"type":"paragraph","elements":[{"type":"text","text":"x"}]}]}`,
			"input block":                        `{"type":"input","label":{"type":"plain_text","text":"l"},"element":{"type":"plain_text_input"}}`,
			"unknown block type":                 `{"type":"callout","text":"x"}`,
			"two tables":                         `{"type":"table","rows":[[{"type":"raw_text","text":"a"}]]},{"type":"table","rows":[[{"type":"raw_text","text":"b"}]]}`,
			"101 table rows":                     `{"type":"table","rows":[` + many(101, `[{"type":"raw_text","text":"a"}]`) + `]}`,
			"duplicate block_id":                 `{"type":"divider","block_id":"x"},{"type":"divider","block_id":"x"}`,
			"51 blocks":                          many(51, `{"type":"divider"}`),
		}
		for name, blocks := range bad {
			var m map[string]any
			if err := advDecode([]byte(`{"text":"x","blocks":[`+blocks+`]}`), &m); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(advLimitProblems(m)) == 0 {
				t.Errorf("%s: not caught", name)
			}
		}
	})

	t.Run("tokens", func(t *testing.T) {
		t.Parallel()
		for _, s := range []string{"> quote\n>>> more", "<https://x.io|x> &lt; &gt; &amp;", "<@U123ABC> <@W1B2>", "<#C1|general> <#C9>",
			"<!here> <!channel|channel>", "<!subteam^S12|@team>", "<!date^1392734382^{date}|Feb 18>", "<mailto:a@b.io|a@b.io>"} {
			if p := advTokenProblems(s, nil); len(p) > 0 {
				t.Errorf("good mrkdwn %q flagged: %q", s, p)
			}
		}
		for _, s := range []string{"a > b", "x < y", "<@someone>", "<https://x.io/a|cut", "AT&amp;amp;T",
			"<!date^1392734382^{date}>", "<#general>", "a &amp;lt; b", "<b>bold</b>", " > not a quote"} {
			if len(advTokenProblems(s, nil)) == 0 {
				t.Errorf("broken mrkdwn %q not caught", s)
			}
		}
		if p := advTokenProblems("AT&amp;amp;T", []byte(`"AT&amp;amp;T"`)); len(p) > 0 {
			t.Errorf("a double escape the payload wrote itself is flagged: %q", p)
		}
	})

	payload := `{"status":"success","messages":[{"blocks":[` + sec("Deploy of *checkout* finished, see <https://ci.example.com/run/7|the run> ~5 minutes") + `]}],"report_content":"ignored"}`
	c := advCase{name: "self", payload: []byte(payload)}

	t.Run("lost text", func(t *testing.T) {
		t.Parallel()
		keep := advMessage(t, `{"text":"x","blocks":[`+sec("Deploy of *checkout* finished, see <https://ci.example.com/run/7|the run> ~5 minutes")+`]}`)
		if p := advInspect(c, []blockkit.Message{keep}); advHas(p, invLost) {
			t.Errorf("a faithful output is flagged: %v", p)
		}
		drop := advMessage(t, `{"text":"x","blocks":[`+sec("Deploy finished, see the run ~5 minutes")+`]}`)
		p := advInspect(c, []blockkit.Message{drop})
		if !advHas(p, invLost) {
			t.Errorf("a lost word and a lost link host are not caught: %v", p)
		}
		scalar := advCase{name: "self", payload: []byte(`{"messages":42,"report_content":"The **migration** is complete"}`)}
		if p := advInspect(scalar, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec("42")+`]}`)}); !advHas(p, invLost) {
			t.Errorf("report_content lost behind unusable messages is not caught: %v", p)
		}
		fenced := advCase{name: "self", payload: []byte(`{"messages":"` + "```json\\n" + `[{\"blocks\":[{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\",\"text\":\"Quarterly numbers\"}}]}]` + "\\n```" + `"}`)}
		if w := advDerive(fenced.payload, fenced.expect).words; strings.Join(w, " ") != "Quarterly numbers" {
			t.Errorf("fenced JSON read as %q, want the words of its texts only", w)
		}
		must := advCase{name: "self", payload: []byte(`{"messages":"x"}`), expect: advExpect{Derive: "none", MustContain: []string{"Deploy finished"}, MustNotContain: []string{`"type"`}}}
		p = advInspect(must, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec("Deploy failed: {\"type\": \"section\"}")+`]}`)})
		if !advHas(p, invLost) || !advHas(p, invExpect) {
			t.Errorf("a missing must_contain or a shown must_not_contain is not caught: %v", p)
		}
	})

	t.Run("empty answer", func(t *testing.T) {
		t.Parallel()
		p := advInspect(c, []blockkit.Message{advMessage(t, `{"text":"The answer was empty.","blocks":[`+sec("_The answer was empty._")+`]}`)})
		if !advHas(p, invEmpty) {
			t.Errorf("an empty-answer message for a payload with an answer is not caught: %v", p)
		}
	})

	t.Run("tilde", func(t *testing.T) {
		t.Parallel()
		p := advInspect(c, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec("Deploy of *checkout* finished, see <https://ci.example.com/run/7|the run> ∼5 minutes")+`]}`)})
		if !advHas(p, invTilde) {
			t.Errorf("a look-alike tilde is not caught: %v", p)
		}
		for s, want := range map[string]string{
			"~5 minutes":            "~5",
			"cd ~/projects/app now": "~/projects/app",
			"approx ~3~ items":      "",
			"~/bin and ~5 minutes":  "~/bin ~5",
			"~~gone~~ and ~x~":      "",
		} {
			if got := strings.Join(advLoneTildes(s), " "); got != want {
				t.Errorf("lone tildes of %q = %q, want %q", s, got, want)
			}
		}
	})

	t.Run("code table", func(t *testing.T) {
		t.Parallel()
		tbl := "| City | Pop |\n|---|---|\n| 東京 | 14 |\n| Oslo | 7 |"
		tc := advCase{name: "self", payload: []byte(`{"messages":[{"blocks":[` + sec(tbl) + `]}]}`)}
		aligned := "```\nCity  Pop\n----  ---\n東京  14\nOslo  7\n```"
		runeAligned := "```\nCity  Pop\n----  ---\n東京    14\nOslo  7\n```"
		if p := advInspect(tc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(aligned)+`]}`)}); advHas(p, invTable) {
			t.Errorf("an aligned table is flagged: %v", p)
		}
		if p := advInspect(tc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(runeAligned)+`]}`)}); !advHas(p, invTable) {
			t.Errorf("a table aligned by rune count is not caught: %v", p)
		}
		wide := "```\nCity" + strings.Repeat(" ", 130) + "Pop\n```"
		if p := advInspect(tc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(wide)+`]}`)}); !advHas(p, invTable) {
			t.Errorf("a 137-column padded line is not caught: %v", p)
		}
		long := strings.Repeat("word ", 30)
		lc := advCase{name: "self", payload: []byte(`{"messages":[{"blocks":[` + sec("| Step | Detail |\n|---|---|\n| 1 | "+long+"|\n| 2 | short |") + `]}]}`)}
		lastWide := "```\nStep  Detail\n----  ------\n1     " + long + "\n2     short\n```"
		if p := advInspect(lc, []blockkit.Message{advMessage(t, `{"text":"x","blocks":[`+sec(lastWide)+`]}`)}); !advHas(p, invTable) {
			t.Errorf("a table whose last column runs 156 columns wide is not caught: %v", p)
		}
	})

	t.Run("repair and validate", func(t *testing.T) {
		t.Parallel()
		for name, f := range map[string]func([]byte) ([]blockkit.Message, error){
			"panics":      func([]byte) ([]blockkit.Message, error) { panic("boom") },
			"errors":      func([]byte) ([]blockkit.Message, error) { return nil, errors.New("no") },
			"no messages": func([]byte) ([]blockkit.Message, error) { return nil, nil },
		} {
			if p := advRun(c, f); !advHas(p, invRepair) {
				t.Errorf("a repair that %s is not caught: %v", name, p)
			}
		}
		invalid := advMessage(t, `{"text":"x","blocks":[`+sec(strings.Repeat("a", 3001))+`]}`)
		if p := advInspect(c, []blockkit.Message{invalid}); !advHas(p, invValidate) || !advHas(p, invLimits) {
			t.Errorf("an oversized section is not caught by validate and slack-limits: %v", p)
		}
	})
}

func advQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
