// Package tools is how an agent session reaches the outside world. Every
// source of tools — MCP servers, REST endpoints — is a Provider; an
// Orchestrator merges them under namespaced names, validates arguments
// against each tool's JSON Schema, waits in named queues, answers repeated
// calls from a cache, bounds calls with timeouts, logs each call and hands
// oversized results to a hook.
package tools

import (
	"context"
	"encoding/json"
	"strings"
	"time"
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
	// Remote is the tool's name at its source ("search_code" for
	// github__search_code), for logs; "" means Name.
	Remote string
	// Timeout bounds each call of the tool; 0 leaves it to the caller.
	Timeout time.Duration
	// CacheTTL is how long a successful result is reused for a call with
	// the same arguments; 0 disables caching.
	CacheTTL time.Duration
	// Approval, when set, makes each call wait for a person's yes.
	Approval *Approval
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
// concurrent calls. Embed Base for the optional methods' no-op forms.
type Provider interface {
	// Namespace is the provider's name in logs ("github", "rest").
	Namespace() string
	// Tools lists the provider's tools with their full names, as they are
	// now. It should be cheap: the orchestrator calls it again after each
	// change a Notifier announces.
	Tools(ctx context.Context) ([]Tool, error)
	// Call runs one tool. A returned error is a failure of the tool (the
	// model is told); a tool that wants to report a handled failure returns
	// a Result with IsError instead. Call must return soon after ctx ends.
	Call(ctx context.Context, call Call) (Result, error)
	// Instructions is guidance for the model on using the provider's tools
	// (an MCP server's instructions); it joins the system prompt of the
	// agents offered at least one of them. "" for none.
	Instructions() string
	// Warmup gets the provider ready (connects, lists tools) before the
	// first session needs it. A provider that cannot get ready returns an
	// error and keeps trying on its own; its tools are absent meanwhile.
	Warmup(ctx context.Context) error
	// Close stops the provider and releases what it holds (processes,
	// connections). Calls after Close fail.
	Close() error
}

// Notifier is implemented by providers whose tool list changes while they
// run: an MCP server that starts late, restarts, or announces
// notifications/tools/list_changed. The orchestrator registers f once; the
// provider calls it, from any goroutine, after each change.
type Notifier interface {
	OnToolsChanged(f func())
}

// Base gives a Provider the no-op forms of Instructions, Warmup and Close.
type Base struct{}

// Instructions returns "".
func (Base) Instructions() string { return "" }

// Warmup does nothing.
func (Base) Warmup(context.Context) error { return nil }

// Close does nothing.
func (Base) Close() error { return nil }

// Separator joins a namespace and a tool name.
const Separator = "__"

// maxNameLen is the longest tool name every supported model API accepts.
const maxNameLen = 64

// Name builds the namespaced name of a tool, replacing characters the model
// APIs refuse (anything but letters, digits, '_' and '-') with '_' and
// truncating to maxNameLen.
func Name(namespace, tool string) string {
	n := sanitize(namespace) + Separator + sanitize(tool)
	if len(n) > maxNameLen {
		n = n[:maxNameLen]
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
