package blockkit

import (
	"cmp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Helpers for mrkdwn text that both halves of the package share: escaping,
// the formatting Slack would apply, clamping, and reading mrkdwn back as the
// text a person sees.

// Escapers for text that goes into mrkdwn. Only &, < and > are special to
// Slack; the label one also keeps a link label on one line and free of the
// "|" that would end it.
var (
	mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	labelEscaper  = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;",
		"|", string(labelBar), "\n", " ", "\r", " ", "\t", " ")
	entityDecoder = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")
	// doubleEscapes undoes an escape applied twice.
	doubleEscapes = strings.NewReplacer("&amp;amp;", "&amp;", "&amp;lt;", "&lt;", "&amp;gt;", "&gt;")
)

// escapeBare escapes the &, < and > of s that mrkdwn needs escaped, keeping
// the entities &amp; &lt; &gt;, whole Slack tokens, and a > that starts a
// quoted line. Text that is already valid mrkdwn comes back unchanged.
func escapeBare(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			if entityLen(s[i:]) > 0 {
				b.WriteByte('&')
			} else {
				b.WriteString("&amp;")
			}
		case '<':
			if n := scanSlackToken([]byte(s[i:])); n > 0 {
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

// entityLen returns the length of the mrkdwn entity (&amp; &lt; &gt;) s
// starts with, or 0.
func entityLen(s string) int {
	for _, e := range [...]string{"&amp;", "&lt;", "&gt;"} {
		if strings.HasPrefix(s, e) {
			return len(e)
		}
	}
	return 0
}

// protected marks the bytes of mrkdwn s that formatting markers cannot
// touch: code spans, code blocks, Slack tokens and bare URLs.
func protected(s string) []bool { return protectedRanges(s, false) }

// protectedRanges is protected, or with codeOnly the code alone.
func protectedRanges(s string, codeOnly bool) []bool {
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
		case codeOnly:
			i++
		case s[i] == '<':
			if n := scanSlackToken([]byte(s[i:])); n > 0 {
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

// markerPairs finds the pairs of single ch markers (*x*, _x_, ~x~) that
// Slack renders as formatting: an opener not preceded by a letter or digit
// and followed by a non-space, a closer preceded by a non-space and not
// followed by a letter or digit, on one line, outside protected bytes. A
// marker in no pair is shown as the character it is (~5 minutes).
func markerPairs(s string, ch byte, prot []bool) [][2]int {
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
		canOpen := i+1 < len(s) && !unicode.IsSpace(next) && (i == 0 || !isWordRune(prev))
		canClose := i > 0 && !unicode.IsSpace(prev) && (i+1 == len(s) || !isWordRune(next))
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

// literalMrkdwn writes plain text as mrkdwn that shows it as written: &, <
// and > are escaped, and a *, _, ~ or ` that Slack would pair into
// formatting becomes a look-alike (see the constants in mrkdwn.go); one that
// would not pair stays itself. With inBold every * becomes a look-alike,
// because the text goes between the markers of a bold span.
func literalMrkdwn(plain string, inBold bool) string {
	s := mrkdwnEscaper.Replace(plain)
	if !strings.ContainsAny(s, "*_~`") {
		return s
	}
	prot := protected(s)
	swap := map[int]rune{}
	for _, ch := range []byte("*_~") {
		for _, p := range markerPairs(s, ch, prot) {
			swap[p[0]], swap[p[1]] = lookalike(rune(ch)), lookalike(rune(ch))
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '*' && inBold:
			b.WriteRune(lookalikeAst)
		case c == '`':
			b.WriteRune(lookalikeBt) // a code span would swallow the text up to the next one
		default:
			if r, ok := swap[i]; ok {
				b.WriteRune(r)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// clampText cuts s to at most max units (Len), ending with "…", at a word
// boundary where one lies in the last half of the allowance. For mrkdwn it
// never ends inside a <…> token, an entity or a code block. It reports
// whether s was cut.
func clampText(s string, max int, mrkdwn bool) (string, bool) {
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
		cut = safeEnd(s, cut)
	}
	head := strings.TrimRightFunc(s[:cut], unicode.IsSpace)
	if head == "" && mrkdwn {
		// One token longer than the allowance: write it as text and cut that.
		flat := flattenTokens(s, 0)
		head = strings.TrimRightFunc(flat[:safeEnd(flat, prefixWithin(flat, budget))], unicode.IsSpace)
	} else if head == "" {
		head = s[:off]
	}
	return head + "…", true
}

// safeEnd moves a cut at s[:cut] back so that it does not end inside a <…>
// token, an &entity; or an open code block.
func safeEnd(s string, cut int) int {
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
	return cut
}

// readMrkdwn appends to b what a person reads in mrkdwn s, stopping after
// about limit units: formatting markers that Slack pairs, U+200B, code
// fences and the > of quoted lines go; a marker Slack shows as a character
// stays, and every token reads as readableToken shows it (a link as its
// label, a mention as @name). With escaped the result is still mrkdwn,
// escaped once: its entities stay. Without, it is plain text: entities are
// decoded, and with links a labelled link's address follows its label in
// parentheses.
func readMrkdwn(b *strings.Builder, s string, limit int, escaped, links bool) {
	// Markers pair within a line, so the lines past the limit do not
	// matter; nor, for a notification, does much of a long line after it.
	if bound := 2*limit + 256; len(s) > bound {
		end := len(s)
		if nl := strings.IndexByte(s[bound:], '\n'); nl >= 0 {
			end = bound + nl
		}
		if end > 2*bound {
			end = 2 * bound
			for end > 0 && !utf8.RuneStart(s[end]) {
				end--
			}
		}
		s = s[:end]
	}
	prot := protected(s)
	drop := make([]bool, len(s))
	for _, ch := range []byte("*_~") {
		for _, p := range markerPairs(s, ch, prot) {
			drop[p[0]], drop[p[1]] = true, true
		}
	}
	n := 0
	write := func(t string) {
		b.WriteString(t)
		n += Len(t)
	}
	for i := 0; i < len(s) && n < limit; {
		c := s[i]
		switch {
		case drop[i]:
			i++
		case strings.HasPrefix(s[i:], "```"):
			for i < len(s) && s[i] == '`' {
				i++
			}
		case c == '`':
			end := strings.IndexAny(s[i+1:], "`\n")
			if end <= 0 || s[i+1+end] == '\n' {
				write("`")
				i++
				continue
			}
			code := strings.ReplaceAll(s[i+1:i+1+end], string(zwsp), "")
			write(pick(escaped, code, entityDecoder.Replace(code)))
			i += end + 2
		case c == '<':
			k := scanSlackToken([]byte(s[i:]))
			if k == 0 {
				write(pick(escaped, "&lt;", "<"))
				i++
				continue
			}
			body := readableToken(s[i+1 : i+k-1])
			write(pick(escaped, escapeBare(body), entityDecoder.Replace(body)))
			if url, label, ok := linkTokenParts(s[i+1 : i+k-1]); ok && links && !escaped {
				write(addressAfter(url, label))
			}
			i += k
		case c == '&':
			if e := entityLen(s[i:]); e > 0 {
				write(pick(escaped, s[i:i+e], entityDecoder.Replace(s[i:i+e])))
				i += e
				continue
			}
			write(pick(escaped, "&amp;", "&"))
			i++
		case c == '>' && (i == 0 || s[i-1] == '\n'):
			i++
			if i < len(s) && s[i] == ' ' {
				i++
			}
		case c == '>':
			write(pick(escaped, "&gt;", ">"))
			i++
		case c == 0xe2 && strings.HasPrefix(s[i:], string(zwsp)):
			i += len(string(zwsp))
		default:
			// Copy the run of ordinary text up to the next byte that needs a look.
			j, stop := i+1, min(len(s), i+1+limit-n)
			for j < stop && !drop[j] && !readSpecial[s[j]] {
				j++
			}
			for j < len(s) && !utf8.RuneStart(s[j]) {
				j++
			}
			write(s[i:j])
			i = j
		}
	}
}

// readSpecial marks the bytes readMrkdwn looks at one by one: markers,
// token and entity starts, quote markers, and the first byte of U+200B.
var readSpecial = [256]bool{'*': true, '_': true, '~': true, '`': true, '<': true, '>': true, '&': true, 0xe2: true}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// mrkdwnPlain is the plain text a person reads in mrkdwn s (see readMrkdwn),
// links as their labels: for alt text and titles beside their own link.
func mrkdwnPlain(s string) string {
	var b strings.Builder
	readMrkdwn(&b, s, Len(s)+1, false, false)
	return b.String()
}

// mrkdwnPlainLinks is mrkdwnPlain with each labelled link's address after
// its label ("the run (https://x.io)"): for a plain_text field or a table
// cell, which cannot link, so the reader still sees where a link leads.
func mrkdwnPlainLinks(s string) string {
	var b strings.Builder
	readMrkdwn(&b, s, Len(s)+1, false, true)
	return b.String()
}

// fallbackChars is how much of a message its notification text repeats:
// enough to recognise the message in a notification, short enough not to
// duplicate it for clients that show both.
const fallbackChars = 200

// notificationText builds a message's notification text from its blocks:
// the first words of what they read as, on one line, cut at a word with
// "…". Slack formats the top-level text as mrkdwn, so it is mrkdwn escaped
// once: plain_text is escaped, mrkdwn keeps its escapes and mentions.
func notificationText(blocks []slack.Block) string {
	var b strings.Builder
	for _, blk := range blocks {
		if b.Len() > 2*fallbackChars && Len(b.String()) > 2*fallbackChars {
			break
		}
		appendBlockText(&b, blk)
		b.WriteByte(' ')
	}
	text := oneLine(b.String())
	if text == "" {
		return "(message)"
	}
	text, _ = clampText(text, fallbackChars, true)
	return text
}

// oneLine trims s and turns each run of whitespace into one space.
func oneLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// appendBlockText appends the readable text of one block, as escaped mrkdwn.
func appendBlockText(b *strings.Builder, blk slack.Block) {
	obj := func(t *slack.TextBlockObject) {
		if t == nil {
			return
		}
		if t.Type == slack.MarkdownType {
			readMrkdwn(b, t.Text, 2*fallbackChars, true, false)
		} else {
			b.WriteString(mrkdwnEscaper.Replace(t.Text))
		}
		b.WriteByte(' ')
	}
	switch blk := blk.(type) {
	case *slack.HeaderBlock:
		obj(blk.Text)
	case *slack.SectionBlock:
		obj(blk.Text)
		for _, f := range blk.Fields {
			obj(f)
		}
	case *slack.ContextBlock:
		for _, e := range blk.ContextElements.Elements {
			if t, ok := e.(*slack.TextBlockObject); ok {
				obj(t)
			}
		}
	case *slack.TableBlock:
		b.WriteString(mrkdwnEscaper.Replace(tableCellsText(blk, 2*fallbackChars)))
	case *slack.ImageBlock:
		if blk.Title != nil {
			obj(blk.Title)
		} else {
			b.WriteString(mrkdwnEscaper.Replace(blk.AltText))
		}
	case *slack.VideoBlock:
		obj(blk.Title)
	case *slack.ActionBlock:
		if blk.Elements != nil {
			for _, e := range blk.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok {
					obj(btn.Text)
				}
			}
		}
	case *slack.RichTextBlock:
		b.WriteString(mrkdwnEscaper.Replace(richTextPlain(blk)))
	}
}

// richTextPlain is the text of a rich_text block's sections, mentions as
// readable names.
func richTextPlain(blk *slack.RichTextBlock) string {
	var sb strings.Builder
	section := func(els []slack.RichTextSectionElement) {
		for _, e := range els {
			switch e := e.(type) {
			case *slack.RichTextSectionTextElement:
				sb.WriteString(e.Text)
			case *slack.RichTextSectionLinkElement:
				sb.WriteString(cmp.Or(e.Text, e.URL))
			case *slack.RichTextSectionUserElement:
				sb.WriteString("@" + e.UserID)
			case *slack.RichTextSectionChannelElement:
				sb.WriteString("#" + e.ChannelID)
			case *slack.RichTextSectionEmojiElement:
				sb.WriteString(":" + e.Name + ":")
			case *slack.RichTextSectionBroadcastElement:
				sb.WriteString("@" + e.Range)
			}
		}
		sb.WriteByte(' ')
	}
	var walk func(els []slack.RichTextElement)
	walk = func(els []slack.RichTextElement) {
		for _, e := range els {
			switch e := e.(type) {
			case *slack.RichTextSection:
				section(e.Elements)
			case *slack.RichTextList:
				walk(e.Elements)
			case *slack.RichTextQuote:
				section(e.Elements)
			case *slack.RichTextPreformatted:
				section(e.Elements)
			}
		}
	}
	walk(blk.Elements)
	return sb.String()
}
