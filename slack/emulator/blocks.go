package emulator

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/slackbot/slackbot/blockkit"
)

const (
	// maxTextLen is where Slack answers msg_too_long.
	maxTextLen = blockkit.MessageTextMax
	// maxBlocksText is about where Slack answers msg_blocks_too_long: the
	// combined text of a message's blocks. Slack does not document the
	// figure; it was observed near 13,000.
	maxBlocksText = 13000
)

func blockkitLen(s string) int { return blockkit.Len(s) }

// checkBlocks applies Slack's Block Kit limits to a blocks array: structural
// problems answer invalid_blocks with the details in "errors" (as Slack lists
// them), and an oversized total answers msg_blocks_too_long.
func checkBlocks(blocks json.RawMessage) *apiError {
	var arr []json.RawMessage
	if err := json.Unmarshal(blocks, &arr); err != nil {
		return fail("invalid_blocks_format")
	}
	// The text stands in for the message's own, which content checks: only
	// the blocks are judged here.
	body, err := json.Marshal(map[string]any{"text": "x", "blocks": arr})
	if err != nil {
		return fail("invalid_blocks_format")
	}
	var problems []string
	var verr *blockkit.ValidationError
	if err := blockkit.ValidateJSON(body); errors.As(err, &verr) {
		for _, p := range verr.Problems {
			// blockkit's per-message budget sits below Slack's real
			// threshold, which is checked below instead.
			if strings.HasPrefix(p, "blocks: block text totals") {
				continue
			}
			problems = append(problems, p)
		}
	} else if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = "[ERROR] " + p
		}
		return &apiError{code: "invalid_blocks", extra: map[string]any{
			"errors":            problems,
			"response_metadata": map[string]any{"messages": msgs},
		}}
	}
	if textLen(arr) > maxBlocksText {
		return fail("msg_blocks_too_long")
	}
	return nil
}

// textLen sums the length of every "text" string anywhere in v: the text
// objects, markdown blocks and table cells that Slack counts together.
func textLen(v any) int {
	switch v := v.(type) {
	case []json.RawMessage:
		n := 0
		for _, raw := range v {
			var x any
			if json.Unmarshal(raw, &x) == nil {
				n += textLen(x)
			}
		}
		return n
	case map[string]any:
		n := 0
		for k, x := range v {
			if str, ok := x.(string); ok && k == "text" {
				n += blockkit.Len(str)
			} else {
				n += textLen(x)
			}
		}
		return n
	case []any:
		n := 0
		for _, x := range v {
			n += textLen(x)
		}
		return n
	}
	return 0
}
