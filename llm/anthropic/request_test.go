package anthropic_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// wireBody is the part of a Messages request body the mapping tests read.
type wireBody struct {
	System       []map[string]any `json:"system"`
	CacheControl map[string]any   `json:"cache_control"`
	Messages     []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Inner     []struct {
				Text string `json:"text"`
			} `json:"content"` // of a tool_result
		} `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// block is a compact view of a content block for comparisons.
type block struct{ Type, Text, ID, Input string }

func TestRequestMapping(t *testing.T) {
	t.Parallel()
	temp := 0.2
	req := &llm.Request{
		Model: testModel,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are a bot."},
			{Role: llm.RoleUser, Content: "Find slack bots"},
			{Role: llm.RoleAssistant, Content: "Looking.", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "search", Arguments: `{"query":"slack"}`},
				{ID: "functions.fetch:1", Name: "fetch", Arguments: `{"url": bad`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "search", Content: "3 results"},
			{Role: llm.RoleTool, ToolCallID: "functions.fetch:1", ToolName: "fetch", Content: "arguments are not valid JSON", IsError: true},
			{Role: llm.RoleUser, Content: "Also check the docs"},
			{Role: llm.RoleSystem, Content: "Answer in one line."},
			{Role: llm.RoleAssistant, Content: "Sure."},
			{Role: llm.RoleAssistant}, // says nothing: left out
			{Role: llm.RoleUser, Content: "Thanks"},
		},
		Tools: []llm.ToolDef{
			{Name: "search", Description: "Search", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
			{Name: "fetch", Schema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
			{Name: "now"},
		},
		ToolChoice:  llm.ToolChoiceRequired,
		Temperature: &temp,
	}
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	p := newProvider(t, srv.URL(), func(c *config.Provider) { c.Headers = map[string]config.Secret{"X-Title": "slackbot"} })
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	rec := srv.Last()
	if rec.Invalid != "" {
		t.Fatalf("the server refused the request: %s", rec.Invalid)
	}

	// A system message after the conversation began travels as a user turn
	// (see the last tool-result turn below), not in the system prompt.
	if rec.System != "You are a bot." {
		t.Errorf("system = %q", rec.System)
	}
	if rec.MaxTokens != anthropic.DefaultMaxTokens {
		t.Errorf("max_tokens = %d, want the default %d", rec.MaxTokens, anthropic.DefaultMaxTokens)
	}
	if rec.ToolChoice != "required" || !reflect.DeepEqual(rec.ToolNames, []string{"search", "fetch", "now"}) {
		t.Errorf("tool choice %q, tools %v", rec.ToolChoice, rec.ToolNames)
	}
	if rec.Temperature != nil || rec.TopP != nil {
		t.Errorf("sampling parameters sent to API version 2026-10-21: temperature %v, top_p %v", rec.Temperature, rec.TopP)
	}
	if rec.APIKey != testKey || rec.Header.Get("X-Title") != "slackbot" || rec.Header.Get("Anthropic-Version") != "2026-10-21" {
		t.Errorf("key %q, X-Title %q, anthropic-version %q", rec.APIKey, rec.Header.Get("X-Title"), rec.Header.Get("Anthropic-Version"))
	}
	if rec.Model != testModel {
		t.Errorf("model = %q", rec.Model)
	}

	var body wireBody
	if err := rec.Decode(&body); err != nil {
		t.Fatal(err)
	}
	if len(body.System) != 1 || body.CacheControl["type"] != "ephemeral" {
		t.Errorf("system blocks %v, cache_control %v: want one block and automatic caching", body.System, body.CacheControl)
	}
	want := []struct {
		role   string
		blocks []block
	}{
		{"user", []block{{Type: "text", Text: "Find slack bots"}}},
		{"assistant", []block{
			{Type: "text", Text: "Looking."},
			{Type: "tool_use", ID: "call_1", Input: `{"query":"slack"}`},
			{Type: "tool_use", ID: "functions_fetch_1", Input: `{"malformed_arguments":"{\"url\": bad"}`},
		}},
		{"user", []block{
			{Type: "tool_result", ID: "call_1", Text: "3 results"},
			{Type: "tool_result!", ID: "functions_fetch_1", Text: "arguments are not valid JSON"},
			{Type: "text", Text: "Also check the docs"},
			{Type: "text", Text: "Answer in one line."},
		}},
		{"assistant", []block{{Type: "text", Text: "Sure."}}},
		{"user", []block{{Type: "text", Text: "Thanks"}}},
	}
	if len(body.Messages) != len(want) {
		t.Fatalf("%d wire messages, want %d: %s", len(body.Messages), len(want), rec.Body)
	}
	for i, w := range want {
		m := body.Messages[i]
		var got []block
		for _, c := range m.Content {
			b := block{Type: c.Type, Text: c.Text, ID: c.ID, Input: string(c.Input)}
			if c.Type == "tool_result" {
				b.ID = c.ToolUseID
				for _, in := range c.Inner {
					b.Text += in.Text
				}
				if c.IsError {
					b.Type += "!"
				}
			}
			got = append(got, b)
		}
		if m.Role != w.role || !reflect.DeepEqual(got, w.blocks) {
			t.Errorf("message %d = %s %+v, want %s %+v", i, m.Role, got, w.role, w.blocks)
		}
	}
	var results []string
	for _, m := range rec.Messages {
		if m.Role == llm.RoleTool {
			results = append(results, m.Content)
		}
	}
	if !reflect.DeepEqual(results, []string{"3 results", "arguments are not valid JSON"}) {
		t.Errorf("tool results = %q", results)
	}
	if s := string(body.Tools[2].InputSchema); s != `{"type":"object","properties":{}}` {
		t.Errorf("a tool without a schema was sent %s", s)
	}
}

func TestToolChoice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		choice llm.ToolChoice
		tools  bool
		want   string
	}{
		{"auto sends no tool_choice", llm.ToolChoiceAuto, true, ""},
		{"required becomes any", llm.ToolChoiceRequired, true, "required"},
		{"none stays none", llm.ToolChoiceNone, true, "none"},
		{"a choice without tools is left out", llm.ToolChoiceRequired, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			req := userRequest(false)
			req.ToolChoice = tt.choice
			if !tt.tools {
				req.Tools = nil
			}
			if _, err := newProvider(t, srv.URL()).Complete(context.Background(), req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got := srv.Last().ToolChoice; got != tt.want {
				t.Errorf("tool choice = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSamplingParameters(t *testing.T) {
	t.Parallel()
	temp, topP := 0.3, 0.9
	tests := []struct {
		name        string
		version     string
		temp, topP  *float64
		wantT, want *float64
	}{
		{name: "the current API version gets neither", temp: &temp, topP: &topP},
		{name: "a pinned 2023-06-01 gets temperature alone when only it is set", version: "2023-06-01", temp: &temp, wantT: &temp},
		{name: "a pinned 2023-06-01 gets top_p alone when only it is set", version: "2023-06-01", topP: &topP, want: &topP},
		{name: "a pinned 2023-06-01 gets both when both are set", version: "2023-06-01", temp: &temp, topP: &topP, wantT: &temp, want: &topP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			p := newProvider(t, srv.URL(), func(c *config.Provider) {
				if tt.version != "" {
					c.Headers = map[string]config.Secret{"anthropic-version": config.Secret(tt.version)}
				}
			})
			req := userRequest(true)
			req.Temperature, req.TopP = tt.temp, tt.topP
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			rec := srv.Last()
			if !reflect.DeepEqual(rec.Temperature, tt.wantT) || !reflect.DeepEqual(rec.TopP, tt.want) {
				t.Errorf("temperature %v, top_p %v; want %v, %v", rec.Temperature, rec.TopP, tt.wantT, tt.want)
			}
			if tt.version != "" && rec.Header.Get("Anthropic-Version") != tt.version {
				t.Errorf("anthropic-version = %q", rec.Header.Get("Anthropic-Version"))
			}
		})
	}
}

func TestARequestThatCannotBeMappedIsABadRequest(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	req := userRequest(false)
	req.Tools = []llm.ToolDef{{Name: "broken", Schema: json.RawMessage(`[1,2]`)}}
	_, err := newProvider(t, srv.URL()).Complete(context.Background(), req)
	checkError(t, err, llm.ErrBadRequest)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
