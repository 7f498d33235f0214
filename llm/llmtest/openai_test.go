package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

func openaiClient(s *llmtest.Server) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(s.URL()+"/v1/"), option.WithAPIKey("sk-llmtest"), option.WithMaxRetries(0))
	return &c
}

func openaiParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
}

// streamOpenAI runs a streamed call through the SDK's accumulator and
// returns the result, the number of chunks and the tool calls reported as
// just finished.
func streamOpenAI(t *testing.T, s *llmtest.Server, p openai.ChatCompletionNewParams) (openai.ChatCompletion, int, []openai.FinishedChatCompletionToolCall, error) {
	t.Helper()
	c := openaiClient(s)
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(context.Background(), p)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	n := 0
	var finished []openai.FinishedChatCompletionToolCall
	for stream.Next() {
		n++
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator refused chunk %d: %s", n, stream.Current().RawJSON())
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	return acc.ChatCompletion, n, finished, stream.Err()
}

func TestOpenAIClientReadsScriptedAnswers(t *testing.T) {
	t.Parallel()
	twoCalls := llmtest.Reply{
		Text: "Looking that up.",
		ToolCalls: []llmtest.ToolCall{
			{Name: "get_weather", Arguments: `{"city":"Zürich","unit":"celsius"}`},
			{ID: "call_fixed", Name: "get_time", Arguments: `{"tz":"Europe/Zurich"}`},
		},
		Usage: &llmtest.Usage{Input: 100, Output: 20, CacheRead: 50},
	}
	tests := []struct {
		name   string
		reply  llmtest.Reply
		text   string
		calls  [][2]string // name, arguments
		finish string
	}{
		{"plain text arrives whole", llmtest.Reply{Text: "Hello, wörld! ✓ done"}, "Hello, wörld! ✓ done", nil, "stop"},
		{"two tool calls arrive with their arguments", twoCalls, "Looking that up.",
			[][2]string{{"get_weather", `{"city":"Zürich","unit":"celsius"}`}, {"get_time", `{"tz":"Europe/Zurich"}`}}, "tool_calls"},
		{"malformed arguments pass through raw", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "f", Arguments: `{"a": tru`}}},
			"", [][2]string{{"f", `{"a": tru`}}, "tool_calls"},
		{"finish reason can be overridden", llmtest.Reply{Text: "cut", Finish: "length"}, "cut", nil, "length"},
		{"an empty answer is still an answer", llmtest.Reply{}, "", nil, "stop"},
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
				var cc openai.ChatCompletion
				if stream {
					var n int
					var finished []openai.FinishedChatCompletionToolCall
					var err error
					cc, n, finished, err = streamOpenAI(t, s, openaiParams())
					if err != nil {
						t.Fatal(err)
					}
					if len(tt.text) > 5 && n < 3 {
						t.Errorf("got %d chunks, want the text split across several", n)
					}
					if len(finished) != len(tt.calls) {
						t.Errorf("JustFinishedToolCall reported %d calls, want %d", len(finished), len(tt.calls))
					}
				} else {
					res, err := openaiClient(s).Chat.Completions.New(context.Background(), openaiParams())
					if err != nil {
						t.Fatal(err)
					}
					cc = *res
				}
				if len(cc.Choices) != 1 {
					t.Fatalf("got %d choices", len(cc.Choices))
				}
				ch := cc.Choices[0]
				if ch.Message.Content != tt.text {
					t.Errorf("content = %q, want %q", ch.Message.Content, tt.text)
				}
				if ch.FinishReason != tt.finish {
					t.Errorf("finish = %q, want %q", ch.FinishReason, tt.finish)
				}
				if len(ch.Message.ToolCalls) != len(tt.calls) {
					t.Fatalf("got %d tool calls, want %d", len(ch.Message.ToolCalls), len(tt.calls))
				}
				for i, c := range ch.Message.ToolCalls {
					if c.Function.Name != tt.calls[i][0] || c.Function.Arguments != tt.calls[i][1] || c.ID == "" || c.Type != "function" {
						t.Errorf("tool call %d = %+v, want %v", i, c, tt.calls[i])
					}
				}
				if tt.reply.Usage != nil {
					u := cc.Usage
					if u.PromptTokens != 150 || u.CompletionTokens != 20 || u.PromptTokensDetails.CachedTokens != 50 || u.TotalTokens != 170 {
						t.Errorf("usage = %+v", u)
					}
				}
				if len(tt.calls) == 2 && ch.Message.ToolCalls[1].ID != "call_fixed" {
					t.Errorf("scripted id lost: %q", ch.Message.ToolCalls[1].ID)
				}
			})
		}
	}
}

func TestOpenAIStreamArgumentsArriveInFragments(t *testing.T) {
	t.Parallel()
	args := `{"query":"select * from t"}`
	s := llmtest.NewServer(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "sql", Arguments: args}}, ChunkSize: 4})
	c := openaiClient(s)
	stream := c.Chat.Completions.NewStreaming(context.Background(), openaiParams())
	defer stream.Close()
	var fragments []string
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Arguments != "" {
					fragments = append(fragments, tc.Function.Arguments)
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(fragments, "") != args || len(fragments) != (len(args)+3)/4 {
		t.Errorf("fragments = %q", fragments)
	}
}

func TestOpenAIClientSeesErrorsAsTheServiceSendsThem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  llmtest.Reply
		status int
		code   string
		typ    string
	}{
		{"rate limit carries its code", llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "2"}, 429, "rate_limit_exceeded", "requests"},
		{"quota exhaustion is a 429 of its own", llmtest.Reply{ErrorType: "insufficient_quota"}, 429, "insufficient_quota", "insufficient_quota"},
		{"a bad key is a 401", llmtest.Reply{ErrorType: "invalid_api_key"}, 401, "invalid_api_key", "invalid_request_error"},
		{"a bare 500 is a server_error", llmtest.Reply{Status: 500}, 500, "", "server_error"},
		{"an Anthropic type is translated", llmtest.Reply{ErrorType: "rate_limit_error"}, 429, "rate_limit_exceeded", "requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := llmtest.NewServer(t, tt.reply)
			_, err := openaiClient(s).Chat.Completions.New(context.Background(), openaiParams())
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *openai.Error", err)
			}
			if apiErr.StatusCode != tt.status || apiErr.Code != tt.code || apiErr.Type != tt.typ || apiErr.Message == "" {
				t.Errorf("got %d %q %q %q", apiErr.StatusCode, apiErr.Code, apiErr.Type, apiErr.Message)
			}
			if tt.reply.RetryAfter != "" && apiErr.Response.Header.Get("Retry-After") != tt.reply.RetryAfter {
				t.Errorf("Retry-After = %q", apiErr.Response.Header.Get("Retry-After"))
			}
		})
	}
}

func TestOpenAIStreamErrorEventEndsTheStream(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "partial", StreamError: "server_error"})
	_, _, _, err := streamOpenAI(t, s, openaiParams())
	if err == nil || !strings.Contains(err.Error(), "server_error") {
		t.Errorf("err = %v, want a streamed server_error", err)
	}
}

func TestOpenAIRequestIsRecordedInNeutralTerms(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	temp := 0.25
	p := openai.ChatCompletionNewParams{
		Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("be brief"),
			openai.UserMessage("weather?"),
			{OfAssistant: &openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "call_1", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
			}}}},
			openai.ToolMessage("rainy", "call_1"),
		},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object"},
		})},
		ToolChoice:          openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
		Temperature:         openai.Float(temp),
		MaxCompletionTokens: openai.Int(77),
	}
	if _, err := openaiClient(s).Chat.Completions.New(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	r := s.Last()
	if r.Format != llmtest.FormatOpenAI || r.Path != "/v1/chat/completions" || r.APIKey != "sk-llmtest" || r.Stream {
		t.Errorf("format/path/key/stream = %q %q %q %v", r.Format, r.Path, r.APIKey, r.Stream)
	}
	if r.System != "be brief" || r.Model != "gpt-test" || r.ToolChoice != "required" || r.MaxTokens != 77 {
		t.Errorf("system/model/choice/max = %q %q %q %d", r.System, r.Model, r.ToolChoice, r.MaxTokens)
	}
	if r.Temperature == nil || *r.Temperature != temp || r.TopP != nil {
		t.Errorf("temperature/top_p = %v %v", r.Temperature, r.TopP)
	}
	if len(r.ToolNames) != 1 || r.ToolNames[0] != "get_weather" {
		t.Errorf("tools = %v", r.ToolNames)
	}
	want := []llm.Message{
		{Role: llm.RoleUser, Content: "weather?"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		{Role: llm.RoleTool, Content: "rainy", ToolCallID: "call_1", ToolName: "get_weather"},
	}
	assertMessages(t, r.Messages, want)
}

func TestOpenAIInvalidConversationIsRefusedLikeTheService(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "unused"})
	p := openaiParams()
	p.Messages = append(p.Messages, openai.ToolMessage("orphan", "call_nowhere"))
	_, err := openaiClient(s).Chat.Completions.New(context.Background(), p)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "role 'tool'") {
		t.Fatalf("err = %v", err)
	}
	if s.Last().Invalid == "" || s.Remaining() != 1 {
		t.Errorf("invalid = %q, remaining = %d", s.Last().Invalid, s.Remaining())
	}
}

func TestOpenAIStalledStreamHangsUntilTheClientGivesUp(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "a long answer that never ends", StallAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := openaiClient(s).Chat.Completions.NewStreaming(ctx, openaiParams())
	defer stream.Close()
	n := 0
	for stream.Next() {
		n++
		if n == 2 {
			cancel() // the server now hangs; only the client can end it
		}
	}
	if !errors.Is(stream.Err(), context.Canceled) || n != 2 {
		t.Errorf("after %d chunks err = %v", n, stream.Err())
	}
}

func TestOpenAIStreamCutShortHasNoFinish(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "cut short here", EndAfter: 2})
	cc, n, _, err := streamOpenAI(t, s, openaiParams())
	if err != nil || n != 2 || cc.Choices[0].FinishReason != "" {
		t.Errorf("n=%d err=%v finish=%q", n, err, cc.Choices[0].FinishReason)
	}
}

func TestDelayedAnswerEndsWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Reply{Text: "late", Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := openaiClient(s).Chat.Completions.New(ctx, openaiParams())
		errc <- err
	}()
	s.Wait(1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAIRefusesMoreThan128ToolsLikeTheService(t *testing.T) {
	t.Parallel()
	for _, n := range []int{llmtest.OpenAIMaxTools, llmtest.OpenAIMaxTools + 1} {
		s := llmtest.NewServer(t, llmtest.Reply{Text: "fine"})
		p := openaiParams()
		for i := range n {
			p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: fmt.Sprintf("tool_%d", i)}))
		}
		_, err := openaiClient(s).Chat.Completions.New(context.Background(), p)
		var apiErr *openai.Error
		switch {
		case n <= llmtest.OpenAIMaxTools && err != nil:
			t.Errorf("%d tools: %v", n, err)
		case n > llmtest.OpenAIMaxTools && (!errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "maximum length 128")):
			t.Errorf("%d tools: err = %v, want the service's 400", n, err)
		}
	}
}
