package blockkit

import (
	"encoding/json"

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
	// Controls are those of Blocks the sender wrote itself — its own
	// buttons, such as Stop — told apart by identity: Voice leaves them
	// as they are, and only they may carry reserved action ids. Controls
	// are not sent.
	Controls []slack.Block
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
