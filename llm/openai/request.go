package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"

	"github.com/slackbot/slackbot/llm"
)

// emptySchema is sent for a tool without a schema: OpenAI wants an object
// schema, and some compatible servers fail on a missing one.
var emptySchema = map[string]any{"type": "object", "properties": map[string]any{}}

// params maps a neutral request onto Chat Completions parameters.
//
// vision says whether the model reads images: when it does not, each image
// of a user message becomes llm.NoVisionNote.
//
// completionTokens selects max_completion_tokens over max_tokens: OpenAI's
// reasoning models refuse max_tokens, while many OpenAI-compatible servers
// (older Ollama, LM Studio, llama.cpp, several gateways) only know
// max_tokens, which OpenAI itself still accepts for the other models.
func params(req *llm.Request, completionTokens, vision bool) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{Model: req.Model}
	if req.Model == "" {
		return p, fmt.Errorf("the request names no model")
	}
	for i, m := range req.Messages {
		msg, err := message(m, vision)
		if err != nil {
			return p, fmt.Errorf("message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, msg)
	}
	for _, t := range req.Tools {
		schema := emptySchema
		if len(t.Schema) > 0 && string(t.Schema) != "null" {
			schema = nil
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return p, fmt.Errorf("tool %q: schema is not a JSON object: %w", t.Name, err)
			}
		}
		def := sdk.FunctionDefinitionParam{Name: t.Name, Parameters: sdk.FunctionParameters(schema)}
		if t.Description != "" {
			def.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(def))
	}
	// tool_choice without tools is an error at OpenAI, so it is only sent
	// with tools; the default (auto) is left to the server.
	if len(p.Tools) > 0 {
		switch req.ToolChoice {
		case llm.ToolChoiceRequired, llm.ToolChoiceNone:
			p.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: sdk.String(string(req.ToolChoice))}
		case llm.ToolChoiceAuto:
		default:
			return p, fmt.Errorf("unknown tool choice %q", req.ToolChoice)
		}
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.TopP != nil {
		p.TopP = sdk.Float(*req.TopP)
	}
	if n := int64(req.MaxOutputTokens); n > 0 {
		if completionTokens {
			p.MaxCompletionTokens = sdk.Int(n)
		} else {
			p.MaxTokens = sdk.Int(n)
		}
	}
	if req.Stream {
		p.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	}
	return p, nil
}

func message(m llm.Message, vision bool) (sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return sdk.SystemMessage(m.Content), nil
	case llm.RoleUser:
		if len(m.Images) == 0 {
			return sdk.UserMessage(m.Content), nil
		}
		return sdk.UserMessage(userParts(m, vision)), nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message without tool_call_id")
		}
		return sdk.ToolMessage(m.Content, m.ToolCallID), nil
	case llm.RoleAssistant:
		a := sdk.ChatCompletionAssistantMessageParam{}
		// An assistant message needs content or tool calls; an empty
		// answer is sent as "".
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(m.Content)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: sentArguments(c.Arguments)},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

// userParts is a user message with images as content parts: its text, then
// each image as an image_url part holding a data: URI, or, for a model
// without vision, the note that replaces it.
func userParts(m llm.Message, vision bool) []sdk.ChatCompletionContentPartUnionParam {
	var parts []sdk.ChatCompletionContentPartUnionParam
	if m.Content != "" {
		parts = append(parts, sdk.TextContentPart(m.Content))
	}
	for _, img := range m.Images {
		if !vision {
			parts = append(parts, sdk.TextContentPart(llm.NoVisionNote(img)))
			continue
		}
		uri := "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
		parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: uri}))
	}
	return parts
}

// sentArguments is the arguments text replayed in the history. OpenAI
// takes any string, but compatible servers such as Ollama and vLLM parse it
// and refuse the whole conversation when it is not JSON; the tool result
// that follows already tells the model what was wrong with its call.
func sentArguments(args string) string {
	if json.Valid([]byte(args)) {
		return args
	}
	return "{}"
}
