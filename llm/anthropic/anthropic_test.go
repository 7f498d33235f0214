package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/llmtest"
)

const (
	testKey   = "sk-ant-test-SECRET123"
	testModel = "claude-test"
)

// price is the configured price of testModel, in dollars per million tokens.
var price = config.Model{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

func newProvider(t *testing.T, url string, edit ...func(*config.Provider)) *anthropic.Provider {
	t.Helper()
	cfg := config.Provider{
		Type:    "anthropic",
		BaseURL: url,
		APIKey:  testKey,
		Models:  map[string]config.Model{testModel: price},
	}
	for _, e := range edit {
		e(&cfg)
	}
	p, err := anthropic.New("claude", cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func userRequest(stream bool) *llm.Request {
	return &llm.Request{
		Model:    testModel,
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "Hello?"}},
		Tools:    []llm.ToolDef{{Name: "search", Description: "Search the web", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)}},
		Stream:   stream,
	}
}

// modes runs f once streamed and once not.
func modes(t *testing.T, f func(t *testing.T, stream bool)) {
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

func TestAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  llmtest.Reply
		text   string
		calls  []llm.ToolCall // IDs are compared only when set
		finish llm.FinishReason
	}{
		{
			name:   "a text answer comes back whole",
			reply:  llmtest.Reply{Text: "Hello there, how can I help with your Slack bot today?", ChunkSize: 4},
			text:   "Hello there, how can I help with your Slack bot today?",
			finish: llm.FinishStop,
		},
		{
			name:   "a tool call with arguments split across chunks is reassembled",
			reply:  llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "toolu_01", Name: "search", Arguments: `{"query":"slack bots","limit":3}`}}, ChunkSize: 3},
			calls:  []llm.ToolCall{{ID: "toolu_01", Name: "search", Arguments: `{"query":"slack bots","limit":3}`}},
			finish: llm.FinishToolCalls,
		},
		{
			name: "several tool calls keep their order and the text before them",
			reply: llmtest.Reply{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{
				{Name: "search", Arguments: `{"query":"a"}`},
				{Name: "fetch", Arguments: `{"url":"https://example.com/ü"}`},
			}},
			text: "Let me look.",
			calls: []llm.ToolCall{
				{Name: "search", Arguments: `{"query":"a"}`},
				{Name: "fetch", Arguments: `{"url":"https://example.com/ü"}`},
			},
			finish: llm.FinishToolCalls,
		},
		{
			name:   "malformed arguments reach the caller as the model wrote them",
			reply:  llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "search", Arguments: `{"query": "unterminated`}}},
			calls:  []llm.ToolCall{{Name: "search", Arguments: `{"query": "unterminated`}},
			finish: llm.FinishToolCalls,
		},
		{
			name:   "a call without arguments gets an empty object",
			reply:  llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "now"}}},
			calls:  []llm.ToolCall{{Name: "now", Arguments: `{}`}},
			finish: llm.FinishToolCalls,
		},
		{
			name:   "max_tokens is reported as length",
			reply:  llmtest.Reply{Text: "Cut sho", Finish: "max_tokens"},
			text:   "Cut sho",
			finish: llm.FinishLength,
		},
		{
			name:   "stop_sequence is a normal stop",
			reply:  llmtest.Reply{Text: "Done", Finish: "stop_sequence"},
			text:   "Done",
			finish: llm.FinishStop,
		},
		{
			name:   "a refusal is reported as content_filter",
			reply:  llmtest.Reply{Finish: "refusal"},
			finish: llm.FinishFilter,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			modes(t, func(t *testing.T, stream bool) {
				srv := llmtest.NewServer(t, tt.reply)
				p := newProvider(t, srv.URL())
				req := userRequest(stream)
				var mu sync.Mutex
				var deltas []string
				req.OnText = func(d string) {
					mu.Lock()
					defer mu.Unlock()
					deltas = append(deltas, d)
				}
				resp, err := p.Complete(context.Background(), req)
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Message.Role != llm.RoleAssistant || resp.Message.Content != tt.text {
					t.Errorf("message = %s %q, want assistant %q", resp.Message.Role, resp.Message.Content, tt.text)
				}
				if resp.FinishReason != tt.finish {
					t.Errorf("finish = %q, want %q", resp.FinishReason, tt.finish)
				}
				if len(resp.Message.ToolCalls) != len(tt.calls) {
					t.Fatalf("tool calls = %+v, want %+v", resp.Message.ToolCalls, tt.calls)
				}
				for i, want := range tt.calls {
					got := resp.Message.ToolCalls[i]
					if got.Name != want.Name || got.Arguments != want.Arguments || got.ID == "" || (want.ID != "" && got.ID != want.ID) {
						t.Errorf("tool call %d = %+v, want %+v", i, got, want)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case !stream && len(deltas) > 0:
					t.Errorf("OnText called %d times without streaming", len(deltas))
				case stream && strings.Join(deltas, "") != tt.text:
					t.Errorf("OnText deltas %q do not make the text %q", deltas, tt.text)
				case stream && len(tt.text) > 5 && len(deltas) < 2:
					t.Errorf("OnText got %d deltas, want the text in pieces", len(deltas))
				}
				if srv.Last().Stream != stream {
					t.Errorf("request stream = %v, want %v", srv.Last().Stream, stream)
				}
			})
		})
	}
}

func TestUsageAndCost(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, stream bool) {
		srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok", Usage: &llmtest.Usage{Input: 1000, Output: 200, CacheRead: 5000, CacheWrite: 100}})
		p := newProvider(t, srv.URL())
		resp, err := p.Complete(context.Background(), userRequest(stream))
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		u := resp.Usage
		if u.InputTokens != 1000 || u.OutputTokens != 200 || u.CacheReadTokens != 5000 || u.CacheWriteTokens != 100 {
			t.Errorf("usage = %+v, want 1000 in, 200 out, 5000 cache read, 100 cache write", u)
		}
		want := (1000*3 + 200*15 + 5000*0.3 + 100*3.75) / 1e6
		if math.Abs(u.CostUSD-want) > 1e-12 {
			t.Errorf("cost = %v, want %v", u.CostUSD, want)
		}
		if resp.Provider != "claude" || resp.Model != testModel || resp.Latency <= 0 {
			t.Errorf("provider, model, latency = %q, %q, %v", resp.Provider, resp.Model, resp.Latency)
		}
	})
}

func TestUnpricedModelCostsNothing(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	p := newProvider(t, srv.URL())
	req := userRequest(false)
	req.Model = "claude-unlisted"
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.CostUSD != 0 {
		t.Errorf("usage = %+v, want tokens counted and cost 0", resp.Usage)
	}
}

func TestLargeMaxTokensWithoutStreamingIsStreamed(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "long answer"})
	p := newProvider(t, srv.URL())
	req := userRequest(false)
	req.MaxOutputTokens = 64000
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Content != "long answer" || !srv.Last().Stream || srv.Last().MaxTokens != 64000 {
		t.Errorf("content %q, stream %v, max_tokens %d", resp.Message.Content, srv.Last().Stream, srv.Last().MaxTokens)
	}
}

func TestNewRefusesABadBaseURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"ftp://example.com", "not a url", "http://"} {
		if _, err := anthropic.New("claude", config.Provider{BaseURL: u, APIKey: testKey}); err == nil {
			t.Errorf("New(base_url %q) succeeded", u)
		} else if strings.Contains(err.Error(), testKey) {
			t.Errorf("error leaks the key: %v", err)
		}
	}
}

// freeAddr returns a loopback URL nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      llmtest.Reply
		streamOnly bool
		kind       llm.ErrorKind
		status     int
		retryAfter time.Duration
	}{
		{name: "429 is a rate limit with Retry-After in seconds", reply: llmtest.Reply{ErrorType: "rate_limit_error", RetryAfter: "7"}, kind: llm.ErrRateLimit, status: 429, retryAfter: 7 * time.Second},
		{name: "retry-after-ms wins over Retry-After", reply: llmtest.Reply{ErrorType: "rate_limit_error", RetryAfter: "7", RetryAfterMs: "1500"}, kind: llm.ErrRateLimit, status: 429, retryAfter: 1500 * time.Millisecond},
		{name: "401 is an auth error", reply: llmtest.Reply{ErrorType: "authentication_error"}, kind: llm.ErrAuth, status: 401},
		{name: "the key echoed by the server is redacted", reply: llmtest.Reply{ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key: " + testKey}, kind: llm.ErrAuth, status: 401},
		{name: "403 is an auth error", reply: llmtest.Reply{ErrorType: "permission_error"}, kind: llm.ErrAuth, status: 403},
		{name: "a billing error is quota", reply: llmtest.Reply{ErrorType: "billing_error"}, kind: llm.ErrQuota, status: 402},
		{name: "a low credit balance reported as 400 is quota", reply: llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}, kind: llm.ErrQuota, status: 400},
		{name: "529 overloaded is a server error", reply: llmtest.Reply{ErrorType: "overloaded_error"}, kind: llm.ErrServer, status: 529},
		{name: "500 is a server error", reply: llmtest.Reply{ErrorType: "api_error"}, kind: llm.ErrServer, status: 500},
		{name: "503 is a server error", reply: llmtest.Reply{Status: 503}, kind: llm.ErrServer, status: 503},
		{name: "400 is a bad request", reply: llmtest.Reply{ErrorType: "invalid_request_error"}, kind: llm.ErrBadRequest, status: 400},
		{name: "404 model not found is a bad request", reply: llmtest.Reply{ErrorType: "not_found_error"}, kind: llm.ErrBadRequest, status: 404},
		{name: "413 is a bad request", reply: llmtest.Reply{ErrorType: "request_too_large"}, kind: llm.ErrBadRequest, status: 413},
		{name: "a body that is not JSON is a bad response", reply: llmtest.Reply{Raw: "<html>upstream says hi</html>", ContentType: "text/html"}, kind: llm.ErrBadResponse},
		{name: "truncated JSON is a bad response", reply: llmtest.Reply{Raw: `{"id":"msg_1","type":"message","content":[{"type":"te`}, kind: llm.ErrBadResponse},
		{name: "a stream cut before message_stop is a bad response", reply: llmtest.Reply{Text: "Hello there, world", EndAfter: 4}, streamOnly: true, kind: llm.ErrBadResponse},
		{name: "a garbage SSE event is a bad response", reply: llmtest.Reply{Raw: "event: message_start\ndata: {not json\n\n", ContentType: "text/event-stream"}, streamOnly: true, kind: llm.ErrBadResponse},
		{name: "an error event mid-stream is classified by its type", reply: llmtest.Reply{Text: "partial", StreamError: "overloaded_error"}, streamOnly: true, kind: llm.ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			modes(t, func(t *testing.T, stream bool) {
				if tt.streamOnly && !stream {
					return
				}
				srv := llmtest.NewServer(t, tt.reply)
				p := newProvider(t, srv.URL())
				_, err := p.Complete(context.Background(), userRequest(stream))
				e := checkError(t, err, tt.kind)
				if e.Status != tt.status {
					t.Errorf("status = %d, want %d", e.Status, tt.status)
				}
				if e.RetryAfter != tt.retryAfter {
					t.Errorf("retry after = %v, want %v", e.RetryAfter, tt.retryAfter)
				}
			})
		})
	}
}

func TestConnectionRefusedIsANetworkError(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, stream bool) {
		p := newProvider(t, freeAddr(t))
		_, err := p.Complete(context.Background(), userRequest(stream))
		checkError(t, err, llm.ErrNetwork)
	})
}

// checkError asserts that err is an *llm.Error of kind, from provider
// "claude", that nothing in it shows the key, and returns it.
func checkError(t *testing.T, err error, kind llm.ErrorKind) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	if e.Kind != kind {
		t.Errorf("kind = %s, want %s (%v)", e.Kind, kind, err)
	}
	if e.Provider != "claude" || e.Model != testModel {
		t.Errorf("error names %s/%s, want claude/%s", e.Provider, e.Model, testModel)
	}
	for err := error(e); err != nil; err = errors.Unwrap(err) {
		for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(s, testKey) {
				t.Errorf("error text leaks the key: %s", s)
			}
		}
	}
	return e
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	t.Run("a deadline during a slow answer is a timeout", func(t *testing.T) {
		t.Parallel()
		modes(t, func(t *testing.T, stream bool) {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "late", Delay: time.Hour})
			p := newProvider(t, srv.URL())
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := p.Complete(ctx, userRequest(stream))
			checkError(t, err, llm.ErrTimeout)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
			}
		})
	})
	t.Run("the provider's timeout bounds each call", func(t *testing.T) {
		t.Parallel()
		modes(t, func(t *testing.T, stream bool) {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "late", Delay: time.Hour})
			p := newProvider(t, srv.URL(), func(c *config.Provider) { c.Timeout = config.Duration(100 * time.Millisecond) })
			_, err := p.Complete(context.Background(), userRequest(stream))
			checkError(t, err, llm.ErrTimeout)
		})
	})
	t.Run("cancelling while the server thinks is a cancellation", func(t *testing.T) {
		t.Parallel()
		modes(t, func(t *testing.T, stream bool) {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "late", Delay: time.Hour})
			p := newProvider(t, srv.URL())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				if _, err := srv.WaitContext(ctx, 1); err == nil {
					cancel()
				}
			}()
			_, err := p.Complete(ctx, userRequest(stream))
			checkError(t, err, llm.ErrCanceled)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v does not wrap context.Canceled", err)
			}
		})
	})
	t.Run("a stalled stream ends when the caller gives up", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, llmtest.Reply{Text: "The first words arrive, then nothing", ChunkSize: 5, StallAfter: 4})
		p := newProvider(t, srv.URL())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := userRequest(true)
		var got strings.Builder
		req.OnText = func(d string) {
			got.WriteString(d)
			cancel() // the first words prove the stream is live; then give up
		}
		_, err := p.Complete(ctx, req)
		checkError(t, err, llm.ErrCanceled)
		if got.Len() == 0 {
			t.Error("no text arrived before the stall")
		}
	})
	t.Run("a stalled stream under a deadline is a timeout", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, llmtest.Reply{Text: "The first words arrive, then nothing", StallAfter: 4})
		p := newProvider(t, srv.URL())
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := p.Complete(ctx, userRequest(true))
		checkError(t, err, llm.ErrTimeout)
	})
}

func TestStreamFalseInTheConfigMakesPlainCalls(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "plain"})
	off := false
	p, err := anthropic.New("claude", config.Provider{Type: "anthropic", BaseURL: srv.URL(), APIKey: "k", Stream: &off})
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
