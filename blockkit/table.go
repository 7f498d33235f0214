package blockkit

import (
	"bytes"
	"cmp"
	"html"
	"strings"
	"unicode"

	"github.com/slack-go/slack"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// Tables.
//
// A GFM table becomes a Slack table block when it fits Slack's limits: at most
// TableMaxRows rows (the header row included), TableMaxCells cells a row and
// TableMaxChars characters across its cells. Slack allows one table block per
// message and shows it after the message's other blocks, so FromMarkdown ends
// the message after each table block: a second table therefore lands in a new
// message, and the text around a table keeps its order. A table that does not
// fit, and every table in Mrkdwn (a text object cannot hold a block), becomes
// a code block with aligned columns: monospace keeps the columns readable and
// no pipe characters are left for Slack to show raw.

// tableCell is one cell of a GFM table.
type tableCell struct {
	text string // what a reader sees: markup removed, links as their labels
	code string // text with each link's URL after its label, for code blocks
	// rich holds the cell as rich text when it has a link or mention, which
	// a raw_text cell would flatten to dead text.
	rich []slack.RichTextSectionElement
}

// tableRows returns the table's cells, header row first, every row padded
// to the number of columns, and the column alignments.
func tableRows(src []byte, t *east.Table) ([][]tableCell, []east.Alignment) {
	cols := len(t.Alignments)
	cb := &cellBuilder{w: newRenderer(src, true)}
	cb.w.flat = 1
	var rows [][]tableCell
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		row := make([]tableCell, 0, cols)
		for c := r.FirstChild(); c != nil && len(row) < cols; c = c.NextSibling() {
			row = append(row, cb.cell(c))
		}
		for len(row) < cols {
			row = append(row, tableCell{})
		}
		rows = append(rows, row)
	}
	return rows, t.Alignments
}

// cellBuilder turns a cell's inline nodes into text and, where needed, rich
// text elements. All cells of a table share its renderer's buffer, and each
// part's text is a slice of it.
type cellBuilder struct {
	w         *renderer // plain and flat
	start     int       // buffer offset where the current cell starts
	run       int       // buffer offset where the current text run starts
	parts     []cellPart
	needsRich bool
	hasURL    bool
	style     slack.RichTextSectionTextStyle // of the text being written
}

// cellPart is a run of text or one element, in cell order.
type cellPart struct {
	text  string
	style *slack.RichTextSectionTextStyle // for a run
	elem  slack.RichTextSectionElement    // nil for a run
	url   string                          // shown after text in code blocks
}

func (cb *cellBuilder) cell(n ast.Node) tableCell {
	cb.start, cb.run = cb.w.b.Len(), cb.w.b.Len()
	cb.parts, cb.needsRich, cb.hasURL = cb.parts[:0], false, false
	cb.walk(n)
	cb.flushRun()
	c := tableCell{text: collapseSpaces(cb.w.b.String()[cb.start:])}
	c.code = c.text
	if cb.hasURL {
		var code strings.Builder
		for _, p := range cb.parts {
			code.WriteString(p.text)
			if p.url != "" {
				code.WriteString(" (" + p.url + ")")
			}
		}
		c.code = collapseSpaces(code.String())
	}
	if cb.needsRich {
		c.rich = make([]slack.RichTextSectionElement, len(cb.parts))
		for i, p := range cb.parts {
			c.rich[i] = p.elem
			if p.elem == nil {
				c.rich[i] = slack.NewRichTextSectionTextElement(p.text, p.style)
			}
		}
	}
	return c
}

func (cb *cellBuilder) walk(n ast.Node) {
	src := cb.w.src
	for k := n.FirstChild(); k != nil; k = k.NextSibling() {
		switch k := k.(type) {
		case *ast.Emphasis:
			outer := cb.style
			cb.flushRun()
			cb.style.Bold = cb.style.Bold || k.Level >= 2
			cb.style.Italic = cb.style.Italic || k.Level == 1
			cb.walk(k)
			cb.flushRun()
			cb.style = outer
		case *east.Strikethrough:
			outer := cb.style
			cb.flushRun()
			cb.style.Strike = true
			cb.walk(k)
			cb.flushRun()
			cb.style = outer
		case *ast.CodeSpan:
			cb.flushRun()
			code := codeSpanText(src, k)
			st := cb.style
			st.Code = true
			cb.element(slack.NewRichTextSectionTextElement(code, &st), code, "")
		case *ast.Link:
			cb.link(decodeURL(k.Destination), k)
		case *ast.Image:
			cb.link(decodeURL(k.Destination), k)
		case *ast.AutoLink:
			url := string(k.URL(src))
			if k.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(url), "mailto:") {
				url = "mailto:" + url
			}
			cb.element(slack.NewRichTextSectionLinkElement(url, "", cb.styleRef()), string(k.Label(src)), url)
		case *slackToken:
			cb.token(k)
		case *ast.RawHTML:
			// Shown as written, as in Mrkdwn: a cell is content, not a label.
			switch v := rawHTMLText(src, k); {
			case isBreakTag(v):
				cb.w.raw(" ") // a cell holds one line
			case !bytes.HasPrefix(v, []byte("<!--")):
				cb.w.raw(string(v))
			}
		default:
			cb.w.inline(k)
		}
	}
}

// styleRef returns the current style for an element, nil when plain.
func (cb *cellBuilder) styleRef() *slack.RichTextSectionTextStyle {
	if cb.style == (slack.RichTextSectionTextStyle{}) {
		return nil
	}
	st := cb.style
	return &st
}

func (cb *cellBuilder) link(url string, n ast.Node) {
	if !linkable(url) {
		cb.w.inlines(n)
		return
	}
	label := collapseSpaces(cb.w.flatLabel(n))
	cb.element(slack.NewRichTextSectionLinkElement(url, label, cb.styleRef()), label, url)
}

// token keeps mentions live: users, channels and @here-style broadcasts
// become rich text elements, links become links, the rest readable text.
func (cb *cellBuilder) token(n *slackToken) {
	tok := n.Segment.Value(cb.w.src)
	body := string(tok[1 : len(tok)-1])
	head, label, _ := strings.Cut(body, "|")
	shown := readableToken(body)
	switch {
	case strings.HasPrefix(head, "@"):
		cb.element(slack.NewRichTextSectionUserElement(head[1:], cb.styleRef()), shown, "")
	case strings.HasPrefix(head, "#"):
		cb.element(slack.NewRichTextSectionChannelElement(head[1:], cb.styleRef()), shown, "")
	case head == "!here" || head == "!channel" || head == "!everyone":
		cb.element(slack.NewRichTextSectionBroadcastElement(head[1:]), shown, "")
	case !strings.HasPrefix(head, "!"):
		url := html.UnescapeString(head)
		cb.element(slack.NewRichTextSectionLinkElement(url, html.UnescapeString(label), cb.styleRef()), shown, url)
	default:
		cb.w.raw(shown)
	}
}

// element adds a rich text element after the text run before it. shown is
// what it reads as; url, if it differs from shown, follows it in code blocks.
func (cb *cellBuilder) element(e slack.RichTextSectionElement, shown, url string) {
	cb.flushRun()
	cb.w.b.WriteString(shown)
	cb.run = cb.w.b.Len()
	if url == shown || "mailto:"+shown == url {
		url = ""
	}
	cb.parts = append(cb.parts, cellPart{text: shown, elem: e, url: url})
	cb.needsRich = true
	cb.hasURL = cb.hasURL || url != ""
}

// flushRun ends the text run written since the last part.
func (cb *cellBuilder) flushRun() {
	if cb.w.b.Len() == cb.run {
		return
	}
	st := cb.styleRef()
	cb.parts = append(cb.parts, cellPart{text: cb.w.b.String()[cb.run:], style: st})
	cb.run = cb.w.b.Len()
	cb.needsRich = cb.needsRich || st != nil
}

// tableBlock builds a Slack table block, or reports that the table is over
// Slack's limits. Cells are raw_text, or rich_text where a link or mention
// must stay live; an empty cell is a single space because Slack requires
// raw_text to be non-empty.
func tableBlock(rows [][]tableCell, aligns []east.Alignment) (*slack.TableBlock, int, bool) {
	if len(rows) == 0 || len(rows) > TableMaxRows || len(aligns) > TableMaxCells {
		return nil, 0, false
	}
	chars := 0
	tb := slack.NewTableBlock("")
	for _, row := range rows {
		cells := make([]slack.TableCell, len(row))
		for i, c := range row {
			text := c.text
			if text == "" {
				text = " "
			}
			chars += Len(text)
			if c.rich != nil {
				cells[i] = slack.NewTableRichTextCell(slack.NewRichTextSection(c.rich...))
			} else {
				cells[i] = slack.NewTableRawTextCell(text)
			}
		}
		tb.AddRow(cells...)
	}
	if chars > TableMaxChars {
		return nil, 0, false
	}
	aligned := false
	settings := make([]slack.ColumnSetting, len(aligns))
	for i, a := range aligns {
		settings[i].Align = slack.ColumnAlignmentLeft
		switch a {
		case east.AlignRight:
			settings[i].Align, aligned = slack.ColumnAlignmentRight, true
		case east.AlignCenter:
			settings[i].Align, aligned = slack.ColumnAlignmentCenter, true
		}
	}
	if aligned {
		tb.WithColumnSettings(settings...)
	}
	return tb, chars, true
}

// tableText writes a table as an aligned code block (plain text in PlainText).
func (w *renderer) tableText(t *east.Table) {
	rows, aligns := tableRows(w.src, t)
	w.codeBlock(alignedTable(rows, aligns))
}

// alignedTable lays the cells out in columns two spaces apart, with a rule of
// dashes under the header row. Widths are display widths, so CJK text and
// emoji (two columns in a monospace font) keep the columns straight.
func alignedTable(rows [][]tableCell, aligns []east.Alignment) string {
	if len(rows) == 0 {
		return ""
	}
	widths := make([]int, len(aligns))
	for i := range widths {
		widths[i] = 1 // the rule under the header needs a dash
	}
	cells := make([][]string, len(rows))
	for r, row := range rows {
		cells[r] = make([]string, len(row))
		for i, cell := range row {
			cells[r][i] = cell.code
			widths[i] = max(widths[i], displayWidth(cell.code))
		}
	}
	var sb strings.Builder
	line := func(row []string) {
		var ln strings.Builder
		for i, cell := range row {
			if i > 0 {
				ln.WriteString("  ")
			}
			pad := widths[i] - displayWidth(cell)
			left := 0
			switch aligns[i] {
			case east.AlignRight:
				left = pad
			case east.AlignCenter:
				left = pad / 2
			}
			ln.WriteString(strings.Repeat(" ", left))
			ln.WriteString(cell)
			ln.WriteString(strings.Repeat(" ", pad-left))
		}
		sb.WriteString(strings.TrimRight(ln.String(), " "))
		sb.WriteByte('\n')
	}
	line(cells[0])
	rule := make([]string, len(widths))
	for i, wd := range widths {
		rule[i] = strings.Repeat("-", wd)
	}
	line(rule)
	for _, row := range cells[1:] {
		line(row)
	}
	return sb.String()
}

// displayWidth approximates the columns s takes in a monospace font: East
// Asian wide and fullwidth characters and most emoji take two, combining
// marks, format characters (U+200B, ZWJ) and variation selectors none.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf), r >= 0xFE00 && r <= 0xFE0F:
		case isWide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

var wideRanges = [...][2]rune{
	{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF},
	{0x4E00, 0x9FFF}, {0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
	{0xFE30, 0xFE4F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
	{0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
}

func isWide(r rune) bool {
	if r < 0x1100 {
		return false
	}
	for _, rg := range wideRanges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

// tableCellsText joins a table block's cells for the notification fallback,
// stopping after about limit bytes.
func tableCellsText(tb *slack.TableBlock, limit int) string {
	var sb strings.Builder
	for _, row := range tb.Rows {
		if sb.Len() > limit {
			break
		}
		for _, c := range row {
			switch c := c.(type) {
			case *slack.TableRawTextCell:
				sb.WriteString(c.Text)
			case *slack.TableRichTextCell:
				for _, e := range c.Elements {
					if sec, ok := e.(*slack.RichTextSection); ok {
						for _, el := range sec.Elements {
							switch el := el.(type) {
							case *slack.RichTextSectionTextElement:
								sb.WriteString(el.Text)
							case *slack.RichTextSectionLinkElement:
								sb.WriteString(cmp.Or(el.Text, el.URL))
							}
						}
					}
				}
			}
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}
