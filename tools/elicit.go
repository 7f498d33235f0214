package tools

import (
	"context"
	"encoding/json"
)

// ElicitAction is how a person answered a tool's question.
type ElicitAction string

// The three answers the MCP elicitation protocol knows.
const (
	ElicitAccept  ElicitAction = "accept"  // the form was submitted; Content holds it
	ElicitDecline ElicitAction = "decline" // the person said no, or nobody can be asked
	ElicitCancel  ElicitAction = "cancel"  // dismissed without a choice, or no answer in time
)

// ElicitRequest is a tool's question to the person behind the session: an
// MCP server's elicitation/create in form mode.
type ElicitRequest struct {
	// Server is the MCP server asking (its configured name).
	Server string
	// Message is the server's own words: untrusted text.
	Message string
	// Schema is the requested schema as the server sent it: a flat object
	// of primitive properties.
	Schema json.RawMessage
}

// ElicitAnswer is the person's answer. Content is set only for accept and
// already matches the requested schema.
type ElicitAnswer struct {
	Action  ElicitAction
	Content map[string]any
	// Reason says in words why nobody was asked (no terminal, two sessions
	// sharing the server): for logs.
	Reason string
}

// Elicitor asks the person behind a session for what a running tool needs.
// It returns when the person answered, declined or cancelled, or ctx ended.
type Elicitor interface {
	Elicit(ctx context.Context, req ElicitRequest) (ElicitAnswer, error)
}

type elicitorKey struct{}

// WithElicitor returns a context whose tool calls may ask e.
func WithElicitor(ctx context.Context, e Elicitor) context.Context {
	return context.WithValue(ctx, elicitorKey{}, e)
}

// ElicitorFrom returns the elicitor a call's context carries, or nil.
func ElicitorFrom(ctx context.Context) Elicitor {
	e, _ := ctx.Value(elicitorKey{}).(Elicitor)
	return e
}
