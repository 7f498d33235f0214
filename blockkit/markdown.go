package blockkit

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// FromMarkdown converts Markdown to one or more Block Kit messages, each of
// which passes Validate. Top-level headings become header blocks (a heading
// with a link stays a bold line, because plain_text cannot link), rules become
// dividers, GFM tables become a table block where Slack allows one, and
// everything else becomes mrkdwn sections: consecutive small blocks share a
// section up to SectionTextMax, longer text is split with SplitMrkdwn. A new
// message starts past MaxBlocks blocks or MaxMessageChars characters of block
// text, and after each table block (see table.go).
//
// Input with no visible content (empty, whitespace, only rules or link
// reference definitions) yields no messages: what to post then is the
// caller's decision, not a converter's.
//
// Conversion runs in two steps: each top-level block is rendered to a unit
// (see units.go), and the units are then packed into messages in order.
func FromMarkdown(markdown string) []Message {
	src := []byte(markdown)
	buf, units := renderUnits(src, parseMarkdown(src))
	return packUnits(buf, units)
}

// FromMarkdownData is FromMarkdown for text from outside — a tool's data
// shown as the answer: Slack tokens in it (<!channel>, <@U…>, <url|label>)
// are not Slack's but its words, shown as written, never read as mentions,
// broadcasts or links. Markdown links and autolinks still link.
func FromMarkdownData(markdown string) []Message {
	src := []byte(markdown)
	buf, units := renderUnits(src, dataParser.Parse(text.NewReader(src)))
	return packUnits(buf, units)
}

// hasLink reports whether n holds a link Slack can open or a Slack token (a
// mention in plain_text would show as a raw ID).
func hasLink(src []byte, n ast.Node) bool {
	found := false
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		switch c := c.(type) {
		case *ast.Link:
			found = found || webOrMail(decodeURL(c.Destination))
		case *ast.Image:
			found = found || webOrMail(decodeURL(c.Destination))
		case *ast.AutoLink:
			found = found || c.AutoLinkType == ast.AutoLinkEmail || webOrMail(string(c.URL(src)))
		case *slackToken:
			found = true
		}
		if found {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return found
}

// cutWords splits s after at most max units (Len), at the last space if there
// is one in the second half, and trims the space between the two parts.
func cutWords(s string, max int) (head, rest string) {
	end, n, lastSpace := len(s), 0, -1
	for i, r := range s {
		if n+runeLen(r) > max {
			end = i
			break
		}
		if r == ' ' && n > max/2 {
			lastSpace = i
		}
		n += runeLen(r)
	}
	if end == len(s) {
		return s, ""
	}
	if lastSpace > 0 && s[end] != ' ' {
		end = lastSpace
	}
	return strings.TrimRight(s[:end], " "), strings.TrimLeft(s[end:], " ")
}

// flatPlain renders n's inline content as one line of plain text.
func flatPlain(src []byte, n ast.Node) string {
	w := newRenderer(src, true)
	w.flat = 1
	w.inlines(n)
	return collapseSpaces(w.b.String())
}

// collapseSpaces trims s and turns each run of whitespace into one space.
func collapseSpaces(s string) string {
	s = strings.TrimSpace(s)
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		c := s[i]
		clean = c != '\n' && c != '\t' && c != '\r' && !(c == ' ' && i+1 < len(s) && s[i+1] == ' ')
	}
	if clean {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// markdownParser is goldmark with GitHub's extensions plus Slack token
// recognition. goldmark parsers are safe for concurrent use once built, and
// building one per call would cost more than most conversions.
var markdownParser = newMarkdownParser(true)

// dataParser is markdownParser without Slack token recognition, for
// FromMarkdownData.
var dataParser = newMarkdownParser(false)

func newMarkdownParser(tokens bool) parser.Parser {
	blockParsers := parser.DefaultBlockParsers()
	inlineParsers := parser.DefaultInlineParsers()
	if tokens {
		for i, p := range blockParsers {
			if p.Value == parser.NewHTMLBlockParser() {
				blockParsers[i].Value = slackAwareHTMLBlockParser{parser.NewHTMLBlockParser()}
			}
		}
		inlineParsers = append(inlineParsers, util.Prioritized(slackTokenParser{}, 250))
	}
	p := parser.NewParser(
		parser.WithBlockParsers(blockParsers...),
		parser.WithInlineParsers(inlineParsers...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
	return goldmark.New(goldmark.WithParser(p), goldmark.WithExtensions(extension.GFM)).Parser()
}

func parseMarkdown(src []byte) ast.Node {
	return markdownParser.Parse(text.NewReader(src))
}

// slackToken is a Slack <…> token the model wrote (<@U123>, <#C1|general>,
// <!here>, <https://x|label>, …). It is its own node so that Markdown never
// parses inside it and the renderer copies it byte for byte.
type slackToken struct {
	ast.BaseInline
	Segment text.Segment
}

var kindSlackToken = ast.NewNodeKind("SlackToken")

// Kind implements ast.Node.
func (n *slackToken) Kind() ast.NodeKind { return kindSlackToken }

// Dump implements ast.Node.
func (n *slackToken) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Token": string(n.Segment.Value(src))}, nil)
}

// slackTokenParser claims '<' before goldmark's autolink and raw HTML parsers
// (priorities 300 and 400), which would otherwise read <!here> as an HTML
// declaration and <https://x|label> as an autolink with a bar in its URL.
type slackTokenParser struct{}

func (slackTokenParser) Trigger() []byte { return []byte{'<'} }

func (slackTokenParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, seg := block.PeekLine()
	n := scanSlackToken(line)
	if n == 0 {
		return nil
	}
	block.Advance(n)
	return &slackToken{Segment: text.NewSegment(seg.Start, seg.Start+n)}
}

// slackAwareHTMLBlockParser keeps a line that starts with a Slack token out of
// goldmark's HTML block parser: "<!here> please look" is an HTML declaration
// to CommonMark, but to the model it is a paragraph that pings the channel.
type slackAwareHTMLBlockParser struct{ parser.BlockParser }

func (p slackAwareHTMLBlockParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, _ := reader.PeekLine()
	if scanSlackToken(bytes.TrimLeft(line, " ")) > 0 {
		return nil, parser.NoChildren
	}
	return p.BlockParser.Open(parent, reader, pc)
}

// scanSlackToken returns the length of the Slack token at the start of b, or
// 0. A token is a user mention <@U…>, a channel <#C…>, a special mention
// (<!here>, <!channel>, <!everyone>), a user group <!subteam^S…>, a date
// <!date^stamp^format|fallback>, or a link to an http(s) or mailto address;
// each may carry a |label, which may not be empty and which a date needs.
func scanSlackToken(b []byte) int {
	if len(b) < 3 || b[0] != '<' {
		return 0
	}
	end := 1
	for end < len(b) && b[end] != '>' {
		if c := b[end]; c == '<' || c == '\n' || c == '\r' {
			return 0
		}
		end++
	}
	if end == len(b) {
		return 0
	}
	body := string(b[1:end])
	head, label, hasLabel := strings.Cut(body, "|")
	if hasLabel && strings.TrimSpace(label) == "" {
		return 0
	}
	ok := false
	switch {
	case strings.HasPrefix(head, "@"):
		ok = isSlackID(head[1:], "UWB")
	case strings.HasPrefix(head, "#"):
		ok = isSlackID(head[1:], "CG")
	case head == "!here" || head == "!channel" || head == "!everyone":
		ok = true
	case strings.HasPrefix(head, "!subteam^"):
		ok = isSlackID(head[len("!subteam^"):], "S")
	case strings.HasPrefix(head, "!date^"):
		stamp, format, _ := strings.Cut(head[len("!date^"):], "^")
		ok = hasLabel && stamp != "" && strings.Trim(stamp, "0123456789") == "" && format != ""
		return tokenLen(ok, end)
	default:
		lower := strings.ToLower(head)
		for _, scheme := range []string{"https://", "http://", "mailto:"} {
			if strings.HasPrefix(lower, scheme) && len(head) > len(scheme) {
				ok = true
			}
		}
	}
	if strings.ContainsAny(head, " \t") {
		ok = false
	}
	return tokenLen(ok, end)
}

func tokenLen(ok bool, end int) int {
	if ok {
		return end + 1
	}
	return 0
}

// isSlackID reports whether id looks like a Slack ID: an uppercase letter
// from first, then uppercase letters and digits.
func isSlackID(id, first string) bool {
	if len(id) < 2 || !strings.ContainsRune(first, rune(id[0])) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// slackToken writes a token byte for byte, or in plain text the way Slack
// would show it.
func (w *renderer) slackToken(n *slackToken) {
	tok := n.Segment.Value(w.src)
	if !w.plain {
		w.raw(string(tok))
		return
	}
	body := string(tok[1 : len(tok)-1])
	w.raw(readableToken(body))
	if w.linkAddresses && w.flat == 0 {
		if url, label, ok := linkTokenParts(body); ok {
			w.raw(addressAfter(url, label))
		}
	}
}

// linkTokenParts returns the address and label of the body of a link
// token (<https://x|label>, <mailto:a@b|label>), entities decoded; ok is
// false for any other token and for a link without a label.
func linkTokenParts(body string) (url, label string, ok bool) {
	head, label, hasLabel := strings.Cut(body, "|")
	if !hasLabel || !webOrMail(head) {
		return "", "", false
	}
	return entityDecoder.Replace(head), entityDecoder.Replace(label), true
}

// readableToken is the text a reader sees for the body of a <…> token.
func readableToken(body string) string {
	head, label, hasLabel := strings.Cut(body, "|")
	switch {
	case strings.HasPrefix(head, "!subteam^") && hasLabel, strings.HasPrefix(head, "!date^"):
		return label
	case strings.HasPrefix(head, "!subteam^"):
		return "@" + head[len("!subteam^"):]
	case strings.HasPrefix(head, "!"):
		return "@" + head[1:]
	case strings.HasPrefix(head, "@") || strings.HasPrefix(head, "#"):
		if hasLabel {
			return head[:1] + strings.TrimPrefix(label, head[:1])
		}
		return head
	case hasLabel:
		return label
	}
	return strings.TrimPrefix(head, "mailto:")
}
