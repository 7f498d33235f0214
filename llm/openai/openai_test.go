package openai_test

import (
	"context"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
)

const (
	testKey   = "sk-test-SECRET123"
	testModel = "gpt-test"
)

var price = config.Model{Input: 2.5, Output: 10, CacheRead: 1.25, CacheWrite: 3}

func newProvider(t *testing.T, srv *llmtest.Server, edit ...func(*config.Provider)) *openai.Provider {
	t.Helper()
	cfg := config.Provider{
		Type:    "openai",
		BaseURL: srv.URL() + "/v1",
		APIKey:  testKey,
		Models:  map[string]config.Model{testModel: price},
	}
	for _, e := range edit {
		e(&cfg)
	}
	p, err := openai.New("oai", cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func userRequest(stream bool) *llm.Request {
	return &llm.Request{
		Model:    testModel,
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You are terse."}, {Role: llm.RoleUser, Content: "Hi"}},
		Stream:   stream,
	}
}

// modes runs f as two subtests, without and with streaming.
func modes(t *testing.T, f func(t *testing.T, stream bool)) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		name := "plain"
		if stream {
			name = "streamed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, stream)
		})
	}
}

func TestAnswersBecomeNeutralResponses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  llmtest.Reply
		want   llm.Message
		finish llm.FinishReason
	}{
		{"text is returned as the assistant's content",
			llmtest.Reply{Text: "Hello there, how can I help? ✓"},
			llm.Message{Role: llm.RoleAssistant, Content: "Hello there, how can I help? ✓"}, llm.FinishStop},
		{"one tool call keeps its id, name and arguments",
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "search", Arguments: `{"q":"weather in Zürich"}`}}, ChunkSize: 3},
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_a", Name: "search", Arguments: `{"q":"weather in Zürich"}`}}}, llm.FinishToolCalls},
		{"several tool calls with text keep their order",
			llmtest.Reply{Text: "Let me check.", ChunkSize: 2, ToolCalls: []llmtest.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo","unit":"celsius"}`},
				{ID: "call_2", Name: "get_time", Arguments: `{"tz":"Europe/Oslo"}`},
				{ID: "call_3", Name: "noop", Arguments: `{}`}}},
			llm.Message{Role: llm.RoleAssistant, Content: "Let me check.", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo","unit":"celsius"}`},
				{ID: "call_2", Name: "get_time", Arguments: `{"tz":"Europe/Oslo"}`},
				{ID: "call_3", Name: "noop", Arguments: `{}`}}}, llm.FinishToolCalls},
		{"malformed arguments are passed through raw",
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_m", Name: "write", Arguments: `{"path": "/tmp/x", "text": "unterminated`}}},
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_m", Name: "write", Arguments: `{"path": "/tmp/x", "text": "unterminated`}}}, llm.FinishToolCalls},
		{"an empty answer is a valid response",
			llmtest.Reply{}, llm.Message{Role: llm.RoleAssistant}, llm.FinishStop},
		{"a tool call answered with stop still counts as tool calls",
			llmtest.Reply{Finish: "stop", ToolCalls: []llmtest.ToolCall{{ID: "call_s", Name: "f", Arguments: `{}`}}},
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_s", Name: "f", Arguments: `{}`}}}, llm.FinishToolCalls},
		{"the length limit is reported",
			llmtest.Reply{Text: "cut off", Finish: "length"},
			llm.Message{Role: llm.RoleAssistant, Content: "cut off"}, llm.FinishLength},
		{"a content filter is reported",
			llmtest.Reply{Finish: "content_filter"}, llm.Message{Role: llm.RoleAssistant}, llm.FinishFilter},
		{"an unknown finish reason is other",
			llmtest.Reply{Text: "x", Finish: "eos_token"}, llm.Message{Role: llm.RoleAssistant, Content: "x"}, llm.FinishOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			modes(t, func(t *testing.T, stream bool) {
				srv := llmtest.NewServer(t, tt.reply)
				resp, err := newProvider(t, srv).Complete(context.Background(), userRequest(stream))
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if !reflect.DeepEqual(resp.Message, tt.want) {
					t.Errorf("message = %+v, want %+v", resp.Message, tt.want)
				}
				if resp.FinishReason != tt.finish {
					t.Errorf("finish = %q, want %q", resp.FinishReason, tt.finish)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		})
	}
}

func TestStreamedTextReachesOnTextAsItArrives(t *testing.T) {
	t.Parallel()
	const text = "The quick brown fox jumps over the lazy dog."
	srv := llmtest.NewServer(t, llmtest.Reply{Text: text, ChunkSize: 4})
	var mu sync.Mutex
	var deltas []string
	req := userRequest(true)
	req.OnText = func(d string) {
		mu.Lock()
		defer mu.Unlock()
		deltas = append(deltas, d)
	}
	resp, err := newProvider(t, srv).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "") != text || len(deltas) != (len(text)+3)/4 || resp.Message.Content != text {
		t.Errorf("deltas %q, content %q", deltas, resp.Message.Content)
	}
	if rec := srv.Last(); !rec.Stream || !rec.IncludeUsage {
		t.Errorf("stream %v, include_usage %v: want both", rec.Stream, rec.IncludeUsage)
	}
}

func TestUsageAndCost(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, stream bool) {
		srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok", Usage: &llmtest.Usage{Input: 1000, Output: 200, CacheRead: 5000, CacheWrite: 100}})
		resp, err := newProvider(t, srv).Complete(context.Background(), userRequest(stream))
		if err != nil {
			t.Fatal(err)
		}
		u := resp.Usage
		if u.InputTokens != 1000 || u.OutputTokens != 200 || u.CacheReadTokens != 5000 || u.CacheWriteTokens != 100 {
			t.Errorf("usage = %+v, want 1000 in, 200 out, 5000 cache read, 100 cache write", u)
		}
		want := (1000*2.5 + 200*10 + 5000*1.25 + 100*3) / 1e6
		if math.Abs(u.CostUSD-want) > 1e-12 {
			t.Errorf("cost = %v, want %v", u.CostUSD, want)
		}
		if resp.Provider != "oai" || resp.Model != testModel || resp.Latency <= 0 {
			t.Errorf("provider, model, latency = %q, %q, %v", resp.Provider, resp.Model, resp.Latency)
		}
	})
}

func TestUnpricedModelCostsNothing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	req := userRequest(false)
	req.Model = "gpt-unlisted"
	resp, err := newProvider(t, srv).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.CostUSD != 0 {
		t.Errorf("usage = %+v, want tokens counted and cost 0", resp.Usage)
	}
}

func TestNewRefusesABaseURLThatIsNotHTTP(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"localhost:11434", "ftp://example.com/v1", "://"} {
		if _, err := openai.New("x", config.Provider{BaseURL: base}); err == nil {
			t.Errorf("New(%q) succeeded", base)
		}
	}
	if p, err := openai.New("x", config.Provider{}); err != nil || p.Name() != "x" {
		t.Errorf("default base URL: %v", err)
	}
}

func TestStreamFalseInTheConfigMakesPlainCalls(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "plain"})
	off := false
	p, err := openai.New("local", config.Provider{Type: "openai", BaseURL: srv.URL() + "/v1/", Stream: &off})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), &llm.Request{Model: "m", Stream: true,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "plain" || srv.Requests()[0].Stream {
		t.Fatalf("content %q, streamed %v", resp.Message.Content, srv.Requests()[0].Stream)
	}
}
