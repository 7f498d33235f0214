package blockkit

import "github.com/slack-go/slack"

// AppendBlocks adds blocks at the end of an answer: to its last message when
// that message still passes Validate with them, otherwise as a message of
// their own after it, whose notification text is text. Blocks that close an
// answer, such as its feedback buttons, so always sit on its last message.
// msgs is not modified.
func AppendBlocks(msgs []Message, text string, blocks ...slack.Block) []Message {
	if len(blocks) == 0 {
		return msgs
	}
	out := append([]Message(nil), msgs...)
	if n := len(out); n > 0 {
		last := out[n-1]
		joined := Message{Text: last.Text, Blocks: append(append([]slack.Block(nil), last.Blocks...), blocks...), Controls: last.Controls}
		if len(last.Blocks) > 0 && Validate(joined) == nil {
			out[n-1] = joined
			return out
		}
	}
	return append(out, Message{Text: text, Blocks: append([]slack.Block(nil), blocks...)})
}

// AppendControls is AppendBlocks for blocks the sender wrote itself (its
// own buttons): they are marked as the message's Controls, so that Voice
// leaves them as they are.
func AppendControls(msgs []Message, text string, blocks ...slack.Block) []Message {
	out := AppendBlocks(msgs, text, blocks...)
	if len(out) > 0 && len(blocks) > 0 {
		last := &out[len(out)-1]
		last.Controls = append(append([]slack.Block(nil), last.Controls...), blocks...)
	}
	return out
}
