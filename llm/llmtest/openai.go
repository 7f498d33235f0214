package llmtest

import (
	"encoding/json"
	"fmt"
	"time"
)

// The OpenAI Chat Completions wire shapes, field for field in the order the
// service sends them.

type oaCompletion struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Created           int64      `json:"created"`
	Model             string     `json:"model"`
	Choices           []oaChoice `json:"choices"`
	Usage             oaUsage    `json:"usage"`
	ServiceTier       string     `json:"service_tier"`
	SystemFingerprint string     `json:"system_fingerprint"`
}

type oaChoice struct {
	Index        int             `json:"index"`
	Message      oaReplyMessage  `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type oaReplyMessage struct {
	Role        string          `json:"role"`
	Content     *string         `json:"content"`
	ToolCalls   []oaToolCall    `json:"tool_calls,omitempty"`
	Refusal     json.RawMessage `json:"refusal"`
	Annotations []any           `json:"annotations"`
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
		AudioTokens      int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

type oaChunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	ServiceTier       string          `json:"service_tier"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []oaChunkChoice `json:"choices"`
	// Usage is present (null until the last chunk) only when the request
	// set stream_options.include_usage.
	Usage       json.RawMessage `json:"usage,omitempty"`
	Obfuscation string          `json:"obfuscation"`
}

type oaChunkChoice struct {
	Index        int             `json:"index"`
	Delta        oaDelta         `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type oaDelta struct {
	Role      string            `json:"role,omitempty"`
	Content   json.RawMessage   `json:"content,omitempty"`
	ToolCalls []oaToolCallDelta `json:"tool_calls,omitempty"`
	Refusal   json.RawMessage   `json:"refusal,omitempty"`
}

type oaToolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

var jsonNull = json.RawMessage("null")

func (r Reply) openaiFinish() string {
	switch {
	case r.Finish != "":
		return r.Finish
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func openaiUsage(u Usage) oaUsage {
	var o oaUsage
	o.PromptTokens = u.Input + u.CacheRead + u.CacheWrite
	o.CompletionTokens = u.Output
	o.TotalTokens = o.PromptTokens + o.CompletionTokens
	o.PromptTokensDetails.CachedTokens = u.CacheRead
	o.PromptTokensDetails.CacheWriteTokens = u.CacheWrite
	return o
}

func openaiCompletion(rec *Recorded, r Reply) oaCompletion {
	msg := oaReplyMessage{Role: "assistant", Refusal: jsonNull, Annotations: []any{}}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		text := r.Text
		msg.Content = &text
	}
	for i, c := range r.ToolCalls {
		var tc oaToolCall
		tc.ID, tc.Type = r.toolCallID("call_", rec.seq, i), "function"
		tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	return oaCompletion{
		ID:                fmt.Sprintf("chatcmpl-LLMTEST%06d", rec.seq),
		Object:            "chat.completion",
		Created:           time.Now().Unix(),
		Model:             rec.Model,
		Choices:           []oaChoice{{Index: 0, Message: msg, Logprobs: jsonNull, FinishReason: r.openaiFinish()}},
		Usage:             openaiUsage(r.usage()),
		ServiceTier:       "default",
		SystemFingerprint: "fp_llmtest",
	}
}

// openaiEvents renders a streamed answer as SSE events: a role chunk, text
// deltas, tool-call deltas (id, type and name first, then argument
// fragments), a chunk with finish_reason, a usage chunk when asked for, and
// [DONE].
func openaiEvents(rec *Recorded, r Reply) []string {
	base := oaChunk{
		ID:                fmt.Sprintf("chatcmpl-LLMTEST%06d", rec.seq),
		Object:            "chat.completion.chunk",
		Created:           time.Now().Unix(),
		Model:             rec.Model,
		ServiceTier:       "default",
		SystemFingerprint: "fp_llmtest",
	}
	if rec.IncludeUsage {
		base.Usage = jsonNull
	}
	var events []string
	emit := func(d oaDelta, finish *string) {
		c := base
		c.Choices = []oaChunkChoice{{Index: 0, Delta: d, Logprobs: jsonNull, FinishReason: finish}}
		c.Obfuscation = obfuscation(len(events))
		events = append(events, "data: "+string(marshal(c))+"\n\n")
	}
	first := oaDelta{Role: "assistant", Content: json.RawMessage(`""`), Refusal: jsonNull}
	if r.Text == "" && len(r.ToolCalls) > 0 {
		first.Content = jsonNull
	} else {
		emit(first, nil)
	}
	for _, piece := range chunks(r.Text, r.ChunkSize) {
		emit(oaDelta{Content: marshal(piece)}, nil)
	}
	for i, call := range r.ToolCalls {
		var head oaToolCallDelta
		head.Index, head.ID, head.Type = i, r.toolCallID("call_", rec.seq, i), "function"
		head.Function.Name = call.Name
		d := oaDelta{ToolCalls: []oaToolCallDelta{head}}
		if i == 0 && r.Text == "" {
			d.Role, d.Content, d.Refusal = first.Role, first.Content, first.Refusal
		}
		emit(d, nil)
		for _, piece := range chunks(call.Arguments, r.ChunkSize) {
			var frag oaToolCallDelta
			frag.Index = i
			frag.Function.Arguments = piece
			emit(oaDelta{ToolCalls: []oaToolCallDelta{frag}}, nil)
		}
	}
	if r.StreamError != "" {
		status := errorStatus(FormatOpenAI, Reply{ErrorType: r.StreamError})
		events = append(events, "data: "+string(marshal(errorBody(FormatOpenAI, Reply{ErrorType: r.StreamError, ErrorMessage: r.ErrorMessage}, status)))+"\n\n")
		return events
	}
	finish := r.openaiFinish()
	emit(oaDelta{}, &finish)
	if rec.IncludeUsage {
		c := base
		c.Choices = []oaChunkChoice{}
		c.Usage = marshal(openaiUsage(r.usage()))
		c.Obfuscation = obfuscation(len(events))
		events = append(events, "data: "+string(marshal(c))+"\n\n")
	}
	return append(events, "data: [DONE]\n\n")
}

// obfuscation mimics the padding field OpenAI adds to every chunk.
func obfuscation(i int) string {
	const pad = "kQx3Lm9Tz"
	return pad[:1+i%len(pad)]
}
