package blockkit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit/internal/jsonish"
)

// Step 4 of Repair: the built blocks of each message are packed into
// messages within Slack's limits, and every message is checked with
// Validate before it is kept.

// pack turns the groups into messages, in order.
func (r *repairer) pack() []Message {
	r.flush()
	var out []Message
	for _, g := range r.groups {
		if g.converted != nil {
			out = append(out, g.converted...)
			continue
		}
		out = r.packBlocks(out, g.blocks, g.path)
	}
	r.groups = nil
	return out
}

// packBlocks splits blocks into messages of at most MaxBlocks blocks,
// MaxMessageChars characters and one table, and appends them to out.
func (r *repairer) packBlocks(out []Message, blocks []slack.Block, path string) []Message {
	if len(blocks) == 0 {
		return out
	}
	if onlyDividers(blocks) {
		r.note(path, "empty_dropped", "message with nothing but dividers")
		return out
	}
	var (
		groups   [][]slack.Block
		cur      []slack.Block
		chars    int
		hasTable bool
	)
	for _, b := range blocks {
		c := blockChars(b)
		_, isTable := b.(*slack.TableBlock)
		if len(cur) > 0 && (len(cur) == MaxBlocks || chars+c > MaxMessageChars || isTable && hasTable) {
			groups = append(groups, cur)
			cur, chars, hasTable = nil, 0, false
		}
		cur = append(cur, b)
		chars += c
		hasTable = hasTable || isTable
	}
	groups = append(groups, cur)
	if len(groups) > 1 {
		r.note(path, "message_split", fmt.Sprintf("%d blocks split over %d messages (limits: %d blocks, %d characters, one table)", len(blocks), len(groups), MaxBlocks, MaxMessageChars))
	}
	for _, g := range groups {
		out = r.emit(out, g, path, 0)
	}
	return out
}

// emit appends one message, splitting it further if Validate still objects.
// Every block was validated alone already, so a message that fails holds
// blocks that only fail together (total size, tables per message): halving
// converges.
func (r *repairer) emit(out []Message, blocks []slack.Block, path string, depth int) []Message {
	m := Message{Text: notificationText(blocks), Blocks: blocks}
	err := Validate(m)
	switch {
	case err == nil:
		return append(out, m)
	case len(blocks) > 1:
		r.note(path, "message_split", "split further: "+firstLine(err.Error()))
		half := len(blocks) / 2
		out = r.emit(out, blocks[:half], path, depth)
		return r.emit(out, blocks[half:], path, depth)
	case depth == 0:
		r.note(path, "block_converted", "block rejected: "+firstLine(err.Error()))
		for _, b := range r.blockAsText(blocks[0], path) {
			out = r.emit(out, []slack.Block{b}, path, 1)
		}
		return out
	}
	// A plain section within SectionTextMax that still fails Validate is a
	// bug in this package; keep the message rather than lose it.
	return append(out, m)
}

func onlyDividers(blocks []slack.Block) bool {
	for _, b := range blocks {
		if _, ok := b.(*slack.DividerBlock); !ok {
			return false
		}
	}
	return true
}

// blockChars is what a block counts against MaxMessageChars.
func blockChars(b slack.Block) int {
	switch b := b.(type) {
	case *slack.SectionBlock:
		n := 0
		if b.Text != nil {
			n += Len(b.Text.Text)
		}
		for _, f := range b.Fields {
			n += Len(f.Text)
		}
		return n
	case *slack.HeaderBlock:
		if b.Text != nil {
			return Len(b.Text.Text)
		}
		return 0
	case *slack.DividerBlock:
		return 0
	case *slack.ContextActionsBlock:
		return contextActionsChars(b)
	}
	return Len(blockReadable(b))
}

// blockReadable returns the readable text of any built block, as mrkdwn.
func blockReadable(b slack.Block) string {
	switch b := b.(type) {
	case *slack.SectionBlock:
		var parts []string
		if b.Text != nil {
			parts = append(parts, textOf(b.Text))
		}
		for _, f := range b.Fields {
			parts = append(parts, textOf(f))
		}
		return strings.Join(parts, "\n")
	case *slack.HeaderBlock:
		if b.Text != nil {
			return textOf(b.Text)
		}
		return ""
	case *slack.DividerBlock, *slack.ContextActionsBlock:
		return "" // buttons have no words worth keeping as text
	}
	data, err := json.Marshal(b)
	if err != nil {
		return ""
	}
	v, err := jsonish.Parse(data)
	if err != nil {
		return ""
	}
	return readable(v)
}

// textOf is a text object's text as mrkdwn.
func textOf(t *slack.TextBlockObject) string {
	if t.Type == slack.PlainTextType {
		return mrkdwnEscaper.Replace(t.Text)
	}
	return t.Text
}

// blockAsText renders a built block Slack would refuse as sections of its
// text.
func (r *repairer) blockAsText(b slack.Block, path string) []slack.Block {
	txt := blockReadable(b)
	if strings.TrimSpace(txt) == "" {
		return nil
	}
	return r.sections(&slack.TextBlockObject{Type: slack.MarkdownType, Text: escapeBare(txt)}, "", path)
}

// contextActionsChars is the length of the buttons' texts in a
// context_actions block.
func contextActionsChars(b *slack.ContextActionsBlock) int {
	if b.Elements == nil {
		return 0
	}
	n := 0
	for _, el := range b.Elements.ElementSet {
		switch e := el.(type) {
		case *slack.FeedbackButtonsBlockElement:
			for _, btn := range []*slack.FeedbackButton{e.PositiveButton, e.NegativeButton} {
				if btn != nil && btn.Text != nil {
					n += Len(btn.Text.Text)
				}
			}
		case *slack.IconButtonBlockElement:
			if e.Text != nil {
				n += Len(e.Text.Text)
			}
		}
	}
	return n
}
