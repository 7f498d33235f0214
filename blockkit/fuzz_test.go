package blockkit

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// The fuzz tests check what must hold for any input, with a committed seed
// corpus in testdata/fuzz/<FuzzName>/ (run: go test -fuzz=FuzzFromMarkdown
// -fuzztime=60s ./blockkit/). The input is read with goldmark's own GFM
// parser, independently of the converter, and the output must:
//
//   - pass Validate, message by message, and never be empty when the input
//     has words;
//   - pass checkMessages (check_test.go): every text within its limit in
//     UTF-16 units, no < or > outside a whole Slack token, no bare &, no
//     entity escaped twice unless the input holds an entity's text;
//   - contain every link, autolink and image URL with an http, https or
//     mailto address as a link, and every other address Slack can open
//     (tel:, ftp:, …) as text, unless it sits inside another link's label
//     (a badge image inside a link shows as the link's label);
//   - contain every line of every code block and the content of every code
//     span without a backtick, byte for byte after un-escaping &amp; &lt;
//     &gt; and dropping U+200B (a code block split over sections keeps its
//     lines whole, so lines of up to 1000 characters are checked);
//   - lose no word. A word is a maximal run of Unicode letters, marks and
//     digits in the input's text: goldmark Text and String nodes (entities
//     and backslash escapes resolved), code spans and code block lines. Raw
//     HTML, link destinations and HTML comments are not text. A word is kept
//     when it is a word of the output (every string in the blocks,
//     un-escaped, taken the same way) or a run in the output's letters (the
//     output with everything but letters, marks and digits removed): inline
//     nodes flush against each other ("00`0`0" in a table cell) render as
//     one word, and a long CJK run without spaces may be cut where a long
//     paragraph is split.

// fuzzParser reads fuzz inputs the way a GFM renderer does.
var fuzzParser = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// fuzzExpect is what an input promises the output will contain.
type fuzzExpect struct {
	urls  []string // decoded http(s) and mailto destinations: kept as links
	texts []string // other destinations Slack can open (tel:, ftp:): kept as text
	code  []string // code lines and code span contents
	words []string
}

func fuzzExpectations(md string) fuzzExpect {
	src := []byte(md)
	doc := fuzzParser.Parse(text.NewReader(src))
	var e fuzzExpect
	inLink := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n := n.(type) {
		case *ast.Link, *ast.Image:
			if !entering {
				inLink--
				return ast.WalkContinue, nil
			}
			inLink++
			var raw []byte
			switch l := n.(type) {
			case *ast.Link:
				raw = l.Destination
			case *ast.Image:
				raw = l.Destination
			}
			u := string(util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(raw))))
			switch {
			case inLink != 1 || !fuzzOpenable(u):
			case fuzzLinkToken(u):
				e.urls = append(e.urls, u)
			default:
				e.texts = append(e.texts, u)
			}
		case *ast.AutoLink:
			if entering && inLink == 0 {
				u := string(n.URL(src))
				if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
					u = "mailto:" + u
				}
				if fuzzLinkToken(u) {
					e.urls = append(e.urls, u)
				}
				e.words = append(e.words, fuzzWords(string(n.Label(src)))...)
			}
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			if entering {
				v := n.Segment.Value(src)
				v = util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(v)))
				e.words = append(e.words, fuzzWords(string(v))...)
			}
		case *ast.String:
			if entering {
				e.words = append(e.words, fuzzWords(string(n.Value))...)
			}
		case *ast.CodeSpan:
			if entering {
				var b strings.Builder
				for c := n.FirstChild(); c != nil; c = c.NextSibling() {
					if t, ok := c.(*ast.Text); ok {
						b.Write(t.Segment.Value(src))
					}
				}
				s := strings.TrimSpace(strings.ReplaceAll(b.String(), "\n", " "))
				if s != "" && !strings.Contains(s, "`") {
					e.code = append(e.code, s)
				}
				e.words = append(e.words, fuzzWords(b.String())...)
			}
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			if entering {
				lines := n.Lines()
				for i := 0; i < lines.Len(); i++ {
					seg := lines.At(i)
					line := strings.TrimRight(string(seg.Value(src)), "\r\n")
					if strings.TrimSpace(line) != "" && utf8.RuneCountInString(line) <= 1000 && !strings.Contains(line, "\t") {
						e.code = append(e.code, line)
					}
					e.words = append(e.words, fuzzWords(line)...)
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock, *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return e
}

// fuzzOpenable mirrors what Slack can open: a scheme, not a script one.
func fuzzOpenable(u string) bool {
	colon := strings.IndexByte(u, ':')
	if colon <= 0 {
		return false
	}
	for i, c := range u[:colon] {
		if !(unicode.IsLetter(c) && c < 128 || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	switch strings.ToLower(u[:colon]) {
	case "javascript", "vbscript", "data", "file":
		return false
	}
	return true
}

// fuzzLinkToken reports whether Slack takes u in a <url|label> token: an
// http, https or mailto address.
func fuzzLinkToken(u string) bool {
	for _, scheme := range []string{"https://", "http://", "mailto:"} {
		if len(u) > len(scheme) && strings.EqualFold(u[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

func fuzzIsWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// fuzzWords splits s into runs of letters, marks and digits.
func fuzzWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !fuzzIsWordRune(r) })
}

// fuzzOutput is everything a person can read in a set of messages.
type fuzzOutput struct {
	text    string          // all block strings, un-escaped, without U+200B
	raw     string          // all block strings as sent
	words   map[string]bool // words of text
	letters string          // text with everything but word runes removed
}

func fuzzCollect(t *testing.T, msgs []Message) fuzzOutput {
	t.Helper()
	var strs []string
	for _, m := range msgs {
		fuzzStrings(blocksValue(t, m), "", &strs)
	}
	raw := strings.Join(strs, "\n")
	txt := strings.ReplaceAll(raw, "\u200b", "")
	txt = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(txt)
	out := fuzzOutput{text: txt, raw: raw, words: map[string]bool{}}
	for _, w := range fuzzWords(txt) {
		out.words[w] = true
	}
	out.letters = strings.Map(func(r rune) rune {
		if fuzzIsWordRune(r) {
			return r
		}
		return -1
	}, txt)
	return out
}

func fuzzStrings(v any, key string, out *[]string) {
	switch v := v.(type) {
	case string:
		if key != "type" && key != "block_id" && key != "action_id" && key != "style" {
			*out = append(*out, v)
		}
	case []any:
		for _, x := range v {
			fuzzStrings(x, key, out)
		}
	case map[string]any:
		for k, x := range v {
			fuzzStrings(x, k, out)
		}
	}
}

// hasURL reports whether u is in the output as a link token or an image URL.
func (o fuzzOutput) hasURL(u string) bool {
	var enc strings.Builder
	for i := 0; i < len(u); i++ {
		switch c := u[i]; c {
		case '|', '<', '>', ' ', '\t', '\n', '\r', '"':
			enc.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])) + strings.ToUpper(string("0123456789abcdef"[c&15])))
		case '&':
			enc.WriteString("&amp;")
		default:
			enc.WriteByte(c)
		}
	}
	e := enc.String()
	for _, s := range []string{"<" + e + "|", "<" + e + ">", "<" + u + "|", "<" + u + ">", "\n" + u + "\n"} {
		if strings.Contains("\n"+o.raw+"\n", s) {
			return true
		}
	}
	return false
}

func (o fuzzOutput) hasWord(w string) bool {
	return o.words[w] || strings.Contains(o.letters, w)
}

// checkKept asserts that the output keeps what md promises.
func checkKept(t *testing.T, md string, out fuzzOutput) {
	t.Helper()
	e := fuzzExpectations(md)
	for _, u := range e.urls {
		if !out.hasURL(u) {
			t.Fatalf("link URL %q lost; output:\n%s", u, out.raw)
		}
	}
	for _, u := range e.texts {
		if !strings.Contains(out.text, u) && !strings.Contains(out.text, strings.Join(strings.Fields(u), " ")) {
			t.Fatalf("address %q lost; output:\n%s", u, out.raw)
		}
	}
	for _, c := range e.code {
		if !strings.Contains(out.text, c) {
			t.Fatalf("code %q lost; output:\n%s", c, out.raw)
		}
	}
	for _, w := range e.words {
		if !out.hasWord(w) {
			t.Fatalf("word %q lost; output:\n%s", w, out.raw)
		}
	}
}

func FuzzFromMarkdown(f *testing.F) {
	f.Add("# Title\n\nSome **bold** text with a [link](https://example.com/a_b).")
	f.Add("| a | b |\n|---|---|\n| " + strings.Repeat("wide cell ", 12) + " | 😀 ~5 |\n")
	f.Add("# " + strings.Repeat("🙂", 100) + "\n\nQ&A: a > b < c ~5 min <https://x.io|x>")
	f.Fuzz(func(t *testing.T, md string) {
		msgs := FromMarkdown(md)
		checkMessages(t, msgs, hasLiteralEntity(md))
		if !utf8.ValidString(md) {
			return // content checks compare text; invalid bytes become U+FFFD in JSON
		}
		if len(msgs) == 0 {
			if e := fuzzExpectations(md); len(e.words) > 0 {
				t.Fatalf("no messages for input with words %q", e.words)
			}
			return
		}
		checkKept(t, md, fuzzCollect(t, msgs))
	})
}

func FuzzRepair(f *testing.F) {
	f.Add(`[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"**hi** [a](https://b.c)"}}]}]`, "fallback")
	f.Add("\"```json\\n[{\\\"type\\\":\\\"header\\\",\\\"text\\\":\\\"a < b\\\"}]\\n```\"", "")
	f.Add(`[{'blocks': [{'type': 'section', 'text': {'type': 'mrkdwn', 'text': "it's ~5 min &amp; <x>"}}]}]`, "")
	f.Add(`[{\"type\":\"context\",\"elements\":[{\"type\":\"plain_text\",\"text\":\"a > b\"}]}]`, "")
	f.Add(`[{"attachments":[{"color":"#ff0000","pretext":"p","title":"t","title_link":"https://t.io","fields":[{"title":"k","value":"v"}],"ts":1}]}]`, "")
	f.Add(`[{"blocks":[{"type":"actions","elements":[{"type":"overflow","options":[{"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"},{"text":"e"},{"text":"f","url":"https://f.io"}]},{"type":"static_select"},{"type":"datepicker","initial_date":"5 March 2024"},{"type":"button","text":"`+strings.Repeat("label ", 20)+`"}]}]}]`, "")
	f.Add(`[{"blocks":[{"type":"header","text":"`+strings.Repeat("😀", 90)+`"},{"type":"section","text":{"type":"mrkdwn","text":"see <https://x.io/`+strings.Repeat("p", 3000)+`|doc>"}}]}]`, "")
	f.Add(`"just prose"`, "# Report\n\nAll good.")
	f.Fuzz(func(t *testing.T, messages, fallback string) {
		msgs, changes := Repair(json.RawMessage(messages), fallback)
		if len(msgs) == 0 {
			t.Fatal("Repair returned no messages")
		}
		checkMessages(t, msgs, hasLiteralEntity(messages) || hasLiteralEntity(fallback))
		for _, c := range changes {
			if c.Path == "" || c.Kind == "" || strings.ContainsAny(c.Kind, " \n") {
				t.Fatalf("malformed change %+v", c)
			}
		}
		if !utf8.ValidString(messages) || !utf8.ValidString(fallback) {
			return // content checks compare text; invalid bytes become U+FFFD in JSON
		}
		out := fuzzCollect(t, msgs)
		// Words of texts (which Repair never clamps) survive.
		n, err := jsonish.Parse([]byte(messages))
		if err != nil {
			return
		}
		usedFallback := false
		for _, c := range changes {
			usedFallback = usedFallback || c.Kind == "fallback_used"
		}
		if usedFallback {
			checkKept(t, fallback, out)
			return
		}
		for _, s := range fuzzTexts(n, 0) {
			e := fuzzExpectations(s)
			for _, w := range e.words {
				if !out.hasWord(w) {
					t.Fatalf("word %q of text %q lost; output:\n%s", w, s, out.raw)
				}
			}
		}
	})
}

// fuzzTexts returns the texts of blocks reachable through messages and
// blocks lists where Repair promises to keep every word: the text and
// fields of sections, headers, the text elements of context blocks, and
// the labels of buttons.
func fuzzTexts(n *jsonish.Value, depth int) []string {
	if n == nil || depth > 8 {
		return nil
	}
	var out []string
	text := func(t *jsonish.Value) {
		switch {
		case t == nil:
		case t.Kind == jsonish.String:
			out = append(out, t.Str)
		case t.Kind == jsonish.Object && t.Get("text") != nil && t.Get("text").Kind == jsonish.String:
			out = append(out, t.Get("text").Str)
		}
	}
	switch n.Kind {
	case jsonish.Array:
		for _, v := range n.Vals {
			out = append(out, fuzzTexts(v, depth+1)...)
		}
	case jsonish.Object:
		for _, k := range []string{"messages", "blocks"} {
			if v := n.Get(k); v != nil && v.Kind == jsonish.Array {
				out = append(out, fuzzTexts(v, depth+1)...)
			}
		}
		switch n.GetString("type") {
		case "section":
			text(n.Get("text"))
			for _, f := range n.Get("fields").Items() {
				text(f)
			}
		case "header":
			text(n.Get("text"))
		case "context":
			for _, e := range n.Get("elements").Items() {
				if t := e.GetString("type"); t == "mrkdwn" || t == "plain_text" {
					text(e)
				}
			}
		case "actions":
			for _, e := range n.Get("elements").Items() {
				if e.GetString("type") == "button" {
					text(e.Get("text"))
				}
			}
		}
	}
	return out
}
