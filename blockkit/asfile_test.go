package blockkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// wideTable is a GFM table of cols columns and two rows.
func wideTable(cols int) string {
	var head, rule, row []string
	for i := range cols {
		head = append(head, fmt.Sprintf("c%d", i))
		rule = append(rule, "---")
		row = append(row, fmt.Sprint(i))
	}
	return "| " + strings.Join(head, " | ") + " |\n| " + strings.Join(rule, " | ") + " |\n| " + strings.Join(row, " | ") + " |\n"
}

func TestWhichAnswersGoAsAFile(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("A paragraph of the answer that goes on for a while. ", 60) + "\n\n"
	modelTable := func(cols int) string {
		var cells []string
		for i := range cols {
			cells = append(cells, fmt.Sprintf(`{"type":"raw_text","text":"c%d"}`, i))
		}
		row := "[" + strings.Join(cells, ",") + "]"
		return `[{"blocks":[{"type":"table","rows":[` + row + `,` + row + `]}]}]`
	}
	for _, tt := range []struct {
		name     string
		markdown string
		blockKit string // a model-written answer, repaired
		max      int
		asFile   bool
		reason   string
	}{
		{name: "a short answer is posted as messages", markdown: "The build is green.", max: 3},
		{name: "an answer of more messages than the limit goes as a file", markdown: strings.Repeat(long, 20), max: 3, asFile: true, reason: "messages"},
		{name: "the same answer stays messages under a higher limit", markdown: strings.Repeat(long, 20), max: 100},
		{name: "a 40-column table goes as a file", markdown: "Results:\n\n" + wideTable(40), max: 3, asFile: true, reason: "40 columns"},
		{name: "a 10-column table is a table block", markdown: "Results:\n\n" + wideTable(10), max: 3},
		{name: "a code line of 200 columns goes as a file", markdown: "```\n" + strings.Repeat("x", 200) + "\n```\n", max: 3, asFile: true, reason: "200 columns"},
		{name: "a table block the model wrote too wide goes as a file", blockKit: modelTable(40), max: 3, asFile: true, reason: "too wide"},
		{name: "a table block the model wrote within limits stays", blockKit: modelTable(5), max: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var msgs []Message
			var changes []Change
			if tt.blockKit != "" {
				msgs, changes = Repair(json.RawMessage(tt.blockKit), "")
			} else {
				msgs = FromMarkdown(tt.markdown)
			}
			d := AnswerAsFile(msgs, tt.markdown, changes, tt.max)
			if d.AsFile != tt.asFile || !strings.Contains(d.Reason, tt.reason) {
				t.Fatalf("AnswerAsFile over %d messages = %+v, want as file %v with a reason naming %q", len(msgs), d, tt.asFile, tt.reason)
			}
		})
	}
}

func TestAWideCodeBlockInRenderedMessagesGoesAsAFileWithoutItsMarkdown(t *testing.T) {
	t.Parallel()
	msgs := FromMarkdown("```\n" + strings.Repeat("y", 150) + "\n```\n")
	if d := AnswerAsFile(msgs, "", nil, 3); !d.AsFile || !strings.Contains(d.Reason, "150 columns") {
		t.Fatalf("AnswerAsFile = %+v, want as file: a code block 150 columns wide", d)
	}
}
