// Package tools is how an agent session reaches the outside world. Every
// source of tools — MCP servers, REST endpoints, sub-agents, the session's
// own built-ins — is a Provider; an Orchestrator merges them under
// namespaced names, validates arguments against each tool's JSON Schema,
// bounds calls with timeouts and hands oversized results to a hook.
package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// Tool describes one tool as the model sees it.
type Tool struct {
	// Name is the full, namespaced name offered to the model, such as
	// "github__search_code" or "agent__final_report".
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments (an object schema). Nil
	// means any object.
	Schema json.RawMessage
	// Queue names the concurrency queue the tool's calls wait in ("" = none).
	Queue string
}

// Call is one invocation handed to a Provider.
type Call struct {
	ID        string          // the model's tool-call id
	Name      string          // full namespaced name
	Arguments json.RawMessage // a JSON object, already validated against the schema
}

// Result is what a tool returns.
type Result struct {
	// Content is the text given back to the model.
	Content string
	// IsError marks a failure the model should see and may recover from.
	IsError bool
	// Terminate asks the session to end after this call. Content is the
	// closing note; when it is empty the model is told "Finished" and the
	// answer is the last text the model wrote.
	Terminate bool
}

// Provider is a source of tools. Implementations must be safe for
// concurrent calls.
type Provider interface {
	// Namespace is the provider's name in logs ("github", "rest", "agent").
	Namespace() string
	// Tools lists the provider's tools with their full names.
	Tools(ctx context.Context) ([]Tool, error)
	// Call runs one tool. A returned error is a failure of the tool (the
	// model is told); a tool that wants to report a handled failure returns
	// a Result with IsError instead.
	Call(ctx context.Context, call Call) (Result, error)
}

// Separator joins a namespace and a tool name.
const Separator = "__"

// MaxNameLen is the longest tool name every supported model API accepts.
const MaxNameLen = 64

// Name builds the namespaced name of a tool, replacing characters the model
// APIs refuse (anything but letters, digits, '_' and '-') with '_' and
// truncating to MaxNameLen.
func Name(namespace, tool string) string {
	n := sanitize(namespace) + Separator + sanitize(tool)
	if len(n) > MaxNameLen {
		n = n[:MaxNameLen]
	}
	return n
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}
