package blockkit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit"
)

// sectionTexts are the mrkdwn texts of the sections of msgs, in order.
func sectionTexts(msgs []blockkit.Message) []string {
	var out []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if s, ok := b.(*slack.SectionBlock); ok && s.Text != nil {
				out = append(out, s.Text.Text)
			}
		}
	}
	return out
}

func TestEmphasisLongEnoughToBeSplitAcrossSectionsIsClosedAndReopenedAtTheCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 700) + "end"
	cases := []struct {
		name, text, mark string
	}{
		{"Markdown bold", "Intro **" + long + "** after", "*"},
		{"mrkdwn bold", "Intro *" + long + "* after", "*"},
		{"italic", "Intro _" + long + "_ after", "_"},
		{"strike", "Intro ~" + long + "~ after", "~"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			raw, _ := json.Marshal([]any{map[string]any{"blocks": []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": c.text}}}}})
			for _, msgs := range [][]blockkit.Message{first(blockkit.Repair(raw, "")), blockkit.FromMarkdown(strings.ReplaceAll(c.text, "*", "**"))} {
				texts := sectionTexts(msgs)
				if len(texts) < 2 {
					t.Fatalf("the text was not split: %d sections", len(texts))
				}
				for i, s := range texts {
					if strings.Contains(s, "**") {
						t.Errorf("section %d shows raw **: …%s", i, tail(s))
					}
					if i < len(texts)-1 && !strings.HasSuffix(s, "word"+c.mark) {
						t.Errorf("section %d does not close the emphasis: …%s", i, tail(s))
					}
					if i > 0 && !strings.HasPrefix(s, c.mark+"word") {
						t.Errorf("section %d does not reopen the emphasis: %.40s…", i, s)
					}
					if n := blockkit.Len(s); n > blockkit.SectionTextMax {
						t.Errorf("section %d is %d long", i, n)
					}
				}
				for _, m := range msgs {
					if err := blockkit.Validate(m); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
}

func TestAnImagesAltTextGivenAsAltIsKept(t *testing.T) {
	t.Parallel()
	msgs, _ := blockkit.Repair(json.RawMessage(`[{"blocks":[{"type":"image","image_url":"https://a.example/x.png","alt":"sales by month"},`+
		`{"type":"context","elements":[{"type":"image","image_url":"https://a.example/y.png","alt":"logo"}]}]}]`), "")
	b, _ := json.Marshal(msgs)
	for _, want := range []string{`"alt_text":"sales by month"`, `"alt_text":"logo"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("want %s in %s", want, b)
		}
	}
}

func TestAMessagesTextBesideLegacyAttachmentsIsShownAboveThem(t *testing.T) {
	t.Parallel()
	msgs, changes := blockkit.Repair(json.RawMessage(`[{"text":"Deploy report for *today*","attachments":[{"color":"good","text":"All green"}]}]`), "")
	texts := sectionTexts(msgs)
	if len(texts) != 2 || texts[0] != "Deploy report for *today*" || !strings.Contains(texts[1], "All green") {
		t.Fatalf("sections %q", texts)
	}
	kept := false
	for _, c := range changes {
		kept = kept || c.Kind == "text_kept"
	}
	if !kept {
		t.Errorf("no text_kept change among %v", changes)
	}
}

func first(msgs []blockkit.Message, _ []blockkit.Change) []blockkit.Message { return msgs }

func tail(s string) string { return s[max(0, len(s)-40):] }
