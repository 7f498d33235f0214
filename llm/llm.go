// Package llm holds the provider-neutral vocabulary of a chat with a language
// model — messages, tool definitions, tool calls, usage — and the Provider
// interface that the openai and anthropic adapters implement. The agent loop
// speaks only these types, so a new wire format is one new adapter.
package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Role says who wrote a message.
type Role string

// The roles a conversation uses.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation.
//
// An assistant message carries the model's text and the tool calls it made;
// a tool message carries the result of one call, matched by ToolCallID.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// ToolName names the tool a RoleTool message answers. Some wire formats
	// want it; all of them tolerate it.
	ToolName string `json:"tool_name,omitempty"`
	// IsError marks a tool message that reports a failure (Anthropic's
	// is_error); other formats ignore it.
	IsError bool `json:"is_error,omitempty"`
	// Images travel with a user message, after its Content. A model that
	// does not read images gets NoVisionNote for each instead.
	Images []Image `json:"images,omitempty"`
}

// ToolCall is one call the model asked for. Arguments holds the raw text the
// model produced, which may not be valid JSON: the caller validates it and
// tells the model what was wrong.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDef describes a tool offered to the model. Schema is a JSON Schema
// object for the arguments.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}

// ToolChoice constrains whether the model must call a tool.
type ToolChoice string

// Tool choices. The zero value lets the model decide.
const (
	ToolChoiceAuto     ToolChoice = ""
	ToolChoiceRequired ToolChoice = "required"
	ToolChoiceNone     ToolChoice = "none"
)

// Request is one model call.
type Request struct {
	Model    string
	Messages []Message // a leading RoleSystem message is the system prompt
	Tools    []ToolDef
	// ToolChoice is a hint; adapters map it onto their wire format.
	ToolChoice      ToolChoice
	Temperature     *float64
	TopP            *float64
	MaxOutputTokens int
	// Stream asks for a streamed answer; the adapter accumulates it, so the
	// Response is the same either way.
	Stream bool
	// OnText, when set with Stream, receives text deltas as they arrive.
	OnText func(delta string)
}

// FinishReason is why the model stopped, normalised across wire formats.
type FinishReason string

// Finish reasons.
const (
	FinishStop      FinishReason = "stop"       // natural end of the answer
	FinishToolCalls FinishReason = "tool_calls" // the model wants tools run
	FinishLength    FinishReason = "length"     // max_output_tokens reached
	FinishFilter    FinishReason = "content_filter"
	FinishOther     FinishReason = "other"
)

// Usage counts tokens of one call and what they cost.
//
// InputTokens counts only the input tokens that were neither read from nor
// written to the provider's prompt cache (Anthropic's input_tokens; OpenAI's
// prompt_tokens minus the cached ones); CacheReadTokens and CacheWriteTokens
// count the rest, so the prompt's size is the sum of the three and each is
// priced once.
type Usage struct {
	InputTokens      int     `json:"input_tokens"`
	OutputTokens     int     `json:"output_tokens"`
	CacheReadTokens  int     `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int     `json:"cache_write_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
}

// Total is every token the call read or wrote, cache reads and writes
// included: the one count the bot shows, budgets and records.
func (u Usage) Total() int {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Add accumulates o into u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.CostUSD += o.CostUSD
}

// Response is the model's answer to a Request.
type Response struct {
	Message      Message // RoleAssistant
	FinishReason FinishReason
	Usage        Usage
	Provider     string // configured provider name that answered
	Model        string // model that answered
	Latency      time.Duration
}

// Provider is one configured model endpoint (an OpenAI-compatible server, or
// Anthropic). Implementations make exactly one attempt per call and report
// failures as *Error so that callers can decide whether to retry.
type Provider interface {
	// Name is the configured provider name, the part before "/" in
	// "provider/model".
	Name() string
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// MaxIdleConnsPerHost is how many idle connections a provider keeps to its
// endpoint: enough for the sessions of a busy bot to reuse theirs.
const MaxIdleConnsPerHost = 256
