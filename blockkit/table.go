package blockkit

import (
	"bytes"
	"cmp"
	"html"
	"slices"
	"strings"

	"github.com/rivo/uniseg"
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
// no pipe characters are left for Slack to show raw. Columns too wide for a
// code block are wrapped, and a table that cannot fit even so becomes a list
// of its rows, rather than lines padded with screens of spaces.

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
			if !webOrMail(url) {
				cb.w.raw(string(k.Label(src)))
				continue
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
	if !webOrMail(url) {
		cb.w.inlines(n)
		if linkable(url) {
			cb.w.raw(" (" + url + ")")
		}
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

// tableText writes a table in text: an aligned code block, or a list where
// the columns do not fit (see tableFallback).
func (w *renderer) tableText(t *east.Table) {
	rows, aligns := tableRows(w.src, t)
	w.tableFallback(rows, aligns)
}

// tableFallback writes rows that are not a table block: as a code block of
// aligned columns (codeTable), or as a list of the rows (tableList) when the
// columns do not fit a code block even wrapped.
func (w *renderer) tableFallback(rows [][]tableCell, aligns []east.Alignment) {
	cells := make([][]string, len(rows))
	for r, row := range rows {
		cells[r] = make([]string, len(row))
		for i, c := range row {
			cells[r][i] = c.code
		}
	}
	if code, ok := codeTable(cells, aligns); ok {
		w.codeBlock(code)
		return
	}
	for k, item := range tableList(cells, w.plain) {
		if k > 0 {
			w.newline()
			w.newline()
		}
		for j, line := range item {
			if j > 0 {
				w.newline()
			}
			w.raw(line)
		}
	}
}

// Code tables: the widest line a table's code block may take, in monospace
// columns (a code block wider than a chat window scrolls sideways or wraps
// into a mess), and the narrowest column worth wrapping a cell into.
const (
	tableWidth  = 80
	tableMinCol = 8
	tableGap    = 2 // spaces between columns
)

// codeTable lays cells out for a monospaced code block: columns tableGap
// spaces apart, a rule of dashes under the header row. Widths are display
// widths (uniseg), so CJK text and emoji, two columns wide, keep the columns
// straight. A table wider than tableWidth has its widest columns narrowed
// and their cells wrapped between words; ok is false when that cannot fit
// (too many columns, or a word wider than its column could be), and the
// table should be written as a list instead.
func codeTable(cells [][]string, aligns []east.Alignment) (text string, ok bool) {
	if len(cells) == 0 {
		return "", true
	}
	cols := len(cells[0])
	natural := make([]int, cols) // widest cell
	least := make([]int, cols)   // widest word
	for i := range natural {
		natural[i] = 1 // the rule under the header needs a dash
	}
	for _, row := range cells {
		for i, c := range row {
			natural[i] = max(natural[i], displayWidth(c))
			for _, word := range strings.Fields(c) {
				least[i] = max(least[i], displayWidth(word))
			}
		}
	}
	widths := fitColumns(natural, least, tableWidth-tableGap*(cols-1))
	if widths == nil {
		return "", false
	}
	var sb strings.Builder
	line := func(parts []string) {
		var ln strings.Builder
		for i, cell := range parts {
			if i > 0 {
				ln.WriteString(strings.Repeat(" ", tableGap))
			}
			pad := widths[i] - displayWidth(cell)
			left := 0
			if i < len(aligns) {
				switch aligns[i] {
				case east.AlignRight:
					left = pad
				case east.AlignCenter:
					left = pad / 2
				}
			}
			ln.WriteString(strings.Repeat(" ", left))
			ln.WriteString(cell)
			ln.WriteString(strings.Repeat(" ", pad-left))
		}
		sb.WriteString(strings.TrimRight(ln.String(), " "))
		sb.WriteByte('\n')
	}
	row := func(cells []string) {
		wrapped := make([][]string, cols)
		height := 1
		for i, c := range cells {
			wrapped[i] = wrapWords(c, widths[i])
			height = max(height, len(wrapped[i]))
		}
		parts := make([]string, cols)
		for k := range height {
			for i := range parts {
				parts[i] = ""
				if k < len(wrapped[i]) {
					parts[i] = wrapped[i][k]
				}
			}
			line(parts)
		}
	}
	row(cells[0])
	rule := make([]string, cols)
	for i, wd := range widths {
		rule[i] = strings.Repeat("-", wd)
	}
	line(rule)
	for _, r := range cells[1:] {
		row(r)
	}
	return sb.String(), true
}

// fitColumns chooses column widths that sum to at most avail: each column
// gets min(its natural width, a common cap), but never less than its widest
// word or tableMinCol (or its natural width, when narrower), and the cap is
// the largest that fits. nil when even the least widths do not fit.
func fitColumns(natural, least []int, avail int) []int {
	floor := make([]int, len(natural))
	total, sum := 0, 0
	for i := range natural {
		floor[i] = min(natural[i], max(least[i], tableMinCol))
		total += floor[i]
		sum += natural[i]
	}
	if sum <= avail {
		return natural
	}
	if total > avail {
		return nil
	}
	widths := func(c int) ([]int, int) {
		out, n := make([]int, len(natural)), 0
		for i := range natural {
			out[i] = max(floor[i], min(natural[i], c))
			n += out[i]
		}
		return out, n
	}
	lo, hi := 0, slices.Max(natural) // widths(lo) fits, widths(hi) does not
	for lo+1 < hi {
		if _, n := widths((lo + hi) / 2); n <= avail {
			lo = (lo + hi) / 2
		} else {
			hi = (lo + hi) / 2
		}
	}
	out, _ := widths(lo)
	return out
}

// wrapWords breaks s into lines of at most width display columns, between
// words. A word wider than width has a line of its own.
func wrapWords(s string, width int) []string {
	if displayWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	cur, curW := "", 0
	for _, word := range strings.Fields(s) {
		ww := displayWidth(word)
		switch {
		case curW == 0:
			cur, curW = word, ww
		case curW+1+ww <= width:
			cur, curW = cur+" "+word, curW+1+ww
		default:
			lines = append(lines, cur)
			cur, curW = word, ww
		}
	}
	return append(lines, cur)
}

// tableList writes the rows of a table too wide for columns as a list: an
// item for each row after the header, a line for each of its cells,
// "header: value", the header bold in mrkdwn (plain false) and the value
// shown as written. Empty cells are left out. Lines are mrkdwn, escaped.
func tableList(cells [][]string, plain bool) [][]string {
	var items [][]string
	header := cells[0]
	body := cells[1:]
	if len(body) == 0 {
		body, header = cells, nil
	}
	for _, row := range body {
		var lines []string
		for i, v := range row {
			if strings.TrimSpace(v) == "" {
				continue
			}
			h := ""
			if i < len(header) {
				h = strings.TrimSpace(header[i])
			}
			switch {
			case plain && h != "":
				lines = append(lines, h+": "+v)
			case plain:
				lines = append(lines, v)
			case h != "":
				lines = append(lines, "*"+literalMrkdwn(h+":", true)+"* "+literalMrkdwn(v, false))
			default:
				lines = append(lines, literalMrkdwn(v, false))
			}
		}
		if len(lines) > 0 {
			items = append(items, lines)
		}
	}
	return items
}

// displayWidth is the number of columns s takes in a monospace font, by
// grapheme cluster: East Asian wide and fullwidth characters and emoji
// (also ZWJ sequences, flags and emoji variation selectors) take two,
// combining marks and format characters (U+200B) none.
func displayWidth(s string) int { return uniseg.StringWidth(s) }

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
