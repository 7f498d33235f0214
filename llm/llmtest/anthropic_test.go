package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

func anthropicClient(s *llmtest.Server) *anthropic.Client {
	c := anthropic.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("sk-ant-llmtest"), option.WithMaxRetries(0))
	return &c
}

func anthropicParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 256,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
}

func assertMessages(t *testing.T, got, want []llm.Message) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("messages:\n%s\nwant:\n%s", g, w)
	}
}

// streamAnthropic accumulates a streamed call; it also collects the raw
// partial_json of each block, since Accumulate drops malformed input.
func streamAnthropic(t *testing.T, s *llmtest.Server, p anthropic.MessageNewParams) (anthropic.Message, map[int64]string, int, error) {
	t.Helper()
	stream := anthropicClient(s).Messages.NewStreaming(context.Background(), p)
	defer stream.Close()
	var msg anthropic.Message
	raw := map[int64]string{}
	deltas := 0
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("accumulate: %v", err)
		}
		if ev.Type == "content_block_delta" {
			deltas++
			raw[ev.Index] += ev.Delta.PartialJSON
		}
	}
	return msg, raw, deltas, stream.Err()
}

func TestAnthropicClientReadsScriptedAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
		text  string
		calls [][2]string
		stop  string
	}{
		{"plain text arrives whole", llmtest.Reply{Text: "Grüße aus Zürich ✓"}, "Grüße aus Zürich ✓", nil, "end_turn"},
		{"text and two tool calls arrive in order", llmtest.Reply{Text: "Checking.", ToolCalls: []llmtest.ToolCall{
			{Name: "get_weather", Arguments: `{"city":"Bern"}`}, {ID: "toolu_fixed", Name: "get_time", Arguments: `{"tz":"UTC"}`}}},
			"Checking.", [][2]string{{"get_weather", `{"city":"Bern"}`}, {"get_time", `{"tz":"UTC"}`}}, "tool_use"},
		{"a tool call without text", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "noop"}}}, "", [][2]string{{"noop", `{}`}}, "tool_use"},
		{"stop reason can be overridden", llmtest.Reply{Text: "cut", Finish: "max_tokens"}, "cut", nil, "max_tokens"},
		{"an empty answer is still an answer", llmtest.Reply{}, "", nil, "end_turn"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += " when streamed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s := llmtest.NewServer(t, tt.reply)
				var msg anthropic.Message
				if stream {
					var deltas int
					var err error
					msg, _, deltas, err = streamAnthropic(t, s, anthropicParams())
					if err != nil {
						t.Fatal(err)
					}
					if len(tt.text) > 5 && deltas < 2 {
						t.Errorf("got %d deltas, want the text split", deltas)
					}
				} else {
					res, err := anthropicClient(s).Messages.New(context.Background(), anthropicParams())
					if err != nil {
						t.Fatal(err)
					}
					msg = *res
				}
				var text strings.Builder
				var calls [][2]string
				for _, b := range msg.Content {
					switch b.Type {
					case "text":
						text.WriteString(b.Text)
					case "tool_use":
						if b.ID == "" {
							t.Errorf("tool_use without id")
						}
						calls = append(calls, [2]string{b.Name, string(b.Input)})
					}
				}
				if text.String() != tt.text || string(msg.StopReason) != tt.stop {
					t.Errorf("text, stop = %q %q, want %q %q", text.String(), msg.StopReason, tt.text, tt.stop)
				}
				if !reflect.DeepEqual(calls, tt.calls) {
					t.Errorf("calls = %v, want %v", calls, tt.calls)
				}
				if msg.Usage.InputTokens != 120 || msg.Usage.OutputTokens != 30 {
					t.Errorf("usage = %d/%d", msg.Usage.InputTokens, msg.Usage.OutputTokens)
				}
				if len(tt.calls) == 2 && msg.Content[2].ID != "toolu_fixed" {
					t.Errorf("scripted id lost: %q", msg.Content[2].ID)
				}
			})
		}
	}
}

func TestAnthropicStreamCarriesMalformedArgumentsRaw(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "f", Arguments: `{"path": "/tmp`}}, ChunkSize: 3})
	_, raw, deltas, err := streamAnthropic(t, s, anthropicParams())
	if err != nil {
		t.Fatal(err)
	}
	if raw[0] != `{"path": "/tmp` || deltas < 5 {
		t.Errorf("raw = %q over %d deltas", raw[0], deltas)
	}
}

func TestAnthropicUsageIncludesCache(t *testing.T) {
	t.Parallel()
	u := &llmtest.Usage{Input: 10, Output: 5, CacheRead: 300, CacheWrite: 40}
	s := llmtest.NewServer(t, llmtest.Reply{Text: "x", Usage: u}, llmtest.Reply{Text: "x", Usage: u})
	for _, stream := range []bool{false, true} {
		var msg anthropic.Message
		var err error
		if stream {
			msg, _, _, err = streamAnthropic(t, s, anthropicParams())
		} else {
			var res *anthropic.Message
			res, err = anthropicClient(s).Messages.New(context.Background(), anthropicParams())
			if res != nil {
				msg = *res
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		got := msg.Usage
		if got.InputTokens != 10 || got.OutputTokens != 5 || got.CacheReadInputTokens != 300 || got.CacheCreationInputTokens != 40 {
			t.Errorf("stream=%v usage = %+v", stream, got)
		}
	}
}

func TestAnthropicClientSeesErrorsAsTheServiceSendsThem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  llmtest.Reply
		status int
		typ    string
	}{
		{"overloaded is a 529", llmtest.Reply{ErrorType: "overloaded_error"}, 529, "overloaded_error"},
		{"rate limit is a 429", llmtest.Reply{ErrorType: "rate_limit_error", RetryAfter: "7"}, 429, "rate_limit_error"},
		{"a bad key is a 401", llmtest.Reply{ErrorType: "authentication_error"}, 401, "authentication_error"},
		{"an OpenAI code is translated", llmtest.Reply{ErrorType: "insufficient_quota"}, 402, "billing_error"},
		{"a bare status gets its type", llmtest.Reply{Status: 403}, 403, "permission_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := llmtest.NewServer(t, tt.reply)
			_, err := anthropicClient(s).Messages.New(context.Background(), anthropicParams())
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v", err)
			}
			if apiErr.StatusCode != tt.status || string(apiErr.Type()) != tt.typ || apiErr.Message == "" || apiErr.RequestID == "" {
				t.Errorf("got %d %q %q %q", apiErr.StatusCode, apiErr.Type(), apiErr.Message, apiErr.RequestID)
			}
			if tt.reply.RetryAfter != "" && apiErr.Response.Header.Get("Retry-After") != tt.reply.RetryAfter {
				t.Errorf("Retry-After = %q", apiErr.Response.Header.Get("Retry-After"))
			}
		})
	}
}

func TestAnthropicStreamErrorEventBecomesAnAPIError(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "partial", StreamError: "overloaded_error"})
	_, _, _, err := streamAnthropic(t, s, anthropicParams())
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.Type() != "overloaded_error" {
		t.Errorf("err = %v", err)
	}
}

func TestAnthropicRequestIsRecordedInNeutralTerms(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	p := anthropicParams()
	p.System = []anthropic.TextBlockParam{{Text: "be brief"}}
	p.Messages = append(p.Messages,
		anthropic.NewAssistantMessage(anthropic.NewTextBlock("Let me look."),
			anthropic.NewToolUseBlock("toolu_a", map[string]any{"city": "Oslo"}, "get_weather"),
			anthropic.NewToolUseBlock("toolu_b", map[string]any{}, "get_time")),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_a", "rainy", false),
			anthropic.NewToolResultBlock("toolu_b", "no clock", true)),
	)
	p.Tools = []anthropic.ToolUnionParam{
		{OfTool: &anthropic.ToolParam{Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}},
		{OfTool: &anthropic.ToolParam{Name: "get_time", InputSchema: anthropic.ToolInputSchemaParam{}}},
	}
	p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
	if _, err := anthropicClient(s).Messages.New(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	r := s.Last()
	if r.Format != llmtest.FormatAnthropic || r.Path != "/v1/messages" || r.APIKey != "sk-ant-llmtest" {
		t.Errorf("format/path/key = %q %q %q", r.Format, r.Path, r.APIKey)
	}
	if r.System != "be brief" || r.ToolChoice != "required" || r.MaxTokens != 256 || !reflect.DeepEqual(r.ToolNames, []string{"get_weather", "get_time"}) {
		t.Errorf("system/choice/max/tools = %q %q %d %v", r.System, r.ToolChoice, r.MaxTokens, r.ToolNames)
	}
	assertMessages(t, r.Messages, []llm.Message{
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, Content: "Let me look.", ToolCalls: []llm.ToolCall{
			{ID: "toolu_a", Name: "get_weather", Arguments: `{"city":"Oslo"}`}, {ID: "toolu_b", Name: "get_time", Arguments: `{}`}}},
		{Role: llm.RoleTool, Content: "rainy", ToolCallID: "toolu_a", ToolName: "get_weather"},
		{Role: llm.RoleTool, Content: "no clock", ToolCallID: "toolu_b", ToolName: "get_time", IsError: true},
	})
}

func TestAnthropicInvalidConversationsAreRefusedLikeTheService(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msgs []anthropic.MessageParam
		want string
	}{
		{"a tool_use must be answered in the next message", []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("go")),
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_x", map[string]any{}, "f")),
			anthropic.NewUserMessage(anthropic.NewTextBlock("never mind")),
		}, "without `tool_result`"},
		{"a tool_result needs its tool_use", []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_y", "r", false)),
		}, "unexpected `tool_use_id`"},
		{"text blocks must not be empty", []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("")),
		}, "must be non-empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := llmtest.NewServer(t, llmtest.Reply{Text: "unused"})
			p := anthropicParams()
			p.Messages = tt.msgs
			_, err := anthropicClient(s).Messages.New(context.Background(), p)
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, tt.want) {
				t.Fatalf("err = %v (%v)", err, s.Last().Invalid)
			}
			if s.Remaining() != 1 {
				t.Errorf("an invalid request consumed the script")
			}
		})
	}
}
