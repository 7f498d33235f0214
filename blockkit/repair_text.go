package blockkit

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// repDetector parses text only to decide whether it is Markdown; it is
// configured once and never changed, so sharing it is safe.
var repDetector = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// repMarkdownSignals reports whether s, written where mrkdwn belongs, holds
// constructs that only Markdown has: **strong** or __strong__, [label](url),
// ![alt](url), an ATX heading, ~~strike~~, a -/*/+ bullet list, a pipe
// table, or a fenced code block with a language tag. Text without any of
// them is left alone, so valid mrkdwn (*bold*, <https://x|y>, • bullets)
// is never rewritten.
func repMarkdownSignals(s string) (markdown bool) {
	if !strings.ContainsAny(s, "*_#[~|-+`") {
		return false
	}
	src := []byte(s)
	doc := repDetector.Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			if repIsATX(n, src) {
				markdown = true
			}
		case *ast.Emphasis:
			if n.Level == 2 {
				markdown = true
			}
		case *ast.Link, *ast.Image:
			markdown = true
		case *ast.List:
			if n.Marker == '-' || n.Marker == '*' || n.Marker == '+' {
				markdown = true
			}
		case *ast.FencedCodeBlock:
			if n.Info != nil && len(strings.TrimSpace(string(n.Info.Segment.Value(src)))) > 0 {
				markdown = true
			}
		case *east.Table:
			markdown = true
		case *east.Strikethrough:
			if repDelimiterBefore(n, src) == '~' && strings.Contains(s, "~~") {
				markdown = true
			}
		}
		if markdown {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return markdown
}

// repIsATX reports whether heading h was written with leading #s (a line
// underlined with --- is a setext heading, which in mrkdwn is just a rule).
func repIsATX(h *ast.Heading, src []byte) bool {
	lines := h.Lines()
	if lines.Len() == 0 {
		// "#" alone: look for the hash on the heading's own line.
		return false
	}
	start := lines.At(0).Start
	i := start
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	return strings.HasPrefix(strings.TrimLeft(string(src[i:start]), " "), "#")
}

// repDelimiterBefore returns the byte just before the first text inside an
// inline container: the delimiter that opened it, when the container starts
// with text.
func repDelimiterBefore(n ast.Node, src []byte) byte {
	for c := n.FirstChild(); c != nil; c = c.FirstChild() {
		if t, ok := c.(*ast.Text); ok {
			if t.Segment.Start > 0 {
				return src[t.Segment.Start-1]
			}
			return 0
		}
	}
	return 0
}

// repProtected marks the bytes of s that marker scanning must not touch:
// code spans, fenced code, Slack <…> tokens and bare URLs.
func repProtected(s string) []bool {
	p := make([]bool, len(s))
	mark := func(a, b int) {
		for k := a; k < b && k < len(p); k++ {
			p[k] = true
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "```"):
			end := strings.Index(s[i+3:], "```")
			if end < 0 {
				mark(i, len(s))
				return p
			}
			mark(i, i+3+end+3)
			i += 3 + end + 3
		case s[i] == '`':
			end := strings.IndexAny(s[i+1:], "`\n")
			if end < 0 || s[i+1+end] == '\n' {
				i++
				continue
			}
			mark(i, i+1+end+1)
			i += end + 2
		case s[i] == '<':
			if n := repTokenLen(s[i:]); n > 0 {
				mark(i, i+n)
				i += n
				continue
			}
			i++
		case s[i] == 'h' && (strings.HasPrefix(s[i:], "http://") || strings.HasPrefix(s[i:], "https://")):
			end := strings.IndexFunc(s[i:], unicode.IsSpace)
			if end < 0 {
				end = len(s) - i
			}
			mark(i, i+end)
			i += end
		default:
			i++
		}
	}
	return p
}

// repTokenLen returns the length of the Slack token at the start of s, or
// 0 if there is none: a link with a web, mail or phone URL (<https://x|y>),
// a user, channel or group mention (<@U1>, <#C1|name>, <!subteam^S1>), a
// special mention (<!here>) or a date (<!date^…|fallback>).
func repTokenLen(s string) int {
	if len(s) < 3 || s[0] != '<' {
		return 0
	}
	end := strings.IndexAny(s[1:], "<>\n")
	if end < 1 || s[1+end] != '>' {
		return 0
	}
	body := s[1 : 1+end]
	head, _, _ := strings.Cut(body, "|")
	ok := false
	switch {
	case strings.HasPrefix(head, "http://"), strings.HasPrefix(head, "https://"),
		strings.HasPrefix(head, "mailto:"), strings.HasPrefix(head, "tel:"):
		ok = !strings.ContainsAny(head, " \t") && !strings.HasSuffix(head, ":") && !strings.HasSuffix(head, "//")
	case strings.HasPrefix(head, "@"):
		ok = repIsSlackID(head[1:], "UWB")
	case strings.HasPrefix(head, "#"):
		ok = repIsSlackID(head[1:], "CG")
	case head == "!here" || head == "!channel" || head == "!everyone":
		ok = true
	case strings.HasPrefix(head, "!subteam^"):
		ok = repIsSlackID(head[len("!subteam^"):], "S")
	case strings.HasPrefix(head, "!date^"):
		ok = strings.Contains(body, "|")
	}
	if !ok {
		return 0
	}
	return end + 2
}

// repIsSlackID reports whether id looks like a Slack ID with one of the
// given leading letters (U123ABC).
func repIsSlackID(id, first string) bool {
	if len(id) < 2 || !strings.ContainsRune(first, rune(id[0])) {
		return false
	}
	for i := 1; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func repIsWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// repMarkerPairs finds pairs of single ch markers (*x*, _x_, ~x~) that
// mrkdwn would render as formatting: an opener not preceded by a word
// character and followed by a non-space, a closer preceded by a non-space
// and not followed by a word character, on one line, outside protected bytes.
func repMarkerPairs(s string, ch byte, prot []bool) [][2]int {
	var pairs [][2]int
	open := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' {
			open = -1
			continue
		}
		if c != ch || prot[i] {
			continue
		}
		if (i > 0 && s[i-1] == ch) || (i+1 < len(s) && s[i+1] == ch) {
			continue // part of a run such as ** or ~~
		}
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		next, _ := utf8.DecodeRuneInString(s[i+1:])
		canOpen := i+1 < len(s) && !unicode.IsSpace(next) && (i == 0 || !repIsWordRune(prev))
		canClose := i > 0 && !unicode.IsSpace(prev) && (i+1 == len(s) || !repIsWordRune(next))
		if open >= 0 && canClose && i > open+1 {
			pairs = append(pairs, [2]int{open, i})
			open = -1
			continue
		}
		if canOpen {
			open = i
		}
	}
	return pairs
}

// repBoldSingleStars turns mrkdwn bold (*x*) into Markdown strong (**x**)
// so that converting a mixed text keeps what its writer meant.
func repBoldSingleStars(s string) string {
	pairs := repMarkerPairs(s, '*', repProtected(s))
	if len(pairs) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*len(pairs))
	last := 0
	for _, p := range pairs {
		b.WriteString(s[last:p[0]])
		b.WriteString("**")
		b.WriteString(s[p[0]+1 : p[1]])
		b.WriteString("**")
		last = p[1] + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

// repEscapeBare escapes the &, < and > that mrkdwn requires escaped,
// keeping existing &amp;/&lt;/&gt; entities, Slack tokens and a > that
// starts a quoted line.
func repEscapeBare(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '&':
			rest := s[i+1:]
			if strings.HasPrefix(rest, "amp;") || strings.HasPrefix(rest, "lt;") || strings.HasPrefix(rest, "gt;") {
				b.WriteByte('&')
			} else {
				b.WriteString("&amp;")
			}
		case '<':
			if n := repTokenLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n - 1
			} else {
				b.WriteString("&lt;")
			}
		case '>':
			if i == 0 || s[i-1] == '\n' {
				b.WriteByte('>')
			} else {
				b.WriteString("&gt;")
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// repClamp cuts s to at most max units (Len), ending with "…", at a
// word boundary where one lies in the last half of the allowance. For
// mrkdwn it also avoids ending inside a <…> token, an &entity; or a code
// block. It reports whether s was cut.
func repClamp(s string, max int, mrkdwn bool) (string, bool) {
	if Len(s) <= max {
		return s, false
	}
	budget := max - 1 // room for the ellipsis
	off := prefixWithin(s, budget)
	cut := off
	if next, _ := utf8.DecodeRuneInString(s[off:]); !unicode.IsSpace(next) {
		if sp := strings.LastIndexFunc(s[:off], unicode.IsSpace); sp > off/2 {
			cut = sp
		}
	}
	if mrkdwn {
		head := s[:cut]
		if lt := strings.LastIndexByte(head, '<'); lt >= 0 && lt > strings.LastIndexByte(head, '>') {
			cut = lt
		}
		head = s[:cut]
		if amp := strings.LastIndexByte(head, '&'); amp >= 0 && amp > strings.LastIndexByte(head, ';') {
			cut = amp
		}
		head = s[:cut]
		if strings.Count(head, "```")%2 == 1 {
			cut = strings.LastIndex(head, "```")
		}
	}
	head := strings.TrimRightFunc(s[:cut], unicode.IsSpace)
	if head == "" {
		// One unbroken token longer than the allowance: cut it hard and
		// make sure no half token remains.
		head = s[:off]
		if mrkdwn {
			head = repEscapeBare(strings.ReplaceAll(head, "<", "&lt;"))
			for Len(head) > budget {
				_, size := utf8.DecodeLastRuneInString(head)
				head = head[:len(head)-size]
			}
			if amp := strings.LastIndexByte(head, '&'); amp >= 0 && amp > strings.LastIndexByte(head, ';') {
				head = head[:amp]
			}
		}
	}
	return head + "…", true
}

// repPlainFromMrkdwn renders mrkdwn as plain text for a notification
// fallback or a plain_text field: links show their label, formatting
// markers and zero-width spaces go, mentions stay as tokens (Slack resolves
// them in notifications). With decode, &amp; &lt; &gt; become characters.
func repPlainFromMrkdwn(s string, decode bool) string {
	s = strings.ReplaceAll(s, "\u200b", "")
	s = strings.ReplaceAll(s, "```", "")
	if strings.ContainsAny(s, "<*_~") {
		prot := repProtected(s)
		drop := make([]bool, len(s))
		for _, ch := range []byte("*_~") {
			for _, p := range repMarkerPairs(s, ch, prot) {
				drop[p[0]], drop[p[1]] = true, true
			}
		}
		var b strings.Builder
		b.Grow(len(s))
		for i := 0; i < len(s); i++ {
			if drop[i] {
				continue
			}
			if s[i] == '<' {
				if n := repTokenLen(s[i:]); n > 0 {
					b.WriteString(repTokenLabel(s[i+1 : i+n-1]))
					i += n - 1
					continue
				}
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	if decode {
		s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
	}
	return s
}

// repTokenLabel is what a person sees for a Slack token body.
func repTokenLabel(body string) string {
	switch body[0] {
	case '@', '#', '!':
		return "<" + body + ">"
	}
	if i := strings.IndexByte(body, '|'); i >= 0 {
		return body[i+1:]
	}
	return strings.TrimPrefix(body, "mailto:")
}

// repLink writes a Slack link token for url with an optional label, or the
// label alone when url is not a web or mail address.
func repLink(url, label string) string {
	url = strings.TrimSpace(url)
	if !(strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "mailto:")) {
		if label != "" {
			return label
		}
		return repEscapeBare(url)
	}
	url = strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", " ", "%20", "\n", "%0A").Replace(url)
	label = strings.TrimSpace(strings.ReplaceAll(label, "\n", " "))
	if label == "" || label == url {
		return "<" + url + ">"
	}
	label = repEscapeBare(strings.NewReplacer("|", "\u2223", "<", "&lt;", ">", "&gt;").Replace(label))
	return "<" + url + "|" + label + ">"
}
