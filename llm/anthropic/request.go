package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/slackbot/slackbot/llm"
)

// DefaultMaxTokens is sent as max_tokens, which the Messages API requires,
// when a Request leaves MaxOutputTokens at 0.
const DefaultMaxTokens = 4096

// malformedArgumentsKey is the only key of the tool_use input sent in place
// of arguments that are not a JSON object. The API accepts nothing else as
// input; keeping the model's text under this key lets it see what it wrote
// when it reads the error the agent returned for that call.
const malformedArgumentsKey = "malformed_arguments"

// emptySchema is sent for a tool without a schema: the API requires one.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// params maps a provider-neutral request onto the Messages API. vision says
// whether the model reads images: when it does not, each image of a user
// message becomes llm.NoVisionNote.
func params(req *llm.Request, vision bool) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(req.MaxOutputTokens),
		// Automatic prompt caching: the marker moves to the last cacheable
		// block, so each turn of an agent re-reads the previous turns from
		// the cache instead of paying for them again.
		CacheControl: sdk.NewCacheControlEphemeralParam(),
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}

	var sys []string
	var turns []turn
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			// The leading system messages are the system prompt. A later
			// one is an instruction for the next reply (a final-turn
			// notice, a reminder); in the system prompt it would leave the
			// conversation ending on the assistant, which the Messages API
			// reads as a prefill to continue, so it travels as a user turn.
			switch {
			case m.Content == "":
			case len(turns) == 0:
				sys = append(sys, m.Content)
			default:
				turns = appendTurn(turns, llm.RoleUser, sdk.NewTextBlock(m.Content))
			}
		case llm.RoleUser:
			turns = appendTurn(turns, llm.RoleUser, userBlocks(m, vision)...)
		case llm.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, sdk.NewToolUseBlock(toolID(c.ID), toolInput(c.Arguments), c.Name))
			}
			turns = appendTurn(turns, llm.RoleAssistant, blocks...)
		case llm.RoleTool:
			// Tool results travel in a user turn; consecutive ones merge
			// into a single turn, as the API requires.
			turns = appendTurn(turns, llm.RoleUser, toolResult(m))
		default:
			return p, fmt.Errorf("message %d has unknown role %q", i, m.Role)
		}
	}
	if len(sys) > 0 {
		// One block: the API runs the text of several blocks together.
		p.System = []sdk.TextBlockParam{{Text: strings.Join(sys, "\n\n")}}
	}
	for _, t := range turns {
		if t.role == llm.RoleAssistant {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(t.blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewUserMessage(t.blocks...))
		}
	}

	for _, d := range req.Tools {
		schema, err := toolSchema(d.Schema)
		if err != nil {
			return p, fmt.Errorf("tool %q: %w", d.Name, err)
		}
		t := &sdk.ToolParam{
			Name:        d.Name,
			InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
		}
		if d.Description != "" {
			t.Description = sdk.String(d.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: t})
	}
	// tool_choice without tools is refused, and means nothing anyway.
	if len(p.Tools) > 0 {
		switch req.ToolChoice {
		case llm.ToolChoiceRequired:
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
		case llm.ToolChoiceNone:
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
		}
	}
	return p, nil
}

// turn is one message of the wire conversation: the API wants user and
// assistant turns, and consecutive messages of one role become one turn.
type turn struct {
	role   llm.Role
	blocks []sdk.ContentBlockParamUnion
}

func appendTurn(turns []turn, role llm.Role, blocks ...sdk.ContentBlockParamUnion) []turn {
	if len(blocks) == 0 {
		// An empty message (say, an assistant turn that said nothing) would
		// be refused; leaving it out loses nothing.
		return turns
	}
	if n := len(turns); n > 0 && turns[n-1].role == role {
		turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
		return turns
	}
	return append(turns, turn{role: role, blocks: blocks})
}

// userBlocks is a user message's text, then each image as an image block
// with a base64 source, or, for a model without vision, the note that
// replaces it.
func userBlocks(m llm.Message, vision bool) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	if m.Content != "" {
		blocks = append(blocks, sdk.NewTextBlock(m.Content))
	}
	for _, img := range m.Images {
		if !vision {
			blocks = append(blocks, sdk.NewTextBlock(llm.NoVisionNote(img)))
			continue
		}
		blocks = append(blocks, sdk.NewImageBlockBase64(img.MediaType, base64.StdEncoding.EncodeToString(img.Data)))
	}
	return blocks
}

func toolResult(m llm.Message) sdk.ContentBlockParamUnion {
	r := &sdk.ToolResultBlockParam{ToolUseID: toolID(m.ToolCallID)}
	// An empty text block is refused; a result without content is not.
	if m.Content != "" {
		r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	if m.IsError {
		r.IsError = sdk.Bool(true)
	}
	return sdk.ContentBlockParamUnion{OfToolResult: r}
}

// toolInput returns what to send as the input of a tool_use block: the
// model's arguments when they are a JSON object, {} when they are empty (a
// call without arguments), and otherwise an object holding the raw text
// under malformedArgumentsKey.
func toolInput(args string) any {
	trimmed := bytes.TrimSpace([]byte(args))
	if len(trimmed) == 0 {
		return json.RawMessage(`{}`)
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	return map[string]string{malformedArgumentsKey: args}
}

// toolID makes an ID the API accepts (^[a-zA-Z0-9_-]+$). IDs minted by
// other providers, met after a fallback in the middle of a conversation,
// may hold other characters; the mapping is the same for a call and its
// result, so they still pair.
func toolID(id string) string {
	ok := id != ""
	for _, r := range id {
		if !isIDRune(r) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	if id == "" {
		return "call"
	}
	return strings.Map(func(r rune) rune {
		if isIDRune(r) {
			return r
		}
		return '_'
	}, id)
}

func isIDRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// toolSchema checks that a tool's schema is a JSON object and fills in an
// empty one when it is missing.
func toolSchema(s json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(s)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return emptySchema, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	return json.RawMessage(trimmed), nil
}
