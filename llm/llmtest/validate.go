package llmtest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The checks below refuse requests the real services refuse, with their
// wording, so that an adapter that builds an invalid conversation fails here
// rather than in production. They cover the mistakes adapters make, not the
// whole API.

// OpenAIMaxTools is the most tools OpenAI's Chat Completions API accepts
// in one request; a longer list is refused as invalid.
const OpenAIMaxTools = 128

var toolNameOK = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func validateOpenAI(req *oaRequest) string {
	if req.Model == "" {
		return "you must provide a model parameter"
	}
	if len(req.Messages) == 0 {
		return "[] is too short - 'messages'"
	}
	if req.StreamOptions != nil && !req.Stream {
		return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
	}
	if len(req.Tools) > OpenAIMaxTools {
		return fmt.Sprintf("Invalid 'tools': array too long. Expected an array with maximum length %d, but got an array with length %d instead.",
			OpenAIMaxTools, len(req.Tools))
	}
	for i, t := range req.Tools {
		if msg := checkToolName(fmt.Sprintf("'tools[%d].function.name'", i), t.Function.Name); msg != "" {
			return msg
		}
	}
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" && len(req.Tools) == 0 {
		return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
	}
	if msg := checkOpenAIImages(req); msg != "" {
		return msg
	}
	// Every tool message answers a call of the closest assistant message
	// before it, and every call is answered before the next other message.
	var open map[string]bool
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
		}
		if m.Role == "tool" {
			if open == nil || !open[m.ToolCallID] {
				return fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[%d])", i)
			}
			delete(open, m.ToolCallID)
			continue
		}
		if len(open) > 0 {
			return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(keys(open), ", ")
		}
		open = nil
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		} else if m.Role == "assistant" && (len(m.Content) == 0 || string(m.Content) == "null") {
			return fmt.Sprintf("Invalid value for 'content': expected a string, got null. (messages[%d])", i)
		}
	}
	if len(open) > 0 {
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(keys(open), ", ")
	}
	return ""
}

func checkToolName(field, name string) string {
	switch {
	case len(name) > 64:
		return fmt.Sprintf("Invalid %s: string too long. Expected a string with maximum length 64, but got a string with length %d instead.", field, len(name))
	case !toolNameOK.MatchString(name):
		return fmt.Sprintf("Invalid %s: string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", field)
	}
	return ""
}

func validateAnthropic(req *anRequest) string {
	switch {
	case req.Model == "":
		return "model: Field required"
	case req.MaxTokens == nil:
		return "max_tokens: Field required"
	case len(req.Messages) == 0:
		return "messages: at least one message is required"
	}
	for i, t := range req.Tools {
		if t.Type != "" && t.Type != "custom" {
			continue // server tools carry fixed names
		}
		if len(t.Name) > 64 || !toolNameOK.MatchString(t.Name) {
			return fmt.Sprintf("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		}
	}
	if req.ToolChoice != nil && req.ToolChoice.Type != "none" && len(req.Tools) == 0 {
		return "tool_choice: tool_choice may only be specified while providing tools"
	}
	var prevUses map[string]bool // tool_use ids of the previous assistant message
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		blocks, _ := blocksOf(m.Content)
		last := i == len(req.Messages)-1
		if len(blocks) == 0 && !(last && m.Role == "assistant") {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		results := map[string]bool{}
		uses := map[string]bool{}
		for j, b := range blocks {
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					return fmt.Sprintf("messages.%d.content.%d.text: text content blocks must be non-empty", i, j)
				}
			case "image":
				if msg := checkAnthropicBlock(i, j, m.Role, b); msg != "" {
					return msg
				}
			case "tool_use":
				if m.Role != "assistant" {
					return fmt.Sprintf("messages.%d.content.%d: tool_use blocks are only allowed in assistant messages", i, j)
				}
				uses[b.ID] = true
			case "tool_result":
				if m.Role != "user" {
					return fmt.Sprintf("messages.%d.content.%d: tool_result blocks are only allowed in user messages", i, j)
				}
				if !prevUses[b.ToolUseID] {
					return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
				results[b.ToolUseID] = true
			}
		}
		var missing []string
		for id := range prevUses {
			if !results[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(sorted(missing), ", "))
		}
		prevUses = uses
	}
	if len(prevUses) > 0 {
		return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(req.Messages)-1, strings.Join(keys(prevUses), ", "))
	}
	return ""
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
