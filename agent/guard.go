package agent

import (
	"sync"

	"github.com/slackbot/slackbot/llm"
	"github.com/tiktoken-go/tokenizer"
)

// The context guard estimates, before each turn, whether the next request
// still fits the model's window. Counts come from tiktoken's o200k encoding
// (offline); other models tokenise differently, so the estimate is a guide
// and the reserved buffer absorbs the difference. Each message is counted
// once, when it is appended, so a turn costs only its new messages.

// perMessageOverhead approximates the tokens a wire format spends framing
// one message (role, separators) beyond its text.
const perMessageOverhead = 4

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
)

func tokenCodec() tokenizer.Codec {
	codecOnce.Do(func() {
		c, err := tokenizer.Get(tokenizer.O200kBase)
		if err == nil {
			codec = c
		}
	})
	return codec
}

// countTokens estimates the tokens of s; without a codec it falls back to
// the common four-bytes-a-token rule.
func countTokens(s string) int {
	if s == "" {
		return 0
	}
	if c := tokenCodec(); c != nil {
		if n, err := c.Count(s); err == nil {
			return n
		}
	}
	return (len(s) + 3) / 4
}

func messageTokens(m *llm.Message) int {
	n := perMessageOverhead + countTokens(m.Content)
	for i := range m.ToolCalls {
		n += perMessageOverhead + countTokens(m.ToolCalls[i].Name) + countTokens(m.ToolCalls[i].Arguments)
	}
	return n
}

func toolDefsTokens(defs []llm.ToolDef) int {
	n := 0
	for i := range defs {
		n += perMessageOverhead + countTokens(defs[i].Name) + countTokens(defs[i].Description) + countTokens(string(defs[i].Schema))
	}
	return n
}
