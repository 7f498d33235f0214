package llmtest

import (
	"encoding/json"
	"fmt"
)

// The Anthropic Messages wire shapes, field for field in the order the
// service sends them.

type anReply struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anContentBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anUsage          `json:"usage"`
}

type anContentBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type anUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreation            *struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation,omitempty"`
	OutputTokens int    `json:"output_tokens"`
	ServiceTier  string `json:"service_tier,omitempty"`
}

func (r Reply) anthropicStop() string {
	switch {
	case r.Finish != "":
		return r.Finish
	case len(r.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func anthropicUsage(u Usage, output int) anUsage {
	a := anUsage{
		InputTokens:              u.Input,
		CacheCreationInputTokens: u.CacheWrite,
		CacheReadInputTokens:     u.CacheRead,
		OutputTokens:             output,
		ServiceTier:              "standard",
	}
	a.CacheCreation = &struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	}{Ephemeral5m: u.CacheWrite}
	return a
}

// anthropicInput is the input object of a non-streamed tool_use block.
func anthropicInput(args string) json.RawMessage {
	switch {
	case args == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(args)):
		return json.RawMessage(args)
	}
	return marshal(args)
}

func anthropicMessage(rec *Recorded, r Reply) anReply {
	stop := r.anthropicStop()
	m := anReply{
		ID:         fmt.Sprintf("msg_01LLMTEST%06d", rec.seq),
		Type:       "message",
		Role:       "assistant",
		Model:      rec.Model,
		Content:    []anContentBlock{},
		StopReason: &stop,
		Usage:      anthropicUsage(r.usage(), r.usage().Output),
	}
	if r.Text != "" {
		text := r.Text
		m.Content = append(m.Content, anContentBlock{Type: "text", Text: &text})
	}
	for i, c := range r.ToolCalls {
		m.Content = append(m.Content, anContentBlock{Type: "tool_use", ID: r.toolCallID("toolu_01", rec.seq, i), Name: c.Name, Input: anthropicInput(c.Arguments)})
	}
	return m
}

// anEvent is one streamed event; the fields a type does not use are
// omitted.
type anEvent struct {
	Type         string          `json:"type"`
	Message      *anReply        `json:"message,omitempty"`
	Index        *int            `json:"index,omitempty"`
	ContentBlock *anContentBlock `json:"content_block,omitempty"`
	Delta        any             `json:"delta,omitempty"`
	Usage        *anUsage        `json:"usage,omitempty"`
}

type anDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

type anStopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

func sse(event string, data any) string {
	return "event: " + event + "\ndata: " + string(marshal(data)) + "\n\n"
}

// anthropicEvents renders a streamed answer: message_start, then for each
// content block content_block_start, deltas (text_delta or input_json_delta
// with partial_json) and content_block_stop, a ping after the first block
// start, message_delta with stop_reason and cumulative usage, message_stop.
func anthropicEvents(rec *Recorded, r Reply) []string {
	u := r.usage()
	start := anthropicMessage(rec, Reply{Usage: &u})
	start.StopReason = nil
	start.Usage.OutputTokens = min(1, u.Output)
	events := []string{sse("message_start", anEvent{Type: "message_start", Message: &start})}

	index := 0
	block := func(cb anContentBlock, deltas []anDelta) {
		i := index
		events = append(events, sse("content_block_start", anEvent{Type: "content_block_start", Index: &i, ContentBlock: &cb}))
		if i == 0 {
			events = append(events, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
		for _, d := range deltas {
			events = append(events, sse("content_block_delta", anEvent{Type: "content_block_delta", Index: &i, Delta: d}))
		}
		events = append(events, sse("content_block_stop", anEvent{Type: "content_block_stop", Index: &i}))
		index++
	}
	if r.Text != "" {
		var deltas []anDelta
		for _, piece := range chunks(r.Text, r.ChunkSize) {
			deltas = append(deltas, anDelta{Type: "text_delta", Text: &piece})
		}
		empty := ""
		block(anContentBlock{Type: "text", Text: &empty}, deltas)
	}
	for i, c := range r.ToolCalls {
		empty := ""
		deltas := []anDelta{{Type: "input_json_delta", PartialJSON: &empty}}
		for _, piece := range chunks(c.Arguments, r.ChunkSize) {
			deltas = append(deltas, anDelta{Type: "input_json_delta", PartialJSON: &piece})
		}
		block(anContentBlock{Type: "tool_use", ID: r.toolCallID("toolu_01", rec.seq, i), Name: c.Name, Input: json.RawMessage("{}")}, deltas)
	}
	if r.StreamError != "" {
		status := errorStatus(FormatAnthropic, Reply{ErrorType: r.StreamError})
		body := errorBody(FormatAnthropic, Reply{ErrorType: r.StreamError, ErrorMessage: r.ErrorMessage}, status)
		return append(events, sse("error", body))
	}
	usage := anthropicUsage(u, u.Output)
	usage.CacheCreation, usage.ServiceTier = nil, ""
	return append(events,
		sse("message_delta", anEvent{Type: "message_delta", Delta: anStopDelta{StopReason: r.anthropicStop()}, Usage: &usage}),
		sse("message_stop", anEvent{Type: "message_stop"}))
}
