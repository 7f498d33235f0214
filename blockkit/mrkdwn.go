package blockkit

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// Mrkdwn converts Markdown (CommonMark with GitHub's extensions, as models
// write it) to Slack mrkdwn for one text object. It walks goldmark's syntax
// tree, so emphasis, code and links are recognised the way a Markdown renderer
// sees them rather than guessed at by patterns. Headings become bold lines,
// rules a line of box-drawing characters and tables an aligned code block;
// FromMarkdown maps those to header, divider and table blocks instead.
// The result is not clamped: use SplitMrkdwn or FromMarkdown for long text.
func Mrkdwn(markdown string) string {
	src := []byte(markdown)
	doc := parseMarkdown(src)
	w := newRenderer(src, false)
	w.blocks(doc, 2)
	return strings.TrimRight(w.b.String(), " \n")
}

// plainKeepingLinks converts Markdown to readable plain text, for a
// plain_text field or a table cell, which cannot link: markup is removed, a
// link's or image's address follows its label or alt text in parentheses
// ("docs (https://d.io)") so the reader still sees where it leads, list
// bullets and numbers stay, code keeps its content without fences, and
// Slack tokens read as @name, #channel or @here. Nothing is escaped;
// escape &, < and > before using the result as mrkdwn.
func plainKeepingLinks(markdown string) string {
	src := []byte(markdown)
	doc := parseMarkdown(src)
	w := newRenderer(src, true)
	w.linkAddresses = true
	w.blocks(doc, 2)
	return strings.TrimSpace(w.b.String())
}

// Characters Slack never formats, used where Markdown's literal *, _, ~ or `
// would otherwise pair up into mrkdwn markers. mrkdwn has no escape character,
// and U+200B next to a marker is how converters make Slack see a marker, not
// how they hide one, so a visually close character is the one reliable way to
// keep the text literal.
const (
	zwsp         = '\u200b'
	lookalikeAst = '\u2217' // ∗ ASTERISK OPERATOR
	lookalikeUnd = '\uff3f' // ＿ FULLWIDTH LOW LINE
	lookalikeTil = '\u223c' // ∼ TILDE OPERATOR
	lookalikeBt  = '\u2035' // ‵ REVERSED PRIME (not a letter, so words stay apart)
	labelBar     = '\u2223' // ∣ DIVIDES, for | inside a link label
	ruleLine     = "────────────────"
)

var bullets = [...]string{"• ", "◦ ", "▪ "}

// renderer writes mrkdwn (or, with plain set, plain text) while walking the
// syntax tree. It owns the per-line state mrkdwn needs: quote and indentation
// prefixes, which emphasis markers are open (mrkdwn markers do not span lines,
// so they are closed before every newline and reopened after it), and the last
// rune written (markers touching word characters need U+200B beside them).
type renderer struct {
	src   []byte
	b     strings.Builder
	plain bool
	// linkAddresses: plain text writes a link's address after its label.
	linkAddresses bool

	quote     bool     // inside a blockquote: every line starts with "> "
	indents   []string // list indentation, outermost first
	inCode    bool     // writing code block lines: no list indentation
	lineStart bool     // nothing written on this line yet, prefixes pending
	last      rune     // last rune written on this line, 0 at its start
	closed    bool     // the last thing written was a closing marker
	marks     []mark   // open emphasis, innermost last
	flat      int      // >0 inside link labels: no markers, no newlines
	listDepth int
	pairs     partnerCache
}

// mark is one open emphasis. Its marker is written lazily, before the first
// visible rune of its content, so empty emphasis leaves no stray marker.
type mark struct {
	c          byte
	written    bool
	suppressed bool // same marker already open (e.g. bold inside a bold heading)
}

func newRenderer(src []byte, plain bool) *renderer {
	return &renderer{src: src, plain: plain, lineStart: true}
}

// blocks renders the block children of n, separated by gap newlines (2 leaves
// an empty line between them, 1 starts each on its own line).
func (w *renderer) blocks(n ast.Node, gap int) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if w.invisible(c) {
			continue
		}
		if !first {
			for range gap {
				w.newline()
			}
		}
		first = false
		w.block(c)
	}
}

// invisible reports whether block n renders nothing, so that it takes no
// space between its neighbours either.
func (w *renderer) invisible(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.ThematicBreak:
		return w.plain
	case *ast.HTMLBlock:
		return n.HTMLBlockType == ast.HTMLBlockType2
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return codeLines(w.src, n) == ""
	}
	return false
}

func (w *renderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		w.inlines(n)
	case *ast.Heading:
		w.openMark('*')
		w.inlines(n)
		w.closeMark()
	case *ast.ThematicBreak:
		w.raw(ruleLine)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		w.codeBlock(codeLines(w.src, n))
	case *ast.Blockquote:
		outer := w.quote
		w.quote = !w.plain
		w.blocks(n, 2)
		w.quote = outer
	case *ast.List:
		w.list(n)
	case *ast.HTMLBlock:
		w.htmlBlock(n)
	case *east.Table:
		w.tableText(n)
	default:
		w.blocks(n, 2)
	}
}

func (w *renderer) list(l *ast.List) {
	depth := w.listDepth
	w.listDepth++
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			w.newline()
		}
		w.beginLine()
		var marker string
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		} else {
			marker = bullets[min(depth, len(bullets)-1)]
		}
		if box := taskBox(item); box != nil {
			check := "☐ "
			if box.IsChecked {
				check = "☑ "
			}
			if l.IsOrdered() {
				marker += check
			} else {
				marker = check
			}
		}
		w.b.WriteString(marker)
		w.last = ' '
		w.indents = append(w.indents, "    ")
		w.blocks(item, 1)
		w.indents = w.indents[:len(w.indents)-1]
	}
	w.listDepth--
}

// taskBox returns the GFM task checkbox that opens a list item, if any.
func taskBox(item ast.Node) *east.TaskCheckBox {
	if first := item.FirstChild(); first != nil {
		if box, ok := first.FirstChild().(*east.TaskCheckBox); ok {
			return box
		}
	}
	return nil
}

// htmlBlock shows raw HTML as the text it is: Slack would otherwise read its
// angle brackets as link syntax. (Comments are invisible: see invisible.)
func (w *renderer) htmlBlock(n *ast.HTMLBlock) {
	var lines []byte
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		lines = append(lines, seg.Value(w.src)...)
	}
	if n.HasClosure() {
		closure := n.ClosureLine
		lines = append(lines, closure.Value(w.src)...)
	}
	text := strings.TrimRight(string(lines), " \t\r\n")
	if w.plain {
		w.b.WriteString(text)
		return
	}
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			w.newline()
		}
		w.literal([]byte(strings.TrimRight(line, "\r")), nil, 0, false)
	}
}

// codeLines returns a code block's content exactly as written, ending in a
// newline unless empty.
func codeLines(src []byte, n ast.Node) string {
	var sb strings.Builder
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		sb.Write(seg.Value(src))
	}
	s := sb.String()
	if strings.TrimSpace(s) == "" {
		return ""
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// codeBlock writes a ``` block. Content keeps every byte except that &, < and
// > are escaped and a run of three backticks is broken with U+200B, because
// Slack ends the block at the first ``` whatever follows it.
func (w *renderer) codeBlock(code string) {
	if code == "" {
		return
	}
	w.beginLine()
	if w.plain {
		w.b.WriteString(strings.TrimRight(code, "\n"))
		w.last = 'x'
		return
	}
	w.b.WriteString("```")
	w.inCode = true
	w.newline()
	w.beginLine()
	for code != "" {
		line, rest, nl := strings.Cut(code, "\n")
		w.codeText(line, 0)
		if nl {
			w.newline()
			w.beginLine()
		}
		code = rest
	}
	w.b.WriteString("```")
	w.inCode = false
	w.last = '`'
}

// codeText writes code content with codeRune's rules, copying the runs that
// need none of them (most code) in one piece. ticks is as for codeRune.
func (w *renderer) codeText(s string, ticks int) int {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if codeSpecial[c] {
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				break // written as U+FFFD, like ranging over the string does
			}
			j += size
		}
		if j > i {
			w.b.WriteString(s[i:j])
			ticks, i = 0, j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		ticks = w.codeRune(r, ticks)
		i += size
	}
	return ticks
}

// codeSpecial marks the ASCII characters codeRune changes.
var codeSpecial = [utf8.RuneSelf]bool{'`': true, '&': true, '<': true, '>': true}

// codeRune writes one rune of code content. ticks is the length of the
// backtick run just written; codeRune returns the new one, breaking any run
// that would reach three and read as a ``` fence.
func (w *renderer) codeRune(r rune, ticks int) int {
	if r != '`' {
		w.escaped(r)
		return 0
	}
	if ticks >= 2 {
		w.b.WriteRune(zwsp)
		ticks = 0
	}
	w.b.WriteByte('`')
	return ticks + 1
}

// escaped writes r, entity-escaping the three characters mrkdwn reserves.
func (w *renderer) escaped(r rune) {
	switch {
	case w.plain:
		w.b.WriteRune(r)
	case r == '&':
		w.b.WriteString("&amp;")
	case r == '<':
		w.b.WriteString("&lt;")
	case r == '>':
		w.b.WriteString("&gt;")
	default:
		w.b.WriteRune(r)
	}
}

// newline ends the current line. Open markers are closed first and reopened
// on the next line, since Slack does not carry emphasis across lines. An empty
// line inside a quote still gets its ">" so the quote is not cut in two.
func (w *renderer) newline() {
	if w.flat > 0 {
		w.visible(' ')
		w.b.WriteByte(' ')
		w.last = ' '
		return
	}
	for i := len(w.marks) - 1; i >= 0; i-- {
		if m := &w.marks[i]; m.written {
			w.b.WriteByte(m.c)
			m.written = false
		}
	}
	if w.lineStart && w.quote {
		w.b.WriteByte('>')
	}
	w.b.WriteByte('\n')
	w.lineStart, w.last, w.closed = true, 0, false
}

// beginLine writes the line's prefixes once something is written on it. The
// quote marker goes first because Slack only sees ">" at the start of a line.
func (w *renderer) beginLine() {
	if !w.lineStart {
		return
	}
	w.lineStart = false
	if w.quote {
		w.b.WriteString("> ")
	}
	if !w.inCode {
		for _, s := range w.indents {
			w.b.WriteString(s)
		}
	}
}

func (w *renderer) openMark(c byte) {
	m := mark{c: c, suppressed: w.plain || w.flat > 0}
	for _, o := range w.marks {
		if o.c == c && !o.suppressed {
			m.suppressed = true
		}
	}
	w.marks = append(w.marks, m)
}

func (w *renderer) closeMark() {
	m := w.marks[len(w.marks)-1]
	w.marks = w.marks[:len(w.marks)-1]
	if m.written {
		w.b.WriteByte(m.c)
		w.last, w.closed = rune(m.c), true
	}
}

// flushMarks writes pending opening markers before visible content, with
// U+200B first when they would touch a word character or a marker just closed.
func (w *renderer) flushMarks() {
	zw := isWordRune(w.last) || w.closed
	for i := range w.marks {
		m := &w.marks[i]
		if m.written || m.suppressed {
			continue
		}
		if zw {
			w.b.WriteRune(zwsp)
			zw = false
		}
		w.b.WriteByte(m.c)
		m.written = true
		w.last, w.closed = rune(m.c), false
	}
}

// visible prepares to write the visible rune r: line prefixes, pending
// markers (not before whitespace, where Slack would not see them) and U+200B
// after a closing marker that r would otherwise touch.
func (w *renderer) visible(r rune) {
	w.beginLine()
	if !unicode.IsSpace(r) {
		w.flushMarks()
	}
	if w.closed && isWordRune(r) {
		w.b.WriteRune(zwsp)
	}
	w.closed = false
}

// raw writes s verbatim as visible content (a Slack token, a fence, a rule).
func (w *renderer) raw(s string) {
	if s == "" {
		return
	}
	first, _ := utf8.DecodeRuneInString(s)
	w.visible(first)
	w.b.WriteString(s)
	w.last, _ = utf8.DecodeLastRuneInString(s)
}
