package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

func ptr[T any](v T) *T { return &v }

// conversation is a request with every kind of message and setting.
func conversation(stream bool) *llm.Request {
	return &llm.Request{
		Model: testModel,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are a weather bot."},
			{Role: llm.RoleUser, Content: "Weather in Oslo and Bergen?"},
			{Role: llm.RoleAssistant, Content: "Checking both.", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
				{ID: "call_2", Name: "get_weather", Arguments: `{"city": Bergen}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "rain, 9°C"},
			{Role: llm.RoleTool, ToolCallID: "call_2", ToolName: "get_weather", Content: "arguments are not valid JSON", IsError: true},
			{Role: llm.RoleAssistant, Content: ""},
			{Role: llm.RoleUser, Content: "Thanks"},
		},
		Tools: []llm.ToolDef{
			{Name: "get_weather", Description: "Current weather for a city", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "no_args", Description: "Takes nothing"},
		},
		ToolChoice:      llm.ToolChoiceRequired,
		Temperature:     ptr(0.2),
		TopP:            ptr(0.9),
		MaxOutputTokens: 512,
		Stream:          stream,
	}
}

func TestRequestIsMappedOntoChatCompletions(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, stream bool) {
		srv := llmtest.NewServer(t, llmtest.Reply{Text: "You're welcome."})
		if _, err := newProvider(t, srv).Complete(context.Background(), conversation(stream)); err != nil {
			t.Fatal(err)
		}
		rec := srv.Last()
		if rec.Format != llmtest.FormatOpenAI || rec.Path != "/v1/chat/completions" || rec.Model != testModel || rec.Stream != stream {
			t.Errorf("format, path, model, stream = %q %q %q %v", rec.Format, rec.Path, rec.Model, rec.Stream)
		}
		if rec.System != "You are a weather bot." {
			t.Errorf("system = %q", rec.System)
		}
		want := []llm.Message{
			{Role: llm.RoleUser, Content: "Weather in Oslo and Bergen?"},
			{Role: llm.RoleAssistant, Content: "Checking both.", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
				// Replayed malformed arguments become {} (see sentArguments).
				{ID: "call_2", Name: "get_weather", Arguments: `{}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "rain, 9°C"},
			{Role: llm.RoleTool, ToolCallID: "call_2", ToolName: "get_weather", Content: "arguments are not valid JSON"},
			{Role: llm.RoleAssistant},
			{Role: llm.RoleUser, Content: "Thanks"},
		}
		if !reflect.DeepEqual(rec.Messages, want) {
			t.Errorf("messages =\n%+v\nwant\n%+v", rec.Messages, want)
		}
		if !reflect.DeepEqual(rec.ToolNames, []string{"get_weather", "no_args"}) || rec.Tools[0].Description != "Current weather for a city" {
			t.Errorf("tools = %+v", rec.Tools)
		}
		var schema map[string]any
		if err := json.Unmarshal(rec.Tools[1].Schema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("a tool without schema got %s, want an object schema", rec.Tools[1].Schema)
		}
		if rec.ToolChoice != "required" {
			t.Errorf("tool_choice = %q", rec.ToolChoice)
		}
		if rec.Temperature == nil || *rec.Temperature != 0.2 || rec.TopP == nil || *rec.TopP != 0.9 || rec.MaxTokens != 512 {
			t.Errorf("temperature, top_p, max = %v %v %d", rec.Temperature, rec.TopP, rec.MaxTokens)
		}
		var body map[string]any
		if err := rec.Decode(&body); err != nil {
			t.Fatal(err)
		}
		if body["max_tokens"] != 512.0 || body["max_completion_tokens"] != nil {
			t.Errorf("a compatible server gets max_tokens: %v / %v", body["max_tokens"], body["max_completion_tokens"])
		}
		if rec.IncludeUsage != stream {
			t.Errorf("include_usage = %v", rec.IncludeUsage)
		}
	})
}

func TestToolChoiceIsSentOnlyWhenItSaysSomething(t *testing.T) {
	t.Parallel()
	tool := []llm.ToolDef{{Name: "f", Schema: json.RawMessage(`{"type":"object"}`)}}
	tests := []struct {
		name   string
		tools  []llm.ToolDef
		choice llm.ToolChoice
		want   string
	}{
		{"auto is left to the server", tool, llm.ToolChoiceAuto, ""},
		{"required is sent", tool, llm.ToolChoiceRequired, "required"},
		{"none is sent", tool, llm.ToolChoiceNone, "none"},
		{"a choice without tools is not sent", nil, llm.ToolChoiceRequired, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			req := userRequest(false)
			req.Tools, req.ToolChoice = tt.tools, tt.choice
			if _, err := newProvider(t, srv).Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if got := srv.Last().ToolChoice; got != tt.want {
				t.Errorf("tool_choice = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAuthAndHeaders(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{}, llmtest.Reply{})
	p := newProvider(t, srv, func(c *config.Provider) {
		c.Headers = map[string]config.Secret{"HTTP-Referer": "https://example.com", "X-Title": "slackbot"}
	})
	if _, err := p.Complete(context.Background(), userRequest(false)); err != nil {
		t.Fatal(err)
	}
	rec := srv.Last()
	if rec.Header.Get("Authorization") != "Bearer "+testKey || rec.Header.Get("X-Title") != "slackbot" || rec.Header.Get("HTTP-Referer") != "https://example.com" {
		t.Errorf("headers = %v", rec.Header)
	}
}

// Not parallel: it sets the environment.
func TestAnEmptyKeySendsNoAuthEvenWithOpenAIVariablesSet(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "local model"})
	p := newProvider(t, srv, func(c *config.Provider) { c.APIKey = "" })
	resp, err := p.Complete(context.Background(), userRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.Last()
	if resp.Message.Content != "local model" || rec.Header.Get("Authorization") != "" || rec.APIKey != "" {
		t.Errorf("content %q, Authorization %q", resp.Message.Content, rec.Header.Get("Authorization"))
	}
}

func TestARequestThatCannotBeMappedFailsBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*llm.Request)
	}{
		{"a schema that is not JSON", func(r *llm.Request) {
			r.Tools = []llm.ToolDef{{Name: "f", Schema: json.RawMessage(`{not json`)}}
		}},
		{"a tool result without a call id", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleTool, Content: "x"})
		}},
		{"an unknown role", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: "narrator", Content: "x"})
		}},
		{"no model", func(r *llm.Request) { r.Model = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			req := userRequest(false)
			tt.edit(req)
			_, err := newProvider(t, srv).Complete(context.Background(), req)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.ErrBadRequest {
				t.Fatalf("err = %v, want a bad request", err)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}
