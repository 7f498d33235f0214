package blockkit

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Message is one Slack message: the blocks to post and the plain notification
// fallback Slack shows where blocks cannot be rendered (notifications, some
// screen readers, old clients).
type Message struct {
	// Text is the notification fallback. It is never empty when Blocks carry
	// text: Slack warns about, and some clients show nothing for, a message
	// without it.
	Text string
	// Blocks are Block Kit blocks (github.com/slack-go/slack v0.35 types).
	Blocks []slack.Block
}

// messageJSON is the chat.postMessage shape of a Message. slack.Blocks carries
// the array so that decoding picks the concrete block type from each "type".
type messageJSON struct {
	Text   string        `json:"text"`
	Blocks *slack.Blocks `json:"blocks,omitempty"`
}

// MarshalJSON encodes m as {"text": "...", "blocks": [...]}, the body shape of
// chat.postMessage and chat.update. A message without blocks omits "blocks",
// because Slack rejects an empty blocks array.
func (m Message) MarshalJSON() ([]byte, error) {
	out := messageJSON{Text: m.Text}
	if len(m.Blocks) > 0 {
		out.Blocks = &slack.Blocks{BlockSet: m.Blocks}
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes the shape MarshalJSON writes. Block types slack-go does
// not know decode as *slack.UnknownBlock, which Validate reports.
func (m *Message) UnmarshalJSON(data []byte) error {
	var in messageJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	m.Text = in.Text
	m.Blocks = nil
	if in.Blocks != nil {
		m.Blocks = in.Blocks.BlockSet
	}
	return nil
}

// fallbackChars is roughly how much of a message its notification fallback
// repeats: enough to recognise the message in a notification, short enough
// not to duplicate it for clients that show both.
const fallbackChars = 200

// fallbackBuf builds messages' notification Text, reusing its scratch space
// across the messages of one conversion: building the text needs two working
// copies, and only the result should be allocated.
type fallbackBuf struct{ raw, out []byte }

// text builds a message's Text from its blocks: the first words of their
// text as plain text on one line, cut at a word with "…", then escaped for
// mrkdwn (Slack formats the top-level text too).
func (f *fallbackBuf) text(blocks []slack.Block) string {
	raw := f.raw[:0]
	for _, b := range blocks {
		if utf8.RuneCount(raw) > fallbackChars {
			break
		}
		switch b := b.(type) {
		case *slack.HeaderBlock:
			raw = append(raw, b.Text.Text...)
		case *slack.SectionBlock:
			if b.Text != nil {
				raw = appendMrkdwnPlain(raw, b.Text.Text, 2*fallbackChars)
			}
		case *slack.TableBlock:
			raw = append(raw, tableCellsText(b, 2*fallbackChars)...)
		}
		raw = append(raw, ' ')
	}
	text := appendCollapsed(f.out[:0], raw)
	f.raw, f.out = raw, text
	if utf8.RuneCount(text) > fallbackChars {
		head, _ := cutWords(string(text), fallbackChars-1)
		return neutralEscape(head + "…")
	}
	if len(text) == 0 {
		return "(message)"
	}
	if bytes.ContainsAny(text, "&<>") {
		return neutralEscape(string(text))
	}
	return string(text)
}

// appendCollapsed appends collapseSpaces(s) to dst without allocating.
func appendCollapsed(dst, s []byte) []byte {
	s = bytes.TrimSpace(s)
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		c := s[i]
		clean = c != '\n' && c != '\t' && c != '\r' && !(c == ' ' && i+1 < len(s) && s[i+1] == ' ')
	}
	if clean {
		return append(dst, s...)
	}
	// strings.Join(strings.Fields(s), " "): fields are runs of non-space
	// runes, invalid bytes included, copied as they are.
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(s[i:])
		}
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(s) {
			r, size := rune(s[j]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRune(s[j:])
			}
			if unicode.IsSpace(r) {
				break
			}
			j += size
		}
		if len(dst) > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, s[i:j]...)
		i = j
	}
	return dst
}

// Escapers for text that goes into mrkdwn. Only &, < and > are special to
// Slack; the neutral one also keeps markers literal (see the look-alike
// constants in mrkdwn.go), the label one also keeps a link label on one line
// and free of the "|" that would end it.
var (
	mrkdwnEscaper  = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	neutralEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;",
		"*", string(lookalikeAst), "_", string(lookalikeUnd), "~", string(lookalikeTil), "`", string(lookalikeBt))
	labelEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;",
		"|", string(labelBar), "\n", " ", "\r", " ", "\t", " ")
)

// neutralEscape escapes &, < and > for mrkdwn.
func neutralEscape(s string) string { return mrkdwnEscaper.Replace(s) }

// appendMrkdwnPlain reads mrkdwn as plain text: tokens become what Slack shows
// for them, entities are decoded, U+200B and code fences are dropped, quote
// markers at line starts are dropped, and so are *, _ and ~ except between
// two word characters (snake_case) or two spaces (2 * 3), where they are text.
//
// It stops after about limit characters: a fallback needs only the start.
// The text is appended to dst.
func appendMrkdwnPlain(dst []byte, s string, limit int) []byte {
	prev := rune(0)
	for i, n := 0, 0; i < len(s) && n < limit; n++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '<':
			if k := tokenEnd(s, i); k > 0 {
				dst = append(dst, readableToken(s[i+1:k-1])...)
				i, prev = k, 'x'
				continue
			}
		case r == '&':
			if k := entityEnd(s, i); k > 0 {
				dst = append(dst, html.UnescapeString(s[i:k])...)
				i, prev = k, 'x'
				continue
			}
		case r == zwsp || r == '`':
			i += size
			continue
		case r == '>' && (i == 0 || s[i-1] == '\n'):
			i += size
			if i < len(s) && s[i] == ' ' {
				i++
			}
			continue
		case r == '*' || r == '_' || r == '~':
			next, _ := utf8.DecodeRuneInString(s[i+size:])
			intraword := isWordRune(prev) && isWordRune(next)
			lone := (prev == 0 || unicode.IsSpace(prev)) && (next == utf8.RuneError || unicode.IsSpace(next))
			if !intraword && !lone {
				i += size
				continue
			}
		}
		dst = utf8.AppendRune(dst, r)
		prev = r
		i += size
	}
	return dst
}
