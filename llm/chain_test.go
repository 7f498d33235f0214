package llm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
)

// The chain is tested through the real adapters against llmtest servers.

func openaiAt(t *testing.T, name string, srv *llmtest.Server) llm.Provider {
	t.Helper()
	p, err := openai.New(name, config.Provider{Type: "openai", BaseURL: srv.URL() + "/v1", APIKey: "sk-test-openai"})
	if err != nil {
		t.Fatalf("openai.New: %v", err)
	}
	return p
}

func anthropicAt(t *testing.T, name string, srv *llmtest.Server) llm.Provider {
	t.Helper()
	p, err := anthropic.New(name, config.Provider{Type: "anthropic", BaseURL: srv.URL(), APIKey: "sk-ant-test-chain"})
	if err != nil {
		t.Fatalf("anthropic.New: %v", err)
	}
	return p
}

func question() *llm.Request {
	return &llm.Request{Model: "set-by-caller", Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is up?"}}}
}

// noWait is a backoff for tests that only care about order.
func noWait(int) time.Duration { return 0 }

// forever is a backoff that makes any wait for the same target hang, to show
// that the chain moves to another target instead.
func forever(int) time.Duration { return time.Hour }

// retries collects OnRetry reports.
type retries struct {
	mu   sync.Mutex
	list []llm.RetryInfo
}

func (r *retries) add(i llm.RetryInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, i)
}

func (r *retries) all() []llm.RetryInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

func models(reqs []*llmtest.Recorded) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Model)
	}
	return out
}

func TestChainRetriesAfterARateLimitHonouringRetryAfter(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfterMs: "300"},
		llmtest.Reply{Text: "fine now"})
	var seen retries
	c := &llm.Chain{
		Targets:    []llm.Target{{Provider: openaiAt(t, "oai", srv), Model: "gpt-test"}},
		MaxRetries: 3,
		Backoff:    noWait,
		OnRetry:    seen.add,
	}
	req := question()
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Content != "fine now" || len(srv.Requests()) != 2 {
		t.Errorf("answer %q after %d requests, want %q after 2", resp.Message.Content, len(srv.Requests()), "fine now")
	}
	got := seen.all()
	// Wait counts from when the next target is picked, a moment after the
	// failure, so it is a little under the 300ms asked for.
	if len(got) != 1 || got[0].Attempt != 1 || got[0].Wait < 200*time.Millisecond || got[0].Wait > 300*time.Millisecond || llm.KindOf(got[0].Err) != llm.ErrRateLimit {
		t.Errorf("retries = %+v, want one after a rate limit, waiting out the 300ms asked for", got)
	}
	if req.Model != "set-by-caller" {
		t.Errorf("the caller's request was changed: model %q", req.Model)
	}
}

func TestChainFallsBackToTheNextModelOnAServerError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{ErrorType: "api_error"}, llmtest.Reply{Text: "from the second model"})
	p := anthropicAt(t, "claude", srv)
	var seen retries
	c := &llm.Chain{
		Targets:    []llm.Target{{Provider: p, Model: "claude-big"}, {Provider: p, Model: "claude-small"}},
		MaxRetries: 3,
		Backoff:    forever, // the first model is in backoff; the second is tried at once
		OnRetry:    seen.add,
	}
	resp, err := c.Complete(context.Background(), question())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Content != "from the second model" || resp.Model != "claude-small" {
		t.Errorf("answer %q from %q", resp.Message.Content, resp.Model)
	}
	if got := models(srv.Requests()); !slices.Equal(got, []string{"claude-big", "claude-small"}) {
		t.Errorf("models asked = %v", got)
	}
	if got := seen.all(); len(got) != 1 || got[0].Wait != 0 || got[0].Next.Model != "claude-small" || got[0].Target.Model != "claude-big" {
		t.Errorf("retries = %+v, want one move to claude-small without waiting", got)
	}
}

func TestChainMovesOnFromARateLimitedModelWithoutWaitingForIt(t *testing.T) {
	t.Parallel()
	a := llmtest.NewServer(t, llmtest.Reply{ErrorType: "rate_limit_error", RetryAfter: "3600"})
	b := llmtest.NewServer(t, llmtest.Reply{Text: "from B"})
	c := &llm.Chain{
		Targets:    []llm.Target{{Provider: anthropicAt(t, "a", a), Model: "m"}, {Provider: openaiAt(t, "b", b), Model: "m"}},
		MaxRetries: 1,
		Backoff:    noWait,
	}
	resp, err := c.Complete(context.Background(), question())
	if err != nil || resp.Provider != "b" {
		t.Fatalf("Complete = %+v, %v; want an answer from b", resp, err)
	}
}

func TestChainAuthErrorRemovesTheWholeProvider(t *testing.T) {
	t.Parallel()
	a := llmtest.NewServer(t, llmtest.Reply{ErrorType: "invalid_api_key"})
	b := llmtest.NewServer(t, llmtest.Reply{Text: "from B"})
	pa := openaiAt(t, "a", a)
	c := &llm.Chain{
		Targets:    []llm.Target{{Provider: pa, Model: "m1"}, {Provider: pa, Model: "m2"}, {Provider: anthropicAt(t, "b", b), Model: "m3"}},
		MaxRetries: 5,
		Backoff:    noWait,
	}
	resp, err := c.Complete(context.Background(), question())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Provider != "b" || resp.Model != "m3" {
		t.Errorf("answered by %s/%s, want b/m3", resp.Provider, resp.Model)
	}
	if got := models(a.Requests()); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("provider a was asked for %v, want only m1: its other model shares the bad key", got)
	}
}

func TestChainFinalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  llm.ErrorKind
	}{
		{"an auth error on the only provider is final after one attempt", llmtest.Reply{ErrorType: "authentication_error"}, llm.ErrAuth},
		{"exhausted quota is final", llmtest.Reply{ErrorType: "insufficient_quota"}, llm.ErrQuota},
		{"a bad request on the only model is final", llmtest.Reply{ErrorType: "model_not_found"}, llm.ErrBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, newProvider := range []func(*testing.T, string, *llmtest.Server) llm.Provider{openaiAt, anthropicAt} {
				srv := llmtest.NewServer(t, tt.reply)
				srv.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "a retry was made"} })
				c := &llm.Chain{Targets: []llm.Target{{Provider: newProvider(t, "only", srv), Model: "m"}}, MaxRetries: 5, Backoff: noWait}
				_, err := c.Complete(context.Background(), question())
				if llm.KindOf(err) != tt.kind {
					t.Errorf("kind = %s, want %s (%v)", llm.KindOf(err), tt.kind, err)
				}
				var ce *llm.ChainError
				if !errors.As(err, &ce) || ce.Attempts != 1 {
					t.Errorf("error %v: want a ChainError after 1 attempt", err)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			}
		})
	}
}

func TestChainBadRequestRemovesOnlyThatModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{ErrorType: "not_found_error"}, llmtest.Reply{Text: "from m2"})
	srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if r.Model == "m1" {
			return llmtest.Reply{Text: "m1 was asked again"}
		}
		return llmtest.Reply{ErrorType: "api_error"}
	})
	p := anthropicAt(t, "claude", srv)
	c := &llm.Chain{Targets: []llm.Target{{Provider: p, Model: "m1"}, {Provider: p, Model: "m2"}}, MaxRetries: 3, Backoff: noWait}
	resp, err := c.Complete(context.Background(), question())
	if err != nil || resp.Message.Content != "from m2" {
		t.Fatalf("Complete = %+v, %v; want the answer of m2", resp, err)
	}
	// The same chain again: m1 is back in rotation for a new call.
	if _, err := c.Complete(context.Background(), question()); err != nil {
		t.Fatalf("second Complete: %v", err)
	}
	if got := models(srv.Requests()); !slices.Equal(got, []string{"m1", "m2", "m1"}) {
		t.Errorf("models asked = %v", got)
	}
}

func TestChainReportsAttemptsAndModelsWhenAllFail(t *testing.T) {
	t.Parallel()
	a := llmtest.NewServer(t)
	a.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{ErrorType: "server_error"} })
	b := llmtest.NewServer(t)
	b.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{ErrorType: "overloaded_error"} })
	var seen retries
	c := &llm.Chain{
		Targets:    []llm.Target{{Provider: openaiAt(t, "oai", a), Model: "gpt-x"}, {Provider: anthropicAt(t, "claude", b), Model: "claude-y"}},
		MaxRetries: 2,
		Backoff:    noWait,
		OnRetry:    seen.add,
	}
	_, err := c.Complete(context.Background(), question())
	var ce *llm.ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a ChainError", err)
	}
	if ce.Attempts != 3 || !slices.Equal(ce.Tried, []string{"oai/gpt-x", "claude/claude-y"}) {
		t.Errorf("attempts %d, tried %v", ce.Attempts, ce.Tried)
	}
	for _, want := range []string{"3 attempts", "oai/gpt-x", "claude/claude-y", "server"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if llm.KindOf(err) != llm.ErrServer {
		t.Errorf("kind = %s, want server", llm.KindOf(err))
	}
	if got := len(a.Requests()) + len(b.Requests()); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
	if got := seen.all(); len(got) != 2 || got[1].Next.Model != "gpt-x" {
		t.Errorf("retries = %+v, want 2, cycling back to gpt-x", got)
	}
}

func TestChainCancellationDuringBackoffReturnsPromptly(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{ErrorType: "api_error"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &llm.Chain{
		Targets:    []llm.Target{{Provider: anthropicAt(t, "claude", srv), Model: "m"}},
		MaxRetries: 3,
		Backoff:    forever,
		MaxWait:    2 * time.Hour,
		OnRetry:    func(llm.RetryInfo) { cancel() }, // the chain is about to wait an hour
	}
	_, err := c.Complete(ctx, question())
	if llm.KindOf(err) != llm.ErrCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v: want a cancellation", err)
	}
	if !strings.Contains(err.Error(), "api_error") {
		t.Errorf("error %q does not say what failed before", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestChainDoesNotStartAWaitThatOutlastsTheDeadline(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "3600"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &llm.Chain{Targets: []llm.Target{{Provider: openaiAt(t, "oai", srv), Model: "m"}}, MaxRetries: 3, Backoff: noWait}
	_, err := c.Complete(ctx, question())
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrRateLimit || e.RetryAfter != time.Hour {
		t.Errorf("error %v: want the rate limit with its hour-long Retry-After", err)
	}
	var ce *llm.ChainError
	if !errors.As(err, &ce) || ce.Wait < 59*time.Minute || ce.WaitLimit > time.Minute {
		t.Errorf("error %v: want it to say the wait (an hour) and the limit (under a minute)", err)
	}
}

func TestChainCapsEveryWaitEvenWithoutADeadline(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		maxWait time.Duration
		limit   time.Duration
	}{
		{"the default cap is a minute", 0, llm.DefaultMaxWait},
		{"a chain may set its own cap", 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "3600"})
			c := &llm.Chain{Targets: []llm.Target{{Provider: openaiAt(t, "oai", srv), Model: "m"}}, MaxRetries: 3, Backoff: noWait, MaxWait: tt.maxWait}
			_, err := c.Complete(context.Background(), question()) // would sleep an hour without the cap
			var ce *llm.ChainError
			if !errors.As(err, &ce) || ce.Wait < 59*time.Minute || ce.WaitLimit != tt.limit {
				t.Fatalf("error %v: want a give-up naming the hour's wait and the %s limit", err, tt.limit)
			}
			if llm.KindOf(err) != llm.ErrRateLimit || !strings.Contains(err.Error(), "more than the") {
				t.Errorf("error %q: want the rate limit as the cause and the wait in the message", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestChainMovesToTheFallbackWhenATargetAsksForTooLongAWait(t *testing.T) {
	t.Parallel()
	slow := llmtest.NewServer(t, llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "3600"})
	backup := llmtest.NewServer(t, llmtest.Reply{Text: "from the backup"})
	c := &llm.Chain{Targets: []llm.Target{{Provider: openaiAt(t, "busy", slow), Model: "m"}, {Provider: openaiAt(t, "backup", backup), Model: "m"}},
		MaxRetries: 3, Backoff: noWait}
	resp, err := c.Complete(context.Background(), question())
	if err != nil || resp.Message.Content != "from the backup" {
		t.Fatalf("Complete = %+v, %v; want the backup's answer", resp, err)
	}
}

func TestChainCancellationDuringACallReturnsPromptly(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "too late", Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if _, err := srv.WaitContext(ctx, 1); err == nil {
			cancel()
		}
	}()
	c := &llm.Chain{Targets: []llm.Target{{Provider: openaiAt(t, "oai", srv), Model: "m"}}, MaxRetries: 3, Backoff: noWait}
	_, err := c.Complete(ctx, question())
	if llm.KindOf(err) != llm.ErrCanceled {
		t.Errorf("error %v: want a cancellation", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestChainPerAttemptTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streamed"}[stream], func(t *testing.T) {
			t.Parallel()
			// A slow server, then (when streaming) one that stalls mid-answer.
			second := llmtest.Reply{Text: "too late", Delay: time.Hour}
			if stream {
				second = llmtest.Reply{Text: "stalls after a few words", StallAfter: 3}
			}
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "too late", Delay: time.Hour}, second, llmtest.Reply{Text: "in time"})
			var seen retries
			c := &llm.Chain{
				Targets:    []llm.Target{{Provider: anthropicAt(t, "claude", srv), Model: "m"}},
				MaxRetries: 3,
				Timeout:    500 * time.Millisecond,
				Backoff:    noWait,
				OnRetry:    seen.add,
			}
			req := question()
			req.Stream = stream
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Message.Content != "in time" {
				t.Errorf("answer %q", resp.Message.Content)
			}
			got := seen.all()
			for _, r := range got {
				if llm.KindOf(r.Err) != llm.ErrTimeout {
					t.Errorf("retry after %v, want a timeout", r.Err)
				}
			}
			if len(got) != 2 {
				t.Errorf("%d retries, want 2", len(got))
			}
		})
	}
}

func TestDefaultBackoffGrowsAndIsCapped(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 7: 30 * time.Second, 60: 30 * time.Second} {
		for range 20 {
			got := llm.DefaultBackoff(n)
			if got > want || got < want*4/5 {
				t.Errorf("DefaultBackoff(%d) = %v, want within [%v, %v]", n, got, want*4/5, want)
			}
		}
	}
}

func TestChainMakesNoAttemptWhenItCannot(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		chain *llm.Chain
		ctx   context.Context
		kind  llm.ErrorKind
	}{
		{"a chain without models is a bad request", &llm.Chain{}, context.Background(), llm.ErrBadRequest},
		{"a context cancelled beforehand is a cancellation", &llm.Chain{Targets: []llm.Target{{Provider: anthropicAt(t, "claude", srv), Model: "m"}}}, cancelled, llm.ErrCanceled},
	}
	for _, tt := range tests {
		_, err := tt.chain.Complete(tt.ctx, question())
		if llm.KindOf(err) != tt.kind {
			t.Errorf("%s: error %v, want kind %s", tt.name, err, tt.kind)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}
