package blockkit

import (
	"strings"

	"github.com/slack-go/slack"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// FromMarkdown renders each top-level block to units, then packs the units
// into messages. Rendering depends only on the block; packing depends on
// everything before it and runs once, in order, and is kept cheap: what can
// be computed per unit (trimming, lengths, blocks) is computed while
// rendering.

type unitKind uint8

const (
	unitText    unitKind = iota // mrkdwn for a section
	unitBlock                   // a header or table block
	unitDivider                 // a rule
)

// outUnit is one piece of converted output.
type outUnit struct {
	kind unitKind
	// start and end locate a text unit's mrkdwn in the rendered buffer;
	// trim is the end without trailing spaces and newlines, and chars its
	// character count. blank units take no section, but still cost the
	// separator they were written after (see messageBuilder.beginText).
	start, end, trim int
	chars            int // also the block text characters of a unitBlock
	blank            bool
	block            slack.Block
}

// unitWriter renders top-level blocks to units. All text units share the
// renderer's buffer.
type unitWriter struct {
	w     *renderer
	units []outUnit
}

// renderUnits renders doc's top-level blocks; buf holds their text.
func renderUnits(src []byte, doc ast.Node) (buf string, units []outUnit) {
	u := unitWriter{w: newRenderer(src, false)}
	u.w.b.Grow(len(src) + len(src)/8 + 64)
	u.units = make([]outUnit, 0, doc.ChildCount())
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		u.node(n)
	}
	return u.w.b.String(), u.units
}

func (u *unitWriter) node(n ast.Node) {
	w := u.w
	switch n := n.(type) {
	case *ast.Heading:
		if !hasLink(w.src, n) {
			u.heading(flatPlain(w.src, n))
			return
		}
		// A header is plain_text and would drop the URL: keep the
		// heading as a bold line whose links and mentions still work.
		u.beginText()
		w.block(n)
		u.endText()
	case *ast.ThematicBreak:
		u.units = append(u.units, outUnit{kind: unitDivider})
	case *east.Table:
		rows, aligns := tableRows(w.src, n)
		if tb, chars, ok := tableBlock(rows, aligns); ok {
			u.units = append(u.units, outUnit{kind: unitBlock, block: tb, chars: chars})
			return
		}
		u.beginText()
		w.tableFallback(rows, aligns)
		u.endText()
	default:
		if w.invisible(n) {
			return
		}
		u.beginText()
		w.block(n)
		u.endText()
	}
}

// heading adds a header block, and a section for the rest of a heading too
// long for one (see headerParts).
func (u *unitWriter) heading(plain string) {
	if plain == "" {
		return
	}
	head, rest := headerParts(plain)
	hb := slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, head, true, false))
	u.units = append(u.units, outUnit{kind: unitBlock, block: hb, chars: Len(head)})
	if rest != "" {
		u.beginText()
		u.w.b.WriteString(rest)
		u.endText()
	}
}

// headerParts splits the plain text of a header at HeaderTextMax: the
// header's text, cut at a word and ended with "…", and the rest as mrkdwn
// for the section that continues it, bold like the header where it fits
// one section ("" when the text fits the header). Nothing is lost.
func headerParts(plain string) (head, rest string) {
	if Len(plain) <= HeaderTextMax {
		return plain, ""
	}
	head, more := cutWords(plain, HeaderTextMax-1)
	rest = "…" + literalMrkdwn(more, true)
	if Len(rest) <= SectionTextMax-2 {
		rest = "*" + rest + "*"
	}
	return head + "…", rest
}

// beginText starts a text unit: a fresh line as far as the renderer knows.
func (u *unitWriter) beginText() {
	u.w.lineStart, u.w.last, u.w.closed = true, 0, false
	u.units = append(u.units, outUnit{kind: unitText, start: u.w.b.Len()})
}

// endText records the unit's extent, trimmed length and characters.
func (u *unitWriter) endText() {
	t := &u.units[len(u.units)-1]
	t.end = u.w.b.Len()
	text := u.w.b.String()[t.start:t.end]
	trimmed := strings.TrimRight(text, " \n")
	t.trim = t.start + len(trimmed)
	t.blank = strings.TrimSpace(trimmed) == ""
	if !t.blank {
		t.chars = Len(trimmed)
	}
}

// messageBuilder packs units into messages.
type messageBuilder struct {
	b      strings.Builder // all section text: each section is a slice of it
	msgs   []Message
	blocks []slack.Block
	chars  int // block text characters in blocks

	secStart, secEnd int // the pending section: b[secStart:secEnd]
	sectionChars     int
}

// packUnits packs the units, whose text is in buf, into messages, in order.
func packUnits(buf string, units []outUnit) []Message {
	b := &messageBuilder{}
	b.b.Grow(len(buf) + 2*len(units) + 64)
	for i := range units {
		switch t := &units[i]; t.kind {
		case unitText:
			b.text(buf, t)
		case unitDivider:
			b.flushSection()
			b.add(slack.NewDividerBlock(), 0)
		default:
			b.flushSection()
			b.add(t.block, t.chars)
		}
	}
	return b.finish()
}

// text adds a text unit to the pending section when it fits, else flushes
// that section and starts a new one, or splits a unit too long for any
// section over several. Units that join a section are separated by "\n\n"
// after whatever trailing whitespace the first one had, and a blank unit
// still leaves its separator behind: that is the text sections have always
// held, so it is kept byte for byte.
func (b *messageBuilder) text(buf string, t *outUnit) {
	if b.sectionChars > 0 {
		b.b.WriteString("\n\n")
	}
	start := b.b.Len()
	b.b.WriteString(buf[t.start:t.end])
	if t.blank {
		return
	}
	end := start + t.trim - t.start
	n := t.chars
	if n > SectionTextMax {
		b.flushSection()
		unit := b.b.String()[start:end]
		for _, piece := range SplitMrkdwn(unit, SectionTextMax) {
			b.add(sectionBlock(piece), Len(piece))
		}
		return
	}
	if b.sectionChars > 0 {
		if joined := b.sectionChars + Len(b.b.String()[b.secEnd:start]) + n; joined <= SectionTextMax {
			b.secEnd, b.sectionChars = end, joined
			return
		}
		b.flushSection()
	}
	b.secStart, b.secEnd, b.sectionChars = start, end, n
}

func (b *messageBuilder) flushSection() {
	if b.sectionChars == 0 {
		return
	}
	n := b.sectionChars
	b.sectionChars = 0
	b.add(sectionBlock(b.b.String()[b.secStart:b.secEnd]), n)
}

func sectionBlock(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
}

// add appends a block, starting a new message when this one is full. A table
// block always ends its message: Slack allows one table per message and
// renders it after the other blocks, so text written after a table must go
// to the next message to keep the reading order.
func (b *messageBuilder) add(block slack.Block, chars int) {
	_, divider := block.(*slack.DividerBlock)
	if divider && len(b.blocks) == 0 {
		return
	}
	if len(b.blocks) >= MaxBlocks || b.chars+chars > MaxMessageChars {
		b.endMessage(true)
	}
	b.blocks = append(b.blocks, block)
	b.chars += chars
	if _, table := block.(*slack.TableBlock); table {
		b.endMessage(false)
	}
}

// endMessage closes the current message. Trailing dividers are dropped, and
// when more content follows a header that ended up last moves to the next
// message, next to the content it introduces.
func (b *messageBuilder) endMessage(more bool) {
	for len(b.blocks) > 0 {
		if _, ok := b.blocks[len(b.blocks)-1].(*slack.DividerBlock); !ok {
			break
		}
		b.blocks = b.blocks[:len(b.blocks)-1]
	}
	var carry slack.Block
	carryChars := 0
	if more && len(b.blocks) > 1 {
		if h, ok := b.blocks[len(b.blocks)-1].(*slack.HeaderBlock); ok {
			carry, carryChars = h, Len(h.Text.Text)
			b.blocks = b.blocks[:len(b.blocks)-1]
		}
	}
	if len(b.blocks) > 0 {
		b.msgs = append(b.msgs, Message{Text: notificationText(b.blocks), Blocks: b.blocks})
	}
	b.blocks, b.chars = nil, 0
	if carry != nil {
		b.blocks, b.chars = []slack.Block{carry}, carryChars
	}
}

func (b *messageBuilder) finish() []Message {
	b.flushSection()
	b.endMessage(false)
	return b.msgs
}
