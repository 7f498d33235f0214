package blockkit

import (
	"testing"

	"github.com/slack-go/slack"
)

func TestRepairGivesRichTextListsABulletOrOrderedStyle(t *testing.T) {
	t.Parallel()
	list := func(style string) string {
		st := ""
		if style != "" {
			st = `"style":` + q(style) + `,`
		}
		return `[{"blocks":[{"type":"rich_text","elements":[{"type":"rich_text_list",` + st + `"elements":[` +
			`{"type":"rich_text_section","elements":[{"type":"text","text":"Drain the old nodes"}]},` +
			`{"type":"rich_text_section","elements":[{"type":"text","text":"Cordon the pool"}]}]}]}]}]`
	}
	cases := []struct {
		style string
		want  slack.RichTextListElementType
		fixed bool
	}{
		{"numbered", slack.RTEListOrdered, true},
		{"Decimal", slack.RTEListOrdered, true},
		{"ordered", slack.RTEListOrdered, false},
		{"bullet", slack.RTEListBullet, false},
		{"dash", slack.RTEListBullet, true},
		{"", slack.RTEListBullet, true},
	}
	tests := make([]repairTest, 0, len(cases))
	for _, tc := range cases {
		var kinds []string
		if tc.fixed {
			kinds = []string{"element_fixed"}
		}
		tests = append(tests, repairTest{
			name:     "a list styled " + q(tc.style) + " stays a rich_text list styled " + string(tc.want),
			messages: list(tc.style), has: []string{"Drain the old nodes", "Cordon the pool"}, kinds: kinds,
			check: func(t *testing.T, msgs []Message) {
				rt, ok := msgs[0].Blocks[0].(*slack.RichTextBlock)
				if !ok {
					t.Fatalf("blocks %q, want the rich_text block kept", blockTypesOf(msgs))
				}
				if l := rt.Elements[0].(*slack.RichTextList); l.Style != tc.want {
					t.Errorf("list style %q, want %q", l.Style, tc.want)
				}
			},
		})
	}
	runRepairTests(t, tests)
}
