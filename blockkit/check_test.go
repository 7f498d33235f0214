package blockkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/slack-go/slack"
)

// Checks every test and fuzz target applies to converted and repaired
// messages.

// utf16Len is the test's own oracle for Len: the UTF-16 code units of s.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// textsOf returns every text object's text of a message with the limit that
// applies to it.
func textsOf(m Message) (texts []string, limits []int) {
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *slack.HeaderBlock:
			texts, limits = append(texts, b.Text.Text), append(limits, HeaderTextMax)
		case *slack.SectionBlock:
			if b.Text != nil {
				texts, limits = append(texts, b.Text.Text), append(limits, SlackSectionTextMax)
			}
			for _, f := range b.Fields {
				texts, limits = append(texts, f.Text), append(limits, FieldTextMax)
			}
		case *slack.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				if tx, ok := e.(*slack.TextBlockObject); ok {
					texts, limits = append(texts, tx.Text), append(limits, ContextTextMax)
				}
			}
		}
	}
	return texts, limits
}

// checkMessages asserts what every result must satisfy: each message passes
// Validate, has blocks, keeps every text within Slack's limit counted in
// UTF-16 units (an oracle independent of Len), and its mrkdwn (the
// notification text included) is safe (see mrkdwnProblem). Double escapes
// are allowed only when the input holds an entity's text literally
// (literalEntities), which must then be shown escaped.
func checkMessages(t *testing.T, msgs []Message, literalEntities bool) {
	t.Helper()
	for i, m := range msgs {
		if err := Validate(m); err != nil {
			t.Fatalf("message %d fails Validate: %v", i, err)
		}
		if len(m.Blocks) == 0 {
			t.Fatalf("message %d has no blocks", i)
		}
		texts, limits := textsOf(m)
		for k, s := range texts {
			if n := utf16Len(s); n > limits[k] {
				t.Fatalf("message %d: a text of %d UTF-16 units is over its limit %d: %.60q", i, n, limits[k], s)
			}
		}
		if p := mrkdwnProblem(m.Text, literalEntities); p != "" {
			t.Fatalf("message %d notification text %q: %s", i, m.Text, p)
		}
		for _, s := range mrkdwnTexts(t, m) {
			if p := mrkdwnProblem(s, literalEntities); p != "" {
				t.Fatalf("message %d mrkdwn %.200q: %s", i, s, p)
			}
		}
	}
}

// blocksValue returns a message's blocks as generic JSON values, the way
// Slack receives them.
func blocksValue(t *testing.T, m Message) any {
	t.Helper()
	data, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatalf("marshal blocks: %v", err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("unmarshal blocks: %v", err)
	}
	return v
}

// mrkdwnTexts returns every mrkdwn text object's text in a message.
func mrkdwnTexts(t *testing.T, m Message) []string {
	t.Helper()
	v := blocksValue(t, m)
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "mrkdwn" {
				if s, ok := v["text"].(string); ok {
					out = append(out, s)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// mrkdwnProblem says what in mrkdwn s Slack would misread, or "": a < that
// does not open a whole Slack token (<https://…|label>, <mailto:…>, <@U…>,
// <#C…>, <!here>, <!subteam^…>, <!date^…|…>), a > outside one that does not
// start a quoted line, an & that does not start &amp; &lt; or &gt;, and,
// unless doubleOK, an entity escaped twice (&amp;gt;).
func mrkdwnProblem(s string, doubleOK bool) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			n := scanSlackToken([]byte(s[i:]))
			if n == 0 {
				return fmt.Sprintf("a < that opens no Slack token at %d: %q", i, s[i:min(len(s), i+40)])
			}
			i += n - 1
		case '>':
			if i > 0 && s[i-1] != '\n' {
				return fmt.Sprintf("a bare > at %d: %q", i, s[max(0, i-40):i+1])
			}
		case '&':
			if !strings.HasPrefix(s[i:], "&amp;") && !strings.HasPrefix(s[i:], "&lt;") && !strings.HasPrefix(s[i:], "&gt;") {
				return fmt.Sprintf("a bare & at %d: %q", i, s[i:min(len(s), i+40)])
			}
		}
	}
	if !doubleOK {
		for _, d := range []string{"&amp;amp;", "&amp;lt;", "&amp;gt;"} {
			if strings.Contains(s, d) {
				return "an entity escaped twice: " + d
			}
		}
	}
	return ""
}

// hasLiteralEntity reports whether text, read the way an input is read
// (Markdown entities resolved once), could hold an entity's text literally,
// which the output must then escape: &amp;amp; in, &amp;amp; out.
func hasLiteralEntity(s string) bool {
	s = strings.ReplaceAll(strings.ToLower(s), `\u0026`, "&")
	return strings.Contains(s, "&amp;") || strings.Contains(s, "&#") || strings.Contains(s, "&lt;") || strings.Contains(s, "&gt;")
}

// repairTest is one repair and what its result must hold, beside the checks
// of checkMessages.
type repairTest struct {
	name     string
	report   string // arguments for RepairReport; when empty, messages and fallback go to Repair
	messages string
	fallback string
	has      []string // texts the output's strings must contain, as sent
	hasNot   []string // texts they must not contain
	kinds    []string // change kinds that must be reported
	check    func(t *testing.T, msgs []Message)
}

func runRepairTests(t *testing.T, tests []repairTest) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var msgs []Message
			var changes []Change
			if tc.report != "" {
				var err error
				if msgs, changes, err = RepairReport(json.RawMessage(tc.report)); err != nil {
					t.Fatal(err)
				}
			} else {
				msgs, changes = Repair(json.RawMessage(tc.messages), tc.fallback)
			}
			if len(msgs) == 0 {
				t.Fatal("no messages")
			}
			checkMessages(t, msgs, false)
			out := fuzzCollect(t, msgs)
			for _, s := range tc.has {
				if !strings.Contains(out.raw, s) {
					t.Errorf("output lacks %q; it reads:\n%s", s, out.raw)
				}
			}
			for _, s := range append(tc.hasNot, emptyAnswerText) {
				if strings.Contains(out.raw, s) {
					t.Errorf("output holds %q; it reads:\n%s", s, out.raw)
				}
			}
			got := map[string]bool{}
			for _, c := range changes {
				got[c.Kind] = true
			}
			for _, k := range tc.kinds {
				if !got[k] {
					t.Errorf("no %s change among %v", k, changes)
				}
			}
			if tc.check != nil {
				tc.check(t, msgs)
			}
		})
	}
}

// blockTypes lists the types of the blocks of all messages.
func blockTypesOf(msgs []Message) string {
	var types []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			types = append(types, string(b.BlockType()))
		}
	}
	return strings.Join(types, " ")
}
