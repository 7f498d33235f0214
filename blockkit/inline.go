package blockkit

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// Inline rendering: text, emphasis, code spans, links and raw HTML.

func (w *renderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inline(c)
	}
}

func (w *renderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		w.literal(n.Segment.Value(w.src), w.src, n.Segment.Start, true)
		if (n.HardLineBreak() || n.SoftLineBreak()) && !(n.Segment.Len() == 0 && afterBreakTag(w.src, n)) {
			w.newline()
		}
	case *ast.String:
		w.literal(n.Value, n.Value, 0, false) // already final text
	case *ast.CodeSpan:
		w.codeSpan(n)
	case *ast.Emphasis:
		c := byte('_')
		if n.Level >= 2 {
			c = '*'
		}
		w.openMark(c)
		w.inlines(n)
		w.closeMark()
	case *east.Strikethrough:
		w.openMark('~')
		w.inlines(n)
		w.closeMark()
	case *ast.Link:
		w.link(n.Destination, n)
	case *ast.Image:
		w.link(n.Destination, n)
	case *ast.AutoLink:
		w.autoLink(n)
	case *ast.RawHTML:
		w.rawHTML(n)
	case *slackToken:
		w.slackToken(n)
	case *east.TaskCheckBox:
		// Rendered by list as ☐ or ☑ in place of the bullet.
	default:
		w.inlines(n)
	}
}

// literal writes Markdown text: backslash escapes and entity references are
// resolved (mrkdwn has neither), then &, < and > are escaped again for Slack.
// A *, _, ~ or ` that Slack could pair into a marker becomes a lookalike (see
// the constants above); base and pos locate the text in its line so that
// check can look for a partner on the same line. markdown is false for raw
// HTML, which has no escapes to resolve.
func (w *renderer) literal(v, base []byte, pos int, markdown bool) {
	for i := 0; i < len(v); {
		c := v[i]
		if markdown && c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]) {
			w.literalRune(rune(v[i+1]), base, pos+i+1)
			i += 2
			continue
		}
		if markdown && c == '&' {
			if chars, n := entityAt(v[i:]); n > 0 {
				for _, r := range string(chars) {
					w.literalRune(r, nil, 0)
				}
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRune(v[i:])
		if r == 0 {
			r = '\ufffd'
		}
		w.literalRune(r, base, pos+i)
		i += size
		if j := w.plainRun(v, i); j > i {
			w.b.Write(v[i:j])
			w.last, _ = utf8.DecodeLastRune(v[i:j])
			i = j
		}
	}
}

// plainRun returns the end of the run of ordinary text starting at v[i],
// which can be copied as is: no character in it needs escaping or a marker
// check, and no line prefix, pending marker or zero-width space is due.
// Most text is such runs, so this keeps conversion cheaper than parsing.
func (w *renderer) plainRun(v []byte, i int) int {
	if w.lineStart || w.closed || w.flat > 0 {
		return i
	}
	for _, m := range w.marks {
		if !m.written && !m.suppressed {
			return i
		}
	}
	j := i
	for j < len(v) {
		c := v[j]
		if c < utf8.RuneSelf {
			if c < ' ' || specialASCII[c] {
				break
			}
			j++
			continue
		}
		r, size := utf8.DecodeRune(v[j:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		j += size
	}
	return j
}

// specialASCII marks the ASCII characters literal text must look at one by
// one: escapes, entities, the characters mrkdwn reserves, and markers.
var specialASCII = [utf8.RuneSelf]bool{'\\': true, '&': true, '<': true, '>': true, '*': true, '_': true, '~': true, '`': true}

func (w *renderer) literalRune(r rune, base []byte, pos int) {
	if !w.plain {
		switch r {
		case '*', '_', '~', '`':
			if w.couldPair(byte(r), base, pos) {
				r = lookalike(r)
			}
		case '>':
			if w.last == 0 && w.flat == 0 {
				// A line starting with &gt; may still read as a quote.
				w.visible(r)
				w.b.WriteRune(zwsp)
			}
		}
	}
	w.visible(r)
	w.escaped(r)
	w.last = r
}

// couldPair reports whether a literal marker character at base[pos] could
// open or close mrkdwn formatting: it sits at a word boundary on the side
// facing its content, and its line holds a partner for it, a c further on
// that can close or one before that can open. A marker without one is
// shown as itself by Slack (~5 min, ~/path), so it stays itself.
func (w *renderer) couldPair(c byte, base []byte, pos int) bool {
	if base == nil {
		return true
	}
	prev := w.last
	next := rune(0)
	if pos+1 < len(base) {
		next, _ = utf8.DecodeRune(base[pos+1:])
		if next == '\n' || next == '\r' {
			next = 0
		}
	}
	opens := !isWordRune(prev) && next != 0 && !unicode.IsSpace(next)
	closes := prev != 0 && !unicode.IsSpace(prev) && !isWordRune(next)
	if !opens && !closes {
		return false
	}
	p := w.partners(base, pos, c)
	return opens && p.lastCloser > pos || closes && p.firstOpener >= 0 && p.firstOpener < pos
}

// markerPartners says where on one source line a marker character can close
// formatting last and open it first (-1: nowhere).
type markerPartners struct{ lastCloser, firstOpener int }

// partnerCache holds the partners of each marker character on one line of
// one source, so that checking every marker of a line costs linear time.
type partnerCache struct {
	base       *byte
	start, end int
	known      [4]bool // by markerIndex
	of         [4]markerPartners
}

// markerIndex numbers the marker characters *, _, ~ and `.
func markerIndex(c byte) int { return strings.IndexByte("*_~`", c) }

// partners returns the partners of c on the line of base holding pos.
func (w *renderer) partners(base []byte, pos int, c byte) markerPartners {
	pc := &w.pairs
	if pc.base != &base[0] || pos < pc.start || pos >= pc.end {
		start := bytes.LastIndexByte(base[:pos], '\n') + 1
		end := len(base)
		if i := bytes.IndexByte(base[pos:], '\n'); i >= 0 {
			end = pos + i
		}
		*pc = partnerCache{base: &base[0], start: start, end: end}
	}
	k := markerIndex(c)
	if pc.known[k] {
		return pc.of[k]
	}
	p := markerPartners{lastCloser: -1, firstOpener: -1}
	line := base[pc.start:pc.end]
	for i := range line {
		if line[i] != c {
			continue
		}
		prev, _ := utf8.DecodeLastRune(line[:i])
		if i == 0 {
			prev = 0
		}
		next, _ := utf8.DecodeRune(line[i+1:])
		if i+1 >= len(line) || next == '\r' {
			next = 0
		}
		if prev != 0 && !unicode.IsSpace(prev) && !isWordRune(next) {
			p.lastCloser = pc.start + i
		}
		if p.firstOpener < 0 && !isWordRune(prev) && next != 0 && !unicode.IsSpace(next) {
			p.firstOpener = pc.start + i
		}
	}
	pc.known[k], pc.of[k] = true, p
	return p
}

func lookalike(r rune) rune {
	switch r {
	case '*':
		return lookalikeAst
	case '_':
		return lookalikeUnd
	case '~':
		return lookalikeTil
	}
	return lookalikeBt
}

func isWordRune(r rune) bool {
	return r != 0 && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
}

// entityAt decodes an HTML entity or numeric character reference at the start
// of v, returning its characters and length, or a zero length if none.
func entityAt(v []byte) ([]byte, int) {
	end := 1
	for end < len(v) && end < 40 && v[end] != ';' {
		if !util.IsAlphaNumeric(v[end]) && v[end] != '#' {
			return nil, 0
		}
		end++
	}
	if end >= len(v) || v[end] != ';' || end == 1 {
		return nil, 0
	}
	resolved := util.ResolveNumericReferences(util.ResolveEntityNames(v[:end+1]))
	if string(resolved) == string(v[:end+1]) {
		return nil, 0
	}
	return resolved, end + 1
}

// codeSpan writes inline code. Slack's `code` cannot contain a backtick, so a
// span that does is written as ```…``` instead: Slack shows it as a small
// preformatted block, but every byte of the code survives, where replacing the
// backtick with a lookalike would break the code for anyone who copies it.
func (w *renderer) codeSpan(n *ast.CodeSpan) {
	code := codeSpanText(w.src, n)
	if w.plain {
		w.raw(code)
		return
	}
	fence := "`"
	if strings.ContainsRune(code, '`') {
		fence = "```"
	}
	w.visible('`')
	if isWordRune(w.last) {
		w.b.WriteRune(zwsp)
	}
	w.b.WriteString(fence)
	ticks := w.codeText(code, len(fence))
	if fence == "```" && ticks > 0 {
		w.b.WriteRune(zwsp)
	}
	w.b.WriteString(fence)
	w.last, w.closed = '`', true
}

// codeSpanText returns a code span's content, line ends read as spaces the
// way CommonMark renders them.
func codeSpanText(src []byte, n *ast.CodeSpan) string {
	if c, ok := n.FirstChild().(*ast.Text); ok && c.NextSibling() == nil {
		if v := c.Segment.Value(src); len(v) == 0 || v[len(v)-1] != '\n' {
			return string(v)
		}
	}
	var sb strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			v := t.Segment.Value(src)
			if len(v) > 0 && v[len(v)-1] == '\n' {
				sb.Write(v[:len(v)-1])
				sb.WriteByte(' ')
			} else {
				sb.Write(v)
			}
		}
	}
	return sb.String()
}

// link writes a link or image as <url|label>, the label flattened to plain
// text because Slack does not format inside link labels. A destination Slack
// cannot open (relative, #fragment, javascript:) keeps only its label; one
// with a scheme a Slack link does not take (tel:, ftp:) is written after its
// label as text.
func (w *renderer) link(dest []byte, n ast.Node) {
	url := decodeURL(dest)
	shown := url
	if !w.plain {
		shown = mrkdwnEscaper.Replace(url)
	}
	switch {
	case w.plain && n.FirstChild() == nil:
		w.raw(shown)
	case !linkable(url):
		w.inlines(n)
	case !webOrMail(url) && n.FirstChild() == nil:
		w.raw(shown)
	case !webOrMail(url):
		w.inlines(n)
		w.raw(" (" + shown + ")")
	case w.plain:
		w.inlines(n)
		if w.linkAddresses && w.flat == 0 {
			w.raw(addressAfter(url, w.flatLabel(n)))
		}
	default:
		w.linkToken(url, w.flatLabel(n))
	}
}

// addressAfter is what follows a link's label in plain text that keeps
// link addresses: " (url)", or nothing when the label is the address
// already. A mail address is shown without "mailto:".
func addressAfter(url, label string) string {
	shown := strings.TrimPrefix(url, "mailto:")
	if label = strings.TrimSpace(label); label == url || label == shown {
		return ""
	}
	return " (" + shown + ")"
}

func (w *renderer) autoLink(n *ast.AutoLink) {
	url := string(n.URL(w.src))
	label := string(n.Label(w.src))
	if w.plain {
		w.raw(label)
		return
	}
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(url), "mailto:") {
		url = "mailto:" + url
	}
	if !webOrMail(url) {
		w.raw(mrkdwnEscaper.Replace(label))
		return
	}
	w.linkToken(url, label)
}

func (w *renderer) linkToken(url, label string) {
	var sb strings.Builder
	sb.WriteByte('<')
	encodeURL(&sb, url)
	label = strings.TrimSpace(label)
	if label != "" && label != url {
		sb.WriteByte('|')
		_, _ = labelEscaper.WriteString(&sb, label)
	}
	sb.WriteByte('>')
	w.raw(sb.String())
}

// flatLabel renders n's children as single-line plain text.
func (w *renderer) flatLabel(n ast.Node) string {
	sub := newRenderer(w.src, true)
	sub.flat = 1
	sub.inlines(n)
	return sub.b.String()
}

// decodeURL resolves Markdown escapes and entities in a link destination.
func decodeURL(dest []byte) string {
	if bytes.IndexByte(dest, '\\') < 0 && bytes.IndexByte(dest, '&') < 0 {
		return string(dest)
	}
	return string(util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(dest))))
}

// encodeURL writes url for use inside <…>: characters that would end or split
// the token (| > < and whitespace) are percent-encoded, & is entity-escaped
// like everywhere in mrkdwn.
func encodeURL(sb *strings.Builder, url string) {
	for i := 0; i < len(url); i++ {
		switch c := url[i]; c {
		case '|', '<', '>', ' ', '\t', '\n', '\r', '"':
			sb.WriteByte('%')
			sb.WriteByte("0123456789ABCDEF"[c>>4])
			sb.WriteByte("0123456789ABCDEF"[c&15])
		case '&':
			sb.WriteString("&amp;")
		default:
			sb.WriteByte(c)
		}
	}
}

// linkable reports whether Slack can open url: it needs a scheme, and
// script-running schemes are refused.
func linkable(url string) bool {
	colon := strings.IndexByte(url, ':')
	if colon <= 0 {
		return false
	}
	for i := range colon {
		c := url[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	switch strings.ToLower(url[:colon]) {
	case "javascript", "vbscript", "data", "file":
		return false
	}
	return true
}

// webOrMail reports whether url is one a Slack link token takes: http,
// https or mailto, with an address after the scheme.
func webOrMail(url string) bool {
	for _, scheme := range []string{"https://", "http://", "mailto:"} {
		if len(url) > len(scheme) && strings.EqualFold(url[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// rawHTML shows inline HTML as text, except that a <br> is a line break and
// a comment stays hidden.
func (w *renderer) rawHTML(n *ast.RawHTML) {
	v := rawHTMLText(w.src, n)
	if isBreakTag(v) {
		w.newline()
		return
	}
	if w.plain || bytes.HasPrefix(v, []byte("<!--")) {
		return // tags are markup in plain text; comments are never shown
	}
	w.literal(v, nil, 0, false)
}

func rawHTMLText(src []byte, n *ast.RawHTML) []byte {
	var v []byte
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		v = append(v, seg.Value(src)...)
	}
	return v
}

// afterBreakTag reports whether n directly follows a <br>, whose line break
// the end of the line must not double.
func afterBreakTag(src []byte, n ast.Node) bool {
	h, ok := n.PreviousSibling().(*ast.RawHTML)
	return ok && isBreakTag(rawHTMLText(src, h))
}

func isBreakTag(v []byte) bool {
	s := strings.ToLower(strings.ReplaceAll(string(v), " ", ""))
	return s == "<br>" || s == "<br/>"
}
