package blockkit

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRepairKeepsGeneratedPayloadsSafe repairs payloads put together, at
// random but reproducibly, from the pieces models get wrong: texts with
// Markdown, entities, tokens, long links, emoji and fences in every kind of
// text object; elements with too many or no options, odd dates and long
// labels; media without required fields; wide tables; legacy attachments;
// whole payloads fenced, in a string or single-quoted. Every result must
// pass checkMessages, report changes with a path, and never answer with
// "The answer was empty" while the report_content has words.
func TestRepairKeepsGeneratedPayloadsSafe(t *testing.T) {
	t.Parallel()
	texts := []string{"hello", "a < b & c > d", "**bold** and [link](https://x.io/a_b)", "~5 min", "&amp;gt; twice", "<@U123|bob> <!here>",
		strings.Repeat("long text with words ", 200), "😀" + strings.Repeat("🙂", 160), "see <https://x.io/" + strings.Repeat("q", 3100) + "|doc>",
		"```json\n{\"type\":\"divider\"}\n```", "| a | b |\n|---|---|\n| 1 | 2 |", "# Title\n- item", "`code &lt; x`", "x_y_z *a* _b_",
		"tel:+15551234", "<not a token>", `"quoted"`, "it's", "日本語のテキスト", "a|b", ""}
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return texts[rnd.IntN(len(texts))] }
	oneOf := func(s ...string) string { return s[rnd.IntN(len(s))] }
	textObject := func() any {
		switch rnd.IntN(5) {
		case 0:
			return pick()
		case 1:
			return map[string]any{"type": "plain_text", "text": pick()}
		case 2:
			return map[string]any{"type": "markdown", "text": pick()}
		}
		return map[string]any{"type": "mrkdwn", "text": pick()}
	}
	options := func() []any {
		var o []any
		for range rnd.IntN(12) {
			o = append(o, map[string]any{"text": textObject(), "value": pick(), "url": oneOf("", "https://o.io", "bad")})
		}
		return o
	}
	list := func(n int, item func() any) []any {
		var out []any
		for range rnd.IntN(n) {
			out = append(out, item())
		}
		return out
	}
	element := func() any {
		switch rnd.IntN(8) {
		case 0:
			return map[string]any{"type": "button", "text": textObject(), "action_id": "a",
				"url": oneOf("", "https://b.io", "https://x.io/"+strings.Repeat("u", 3100), "ftp://x")}
		case 1:
			return map[string]any{"type": "overflow", "options": options()}
		case 2:
			return map[string]any{"type": "static_select", "placeholder": textObject(), "options": options()}
		case 3:
			return map[string]any{"type": "datepicker", "initial_date": oneOf("2024-01-02", "Jan 2, 2024", "tomorrow", "")}
		case 4:
			return map[string]any{"type": "timepicker", "initial_time": oneOf("09:00", "9 PM", "noon")}
		case 5:
			return map[string]any{"type": "checkboxes", "options": options()}
		case 6:
			return map[string]any{"type": "users_select", "placeholder": textObject()}
		}
		return map[string]any{"type": "weird", "text": pick()}
	}
	block := func() any {
		switch rnd.IntN(13) {
		case 0:
			return map[string]any{"type": "section", "text": textObject(), "accessory": element()}
		case 1:
			return map[string]any{"type": "section", "fields": list(13, textObject)}
		case 2:
			return map[string]any{"type": "header", "text": textObject()}
		case 3:
			return map[string]any{"type": "context", "elements": list(13, textObject)}
		case 4:
			return map[string]any{"type": "actions", "elements": list(4, element)}
		case 5:
			return map[string]any{"type": "image", "alt_text": pick(), "title": textObject(),
				"image_url": oneOf("https://i.io/a.png", "x", "https://x.io/"+strings.Repeat("i", 3100))}
		case 6:
			return map[string]any{"type": "video", "title": textObject(), "video_url": "https://v.io", "thumbnail_url": oneOf("", "https://t.io/t.png")}
		case 7:
			return map[string]any{"type": "rich_text", "elements": []any{map[string]any{"type": "rich_text_section",
				"elements": []any{map[string]any{"type": "text", "text": pick()}}}}}
		case 8:
			cols := 1 + rnd.IntN(24)
			return map[string]any{"type": "table", "rows": list(5, func() any {
				r := make([]any, cols)
				for i := range r {
					r[i] = pick()
				}
				return r
			})}
		case 9:
			return map[string]any{"type": "markdown", "text": pick()}
		case 10:
			return pick()
		case 11:
			return map[string]any{"type": "divider"}
		}
		return map[string]any{"type": "callout", "title": pick(), "body": pick()}
	}
	attachment := func() any {
		return map[string]any{"color": oneOf("good", "#ff8800", "zz"), "pretext": pick(), "title": pick(), "title_link": "https://t.io",
			"text": pick(), "fields": []any{map[string]any{"title": pick(), "value": pick()}}, "footer": pick(), "ts": 1700000000}
	}
	for i := range 600 {
		blocks := list(6, block)
		var payload any = []any{map[string]any{"blocks": blocks}}
		switch rnd.IntN(6) {
		case 0:
			payload = blocks
		case 1:
			b, _ := json.Marshal(payload)
			payload = "```json\n" + string(b) + "\n```"
		case 2:
			payload = []any{map[string]any{"attachments": []any{attachment(), attachment()}}}
		case 3:
			b, _ := json.Marshal(payload)
			payload = string(b)
		}
		raw, _ := json.Marshal(payload)
		if rnd.IntN(8) == 0 {
			raw = []byte(strings.ReplaceAll(string(raw), `"`, `'`))
		}
		msgs, changes := Repair(raw, "the report "+pick())
		if t.Failed() {
			break
		}
		t.Run("", func(t *testing.T) {
			if len(msgs) == 0 {
				t.Fatalf("no messages for %.300s", raw)
			}
			checkMessages(t, msgs, true)
			for _, c := range changes {
				if c.Path == "" || c.Kind == "" {
					t.Fatalf("change without a path or kind: %+v", c)
				}
			}
			if strings.Contains(fuzzCollect(t, msgs).raw, emptyAnswerText) {
				t.Fatalf("payload %d answered as empty: %.300s", i, raw)
			}
		})
	}
}
