package blockkit

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 3 of Repair, continued: text objects. A model told to write mrkdwn
// often writes Markdown, or a mix; Markdown is converted only where it uses
// something only Markdown has, so valid mrkdwn is never rewritten.

// textObject rebuilds a text composition object. want is "mrkdwn",
// "plain_text" (the field allows nothing else) or "" (either). It returns
// nil when there is no text.
func (r *repairer) textObject(v *jsonish.Value, path, want string) *slack.TextBlockObject {
	if v == nil || v.Kind == jsonish.Null {
		return nil
	}
	typ, txt, textPath := "", "", path
	var emoji *bool
	verbatim := false
	orWant := func() string {
		if want == "" {
			return slack.MarkdownType
		}
		return want
	}
	switch v.Kind {
	case jsonish.String, jsonish.Number, jsonish.Bool:
		txt, typ = v.Text(), orWant()
		if strings.TrimSpace(txt) == "" {
			return nil
		}
		r.note(path, "text_wrapped", "string wrapped in a "+typ+" text object")
	case jsonish.Array:
		txt, typ = readable(v), orWant()
		if strings.TrimSpace(txt) == "" {
			return nil
		}
		r.note(path, "text_wrapped", "list joined into a "+typ+" text object")
	case jsonish.Object:
		inner := v.Get("text")
		if inner != nil && inner.Kind == jsonish.Object {
			r.note(path, "shape_coerced", "nested text object unwrapped")
			return r.textObject(inner, join(path, "text"), want)
		}
		typ, textPath = v.GetString("type"), join(path, "text")
		if inner != nil && inner.Kind != jsonish.Array {
			txt = inner.Text()
		} else {
			txt = readable(v)
		}
		if strings.TrimSpace(txt) == "" {
			return nil
		}
		if e := v.Get("emoji"); e != nil && e.Kind == jsonish.Bool {
			emoji = &e.Bool
		}
		if vb := v.Get("verbatim"); vb != nil && vb.Kind == jsonish.Bool {
			verbatim = vb.Bool
		}
		switch typ {
		case slack.MarkdownType, slack.PlainTextType:
		case "":
			typ = orWant()
			r.note(join(path, "type"), "type_inferred", "missing text type inferred as "+typ)
		case "markdown":
			// Written as Markdown on purpose: convert it whatever it holds.
			r.note(join(path, "type"), "text_type_fixed", `text type "markdown" converted to mrkdwn`)
			if want == slack.PlainTextType {
				return plainObject(plainKeepingLinks(txt), emoji)
			}
			return &slack.TextBlockObject{Type: slack.MarkdownType, Text: r.convertMarkdown(txt, textPath, false)}
		default:
			r.note(join(path, "type"), "text_type_fixed", fmt.Sprintf("text type %q replaced by %s", typ, orWant()))
			typ = orWant()
		}
	}
	if want == slack.PlainTextType && typ == slack.MarkdownType {
		r.note(path, "text_type_fixed", "mrkdwn where only plain_text is allowed")
		return plainObject(mrkdwnPlainLinks(txt), emoji)
	}
	if typ == slack.PlainTextType {
		return plainObject(r.plainText(txt, textPath, "plain_text"), emoji)
	}
	return &slack.TextBlockObject{Type: slack.MarkdownType, Text: r.mrkdwnText(txt, textPath), Verbatim: verbatim}
}

// plainText repairs text written for a plain_text field or a raw_text table
// cell (where), which show their text as it is: Markdown is rendered as
// plain text (a link as its label and address), and the entities &amp;
// &lt; &gt; a model wrote out of mrkdwn habit are decoded once, or the
// reader would see "&amp;" where it meant "&".
func (r *repairer) plainText(s, path, where string) string {
	if markdownSignals(s) {
		r.note(path, "markdown_converted", "Markdown in "+where+" rendered as plain text")
		return plainKeepingLinks(s)
	}
	if un := entityDecoder.Replace(s); un != s {
		r.note(path, "entities_unescaped", "entities in "+where+" decoded once: it shows text as written")
		return un
	}
	return s
}

func plainObject(txt string, emoji *bool) *slack.TextBlockObject {
	if strings.TrimSpace(txt) == "" {
		return nil
	}
	return &slack.TextBlockObject{Type: slack.PlainTextType, Text: txt, Emoji: emoji}
}

// mrkdwnText repairs text written for a mrkdwn field: Markdown is converted,
// bare &, < and > are escaped, a text escaped twice throughout (&amp;gt;)
// is unescaped once, valid mrkdwn is kept as it is. In text that mixes the
// dialects a single-star *x* stays bold: the model was told to write
// mrkdwn, where that is bold, and italic reads _x_ in both dialects.
func (r *repairer) mrkdwnText(s, path string) string {
	if escapedTwice(s) {
		r.note(path, "entities_unescaped", "entities escaped twice (&amp;gt;) unescaped once")
		s = undoDoubleEscapes(s)
	}
	if markdownSignals(s) {
		return r.convertMarkdown(s, path, true)
	}
	out := escapeBare(s)
	if out != s {
		r.note(path, "entities_escaped", "bare &, < or > escaped")
	}
	return out
}

// escapedTwice reports whether every entity of mrkdwn s is escaped twice
// (&amp;gt; for &gt;), as when a model escaped text that was escaped
// already. A text that also holds an entity escaped once is escaped
// correctly, and its &amp;amp; shows the text "&amp;" on purpose.
func escapedTwice(s string) bool {
	twice := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '&':
		case strings.HasPrefix(s[i:], "&amp;amp;"), strings.HasPrefix(s[i:], "&amp;lt;"), strings.HasPrefix(s[i:], "&amp;gt;"):
			twice = true
			i += len("&amp;") - 1
		case entityLen(s[i:]) > 0:
			return false
		}
	}
	return twice
}

// undoDoubleEscapes replaces &amp;amp; &amp;lt; &amp;gt; by the single
// escape until none is left.
func undoDoubleEscapes(s string) string {
	for strings.Contains(s, "&amp;") {
		un := doubleEscapes.Replace(s)
		if un == s {
			break
		}
		s = un
	}
	return s
}

// convertMarkdown converts text written for mrkdwn with Mrkdwn. The writer
// escaped &, < and > for mrkdwn, also inside code, where Markdown keeps
// entities literally: there they are decoded first, or they would be
// escaped twice. With boldStars, the writer's single-star *x* (mrkdwn bold)
// is kept bold rather than read as Markdown italic.
func (r *repairer) convertMarkdown(s, path string, boldStars bool) string {
	in := decodeInCode(s)
	if boldStars {
		in = boldSingleStars(in)
	}
	out := strings.TrimSpace(Mrkdwn(in))
	r.note(path, "markdown_converted", "Markdown converted to mrkdwn")
	return out
}

// decodeInCode decodes &amp; &lt; &gt; inside the code spans and code
// blocks of s.
func decodeInCode(s string) string {
	if !strings.Contains(s, "`") || !strings.Contains(s, "&") {
		return s
	}
	code := protectedRanges(s, true)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '&' && code[i] {
			if n := entityLen(s[i:]); n > 0 {
				b.WriteString(entityDecoder.Replace(s[i : i+n]))
				i += n - 1
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// markdownDetector parses text only to decide whether it is Markdown; it is
// configured once and never changed, so sharing it is safe.
var markdownDetector = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// markdownSignals reports whether s, written where mrkdwn belongs, holds
// constructs that only Markdown has: **strong** or __strong__, [label](url),
// ![alt](url), an ATX heading, ~~strike~~, a -/*/+ bullet list, a pipe
// table, or a fenced code block with a language tag. Text without any of
// them is left alone, so valid mrkdwn (*bold*, <https://x|y>, • bullets)
// is never rewritten.
func markdownSignals(s string) (markdown bool) {
	if !strings.ContainsAny(s, "*_#[~|-+`") {
		return false
	}
	src := []byte(s)
	doc := markdownDetector.Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			markdown = isATXHeading(n, src)
		case *ast.Emphasis:
			markdown = n.Level == 2
		case *ast.Link, *ast.Image, *east.Table:
			markdown = true
		case *ast.List:
			markdown = n.Marker == '-' || n.Marker == '*' || n.Marker == '+'
		case *ast.FencedCodeBlock:
			markdown = n.Info != nil && len(strings.TrimSpace(string(n.Info.Segment.Value(src)))) > 0
		case *east.Strikethrough:
			markdown = delimiterBefore(n, src) == '~' && strings.Contains(s, "~~")
		}
		if markdown {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return markdown
}

// isATXHeading reports whether heading h was written with leading #s (a
// line underlined with --- is a setext heading, which in mrkdwn is just a
// rule).
func isATXHeading(h *ast.Heading, src []byte) bool {
	lines := h.Lines()
	if lines.Len() == 0 {
		return false
	}
	start := lines.At(0).Start
	i := start
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	return strings.HasPrefix(strings.TrimLeft(string(src[i:start]), " "), "#")
}

// delimiterBefore returns the byte just before the first text inside an
// inline container: the delimiter that opened it, when the container
// starts with text.
func delimiterBefore(n ast.Node, src []byte) byte {
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

// boldSingleStars turns mrkdwn bold (*x*) into Markdown strong (**x**) so
// that converting a mixed text keeps what its writer meant.
func boldSingleStars(s string) string {
	pairs := markerPairs(s, '*', protected(s))
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
