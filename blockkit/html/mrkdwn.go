package html

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Slack's mrkdwn, drawn the way Slack draws it:
//
//   - ```fenced``` code anywhere is a <pre>; `code` a <code>; their content
//     is literal (only &amp; &lt; &gt; are decoded, then re-escaped).
//   - Lines starting with > (or &gt;, as Slack stores a typed quote) form a
//     blockquote; "• ", "◦ ", "▪ ", "- " and "1. " lines are list lines.
//   - *bold*, _italic_ and ~strike~ open after a non-word character and
//     close before one, on one line, as Slack's parser requires.
//   - <url|label> and <url> are links when the address is http, https or
//     mailto, and text otherwise; <@U…>, <#C…|name>, <!here>, <!channel>,
//     <!everyone>, <!subteam^…> and <!date^…|fallback> are mentions.
//   - Emoji :shortcodes: stay text. Newlines are <br>.

// entityDecoder decodes the three entities mrkdwn uses, once: "&amp;lt;"
// becomes the text "&lt;".
var entityDecoder = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

const fence = "```"

// mrkdwn draws mrkdwn text.
func (r *renderer) mrkdwn(s string) {
	for s != "" {
		open := strings.Index(s, fence)
		if open < 0 {
			r.mrkdwnLines(s)
			return
		}
		end := strings.Index(s[open+len(fence):], fence)
		if end < 0 {
			// An unclosed fence is literal backticks.
			r.mrkdwnLines(s)
			return
		}
		code := s[open+len(fence) : open+len(fence)+end]
		// The line breaks beside a fence belong to it, not to the text.
		r.mrkdwnLines(strings.TrimSuffix(s[:open], "\n"))
		code = strings.TrimSuffix(strings.TrimPrefix(code, "\n"), "\n")
		r.b.WriteString(`<pre class="bk-pre">`)
		r.esc(entityDecoder.Replace(code))
		r.b.WriteString(`</pre>`)
		s = strings.TrimPrefix(s[open+len(fence)+end+len(fence):], "\n")
	}
}

// mrkdwnLines draws text without code blocks: quotes, list lines and
// inline formatting, line by line.
func (r *renderer) mrkdwnLines(s string) {
	if s == "" {
		return
	}
	lines := strings.Split(s, "\n")
	needBreak := false
	for i := 0; i < len(lines); i++ {
		if _, ok := quoteLine(lines[i]); ok {
			r.b.WriteString(`<blockquote class="bk-quote">`)
			for j := i; j < len(lines); j++ {
				body, ok := quoteLine(lines[j])
				if !ok {
					break
				}
				if j > i {
					r.b.WriteString("<br>")
				}
				r.mrkdwnLine(body)
				i = j
			}
			r.b.WriteString(`</blockquote>`)
			needBreak = false
			continue
		}
		if needBreak {
			r.b.WriteString("<br>")
		}
		r.mrkdwnLine(lines[i])
		needBreak = true
	}
}

// quoteLine returns the text of a quoted line without its marker.
func quoteLine(line string) (string, bool) {
	for _, m := range []string{">", "&gt;"} {
		if rest, ok := strings.CutPrefix(line, m); ok {
			return strings.TrimPrefix(rest, " "), true
		}
	}
	return "", false
}

// mrkdwnLine draws one line, marking list lines.
func (r *renderer) mrkdwnLine(line string) {
	if isListLine(line) {
		r.b.WriteString(`<span class="bk-li">`)
		r.inline(line, false)
		r.b.WriteString(`</span>`)
		return
	}
	r.inline(line, false)
}

// isListLine reports whether line is a list item: bullets as the bot writes
// them, or a number followed by ". ".
func isListLine(line string) bool {
	t := strings.TrimLeft(line, " \t")
	for _, b := range []string{"• ", "◦ ", "▪ ", "- "} {
		if strings.HasPrefix(t, b) {
			return true
		}
	}
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	return digits > 0 && strings.HasPrefix(t[digits:], ". ")
}

// inline draws one line's inline formatting. inLink is set inside a link
// label, where a nested link is drawn as its label alone.
func (r *renderer) inline(s string, inLink bool) {
	start := 0
	flush := func(end int) {
		r.esc(entityDecoder.Replace(s[start:end]))
	}
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '`':
			if j := strings.IndexByte(s[i+1:], '`'); j > 0 {
				flush(i)
				r.b.WriteString(`<code class="bk-code">`)
				r.esc(entityDecoder.Replace(s[i+1 : i+1+j]))
				r.b.WriteString(`</code>`)
				i += j + 2
				start = i
				continue
			}
		case '<':
			if j := strings.IndexByte(s[i+1:], '>'); j >= 0 {
				flush(i)
				r.token(s[i+1:i+1+j], inLink)
				i += j + 2
				start = i
				continue
			}
		case '*', '_', '~':
			if end := closer(s, i); end > 0 {
				flush(i)
				tag := map[byte]string{'*': "b", '_': "i", '~': "s"}[c]
				r.b.WriteString("<" + tag + ">")
				r.inline(s[i+1:end], inLink)
				r.b.WriteString("</" + tag + ">")
				i = end + 1
				start = i
				continue
			}
		}
		i++
	}
	flush(len(s))
}

// closer returns the index of the marker that closes the one at s[open],
// or -1. A marker opens after a non-word character and before a non-space;
// it closes after a non-space and before a non-word character. Code spans
// and <…> tokens are skipped whole, so a * inside them closes nothing.
func closer(s string, open int) int {
	c := s[open]
	before, _ := utf8.DecodeLastRuneInString(s[:open])
	after, _ := utf8.DecodeRuneInString(s[open+1:])
	if open > 0 && isWord(before) || open+1 >= len(s) || unicode.IsSpace(after) {
		return -1
	}
	for k := open + 1; k < len(s); k++ {
		switch s[k] {
		case '`', '<':
			closing := byte('`')
			if s[k] == '<' {
				closing = '>'
			}
			if j := strings.IndexByte(s[k+1:], closing); j >= 0 {
				k += j + 1
			}
		case c:
			prev, _ := utf8.DecodeLastRuneInString(s[:k])
			next, _ := utf8.DecodeRuneInString(s[k+1:])
			if k > open+1 && !unicode.IsSpace(prev) && (k+1 == len(s) || !isWord(next)) {
				return k
			}
		}
	}
	return -1
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// token draws a Slack <…> token: a mention, a special mention or a link.
func (r *renderer) token(t string, inLink bool) {
	body, label, _ := strings.Cut(t, "|")
	label = entityDecoder.Replace(label)
	switch {
	case strings.HasPrefix(body, "@"):
		r.mention("user", body[1:], label)
	case strings.HasPrefix(body, "#"):
		r.mention("channel", body[1:], label)
	case strings.HasPrefix(body, "!"):
		name, arg, _ := strings.Cut(body[1:], "^")
		switch name {
		case "here", "channel", "everyone":
			r.mention("broadcast", name, "")
		case "subteam":
			r.mention("usergroup", arg, label)
		case "date":
			r.b.WriteString(`<span class="bk-date">`)
			r.esc(label)
			r.b.WriteString(`</span>`)
		default:
			r.mention("broadcast", name, label)
		}
	default:
		address := entityDecoder.Replace(body)
		_, rawLabel, hasLabel := strings.Cut(t, "|")
		drawLabel := func() { r.esc(address) }
		if hasLabel {
			drawLabel = func() { r.inline(rawLabel, true) }
		}
		r.link(address, drawLabel, inLink)
	}
}

// link draws an <a> for a safe address and the label alone otherwise; a
// link inside a link label is its label alone too.
func (r *renderer) link(address string, label func(), inLink bool) {
	if inLink {
		label()
		return
	}
	if !safeURL(address, linkSchemes) {
		r.b.WriteString(`<span class="bk-link-refused"`)
		r.attr("title", "link not followed: "+address)
		r.b.WriteString(">")
		label()
		r.b.WriteString(`</span>`)
		return
	}
	r.b.WriteString(`<a class="bk-link"`)
	r.attr("href", address)
	r.b.WriteString(` target="_blank" rel="noopener noreferrer">`)
	label()
	r.b.WriteString(`</a>`)
}
