package blockkit

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 3 of Repair, continued: table blocks.

// table rebuilds a table block: cells become raw_text, rows are padded to
// one width, more than TableMaxRows rows or TableMaxChars characters go
// into further tables (each repeating the first row as its header), and a
// table wider than TableMaxCells, or with a row too long for any table,
// becomes text: aligned columns in a code block, or a list of its rows
// when the columns do not fit one (see codeTable).
func (r *repairer) table(n *jsonish.Value, path, id string) []slack.Block {
	rv := n.Get("rows")
	if rv == nil || rv.Kind != jsonish.Array {
		return r.convert(n, path, "table without rows")
	}
	var rows [][]string
	width := 0
	for i, row := range rv.Vals {
		rp := index(join(path, "rows"), i)
		var cells []*jsonish.Value
		switch {
		case row.Kind == jsonish.Array:
			cells = row.Vals
		case row.Kind == jsonish.Object && row.Get("cells") != nil && row.Get("cells").Kind == jsonish.Array:
			cells = row.Get("cells").Vals
		default:
			r.note(rp, "shape_coerced", "row that is not a list read as one cell")
			cells = []*jsonish.Value{row}
		}
		texts := make([]string, len(cells))
		for j, c := range cells {
			texts[j] = r.cellText(c, index(rp, j))
		}
		rows = append(rows, texts)
		width = max(width, len(texts))
	}
	if len(rows) == 0 || width == 0 {
		r.note(path, "empty_dropped", "table without cells")
		return nil
	}
	padded := false
	for i := range rows {
		for len(rows[i]) < width {
			rows[i] = append(rows[i], "")
			padded = true
		}
	}
	if padded {
		r.note(join(path, "rows"), "shape_coerced", fmt.Sprintf("short rows padded to %d cells", width))
	}
	if width > TableMaxCells {
		return r.tableAsText(rows, id, path, fmt.Sprintf("%d columns (at most %d)", width, TableMaxCells))
	}
	rowChars := func(row []string) int {
		n := 0
		for _, c := range row {
			n += Len(c)
		}
		return n
	}
	head := rowChars(rows[0])
	for _, row := range rows[1:] {
		if head+rowChars(row) > TableMaxChars {
			return r.tableAsText(rows, id, path, fmt.Sprintf("a row too long for a table (at most %d characters)", TableMaxChars))
		}
	}
	settings := columnSettings(n.Get("column_settings"), width)
	// Each table repeats the header row and stays within the row and
	// character limits of one table.
	var chunks [][][]string
	cur, chars := [][]string{rows[0]}, head
	for _, row := range rows[1:] {
		c := rowChars(row)
		if len(cur) == TableMaxRows || chars+c > TableMaxChars {
			chunks = append(chunks, cur)
			cur, chars = [][]string{rows[0]}, head
		}
		cur = append(cur, row)
		chars += c
	}
	chunks = append(chunks, cur)
	var out []slack.Block
	for _, chunk := range chunks {
		t := &slack.TableBlock{Type: slack.MBTTable, BlockID: id, ColumnSettings: settings}
		for _, row := range chunk {
			cells := make([]slack.TableCell, len(row))
			for j, c := range row {
				if c == "" {
					c = " " // Slack needs raw_text to be non-empty
				}
				cells[j] = slack.NewTableRawTextCell(c)
			}
			t.Rows = append(t.Rows, cells)
		}
		out = append(out, t)
		id = ""
	}
	if len(out) > 1 {
		r.note(join(path, "rows"), "table_split", fmt.Sprintf("%d rows spread over %d tables (at most %d rows and %d characters each, header repeated)", len(rows), len(out), TableMaxRows, TableMaxChars))
	}
	return out
}

// columnSettings keeps the alignment and wrapping of up to width columns.
func columnSettings(cs *jsonish.Value, width int) []slack.ColumnSetting {
	var settings []slack.ColumnSetting
	for _, c := range cs.Items() {
		if len(settings) == width {
			break
		}
		s := slack.ColumnSetting{Align: slack.ColumnAlignmentLeft}
		switch a := slack.ColumnAlignment(c.GetString("align")); a {
		case slack.ColumnAlignmentCenter, slack.ColumnAlignmentRight:
			s.Align = a
		}
		if w := c.Get("is_wrapped"); w != nil && w.Kind == jsonish.Bool {
			s.IsWrapped = w.Bool
		}
		settings = append(settings, s)
	}
	return settings
}

// tableAsText writes rows that cannot be a table block as text: aligned
// columns in a code block, or a list of the rows when they do not fit one.
func (r *repairer) tableAsText(rows [][]string, id, path, reason string) []slack.Block {
	var text string
	if code, ok := codeTable(rows, nil); ok {
		r.note(path, "table_converted", reason+": shown as a code block")
		w := newRenderer(nil, false)
		w.codeBlock(code)
		text = w.b.String()
	} else {
		r.note(path, "table_converted", reason+": too wide for aligned columns, shown as a list of its rows")
		var items []string
		for _, lines := range tableList(rows, false) {
			items = append(items, strings.Join(lines, "\n"))
		}
		text = strings.Join(items, "\n\n")
	}
	return r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: text}, id, path)
}

// cellText reads one table cell as the plain text of a raw_text cell (see
// plainText): Markdown rendered, links as their label and address.
func (r *repairer) cellText(c *jsonish.Value, path string) string {
	var s string
	switch c.Kind {
	case jsonish.String, jsonish.Number, jsonish.Bool:
		s = c.Text()
	case jsonish.Object:
		switch c.GetString("type") {
		case "raw_text", "":
			if s = c.Get("text").Text(); s == "" {
				s = readable(c)
			}
		case "raw_number":
			if s = c.GetString("text"); s == "" {
				s = c.Get("value").Text()
			}
		default:
			// A rich_text cell (or another kind) reads as its words, its
			// links as label and address.
			s = readable(c)
			if markdownSignals(s) {
				r.note(path, "markdown_converted", "Markdown in a table cell rendered as plain text")
				return collapseSpaces(plainKeepingLinks(s))
			}
			return collapseSpaces(mrkdwnPlainLinks(s))
		}
	case jsonish.Array:
		s = readable(c)
	}
	return strings.TrimSpace(r.plainText(collapseSpaces(s), path, "a table cell"))
}
