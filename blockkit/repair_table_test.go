package blockkit

import (
	"testing"

	"github.com/slack-go/slack"
)

func TestRepairKeepsTheAddressOfLinksInTableCells(t *testing.T) {
	t.Parallel()
	table := func(cell string) string {
		return `[{"blocks":[{"type":"table","rows":[[{"type":"raw_text","text":"Service"},{"type":"raw_text","text":"Link"}],` +
			`[{"type":"raw_text","text":"checkout"},` + cell + `]]}]}]`
	}
	cases := []struct {
		name, cell, want string
	}{
		{"a Markdown link in a raw_text cell is its label and address",
			`{"type":"raw_text","text":"[runbook](https://runbooks.example.com/co)"}`, "runbook (https://runbooks.example.com/co)"},
		{"a link element in a rich_text cell is its label and address",
			`{"type":"rich_text","elements":[{"type":"link","url":"https://grafana.example.io/d/co","text":"checkout dash"}]}`,
			"checkout dash (https://grafana.example.io/d/co)"},
		{"a link in a rich_text section cell is its label and address",
			`{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"see "},{"type":"link","url":"https://d.example.com/x","text":"docs"}]}]}`,
			"see docs (https://d.example.com/x)"},
		{"a link without a label is its address",
			`{"type":"rich_text","elements":[{"type":"link","url":"https://d.example.com/x"}]}`, "https://d.example.com/x"},
		{"a Slack link token in a raw_text cell with Markdown is its label and address",
			`{"type":"raw_text","text":"**see** <https://d.example.com/x|docs>"}`, "see docs (https://d.example.com/x)"},
		{"an entity the model escaped in a raw_text cell shows as its character",
			`{"type":"raw_text","text":"R&amp;D"}`, "R&D"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs, _ := Repair([]byte(table(tc.cell)), "")
			checkMessages(t, msgs, false)
			tb, ok := msgs[0].Blocks[0].(*slack.TableBlock)
			if !ok {
				t.Fatalf("blocks %q, want a table", blockTypesOf(msgs))
			}
			if got := tb.Rows[1][1].(*slack.TableRawTextCell).Text; got != tc.want {
				t.Errorf("cell %q, want %q", got, tc.want)
			}
		})
	}
}
