package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// checkError asserts that err is an *llm.Error of kind and never shows the
// key.
func checkError(t *testing.T, err error, kind llm.ErrorKind) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *llm.Error", err, err)
	}
	if e.Kind != kind {
		t.Errorf("kind = %v, want %v (%v)", e.Kind, kind, err)
	}
	if e.Provider != "oai" || e.Model != testModel {
		t.Errorf("provider/model = %q/%q", e.Provider, e.Model)
	}
	for _, s := range []string{err.Error(), e.Message, errorChain(err)} {
		if strings.Contains(s, "SECRET123") {
			t.Errorf("the key leaked into %q", s)
		}
	}
	return e
}

func errorChain(err error) string {
	var b strings.Builder
	for ; err != nil; err = errors.Unwrap(err) {
		b.WriteString(err.Error() + " | ")
	}
	return b.String()
}

func TestFailuresAreClassified(t *testing.T) {
	t.Parallel()
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		reply      llmtest.Reply
		kind       llm.ErrorKind
		status     int
		retryAfter func(time.Duration) bool
	}{
		{"429 with Retry-After seconds is a rate limit to wait out",
			llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "2"}, llm.ErrRateLimit, 429,
			func(d time.Duration) bool { return d == 2*time.Second }},
		{"retry-after-ms wins over Retry-After",
			llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "2", RetryAfterMs: "1500"}, llm.ErrRateLimit, 429,
			func(d time.Duration) bool { return d == 1500*time.Millisecond }},
		{"Retry-After as an HTTP date is understood",
			llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: future}, llm.ErrRateLimit, 429,
			func(d time.Duration) bool { return d > 30*time.Minute && d <= time.Hour }},
		{"429 without Retry-After has no wait",
			llmtest.Reply{Status: 429}, llm.ErrRateLimit, 429, func(d time.Duration) bool { return d == 0 }},
		{"429 insufficient_quota is quota, not a rate limit",
			llmtest.Reply{ErrorType: "insufficient_quota", RetryAfter: "1"}, llm.ErrQuota, 429, nil},
		{"401 is auth", llmtest.Reply{ErrorType: "invalid_api_key"}, llm.ErrAuth, 401, nil},
		{"403 is auth", llmtest.Reply{Status: 403}, llm.ErrAuth, 403, nil},
		{"500 is a server error", llmtest.Reply{Status: 500}, llm.ErrServer, 500, nil},
		{"503 is a server error", llmtest.Reply{Status: 503}, llm.ErrServer, 503, nil},
		{"400 is a bad request", llmtest.Reply{ErrorType: "context_length_exceeded"}, llm.ErrBadRequest, 400, nil},
		{"404 is a bad request", llmtest.Reply{ErrorType: "model_not_found"}, llm.ErrBadRequest, 404, nil},
		{"422 is a bad request", llmtest.Reply{Status: 422}, llm.ErrBadRequest, 422, nil},
		{"a gateway's HTML error page keeps its status",
			llmtest.Reply{Status: 502, Raw: "<html><body>Bad Gateway</body></html>", ContentType: "text/html"}, llm.ErrServer, 502, nil},
		{"a garbage body is a bad response", llmtest.Reply{Raw: `{"id": "chatcmpl-1", "choices": [`}, llm.ErrBadResponse, 0, nil},
		{"an HTML page with status 200 is a bad response",
			llmtest.Reply{Raw: "<html>captive portal</html>", ContentType: "text/html"}, llm.ErrBadResponse, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			modes(t, func(t *testing.T, stream bool) {
				srv := llmtest.NewServer(t, tt.reply)
				_, err := newProvider(t, srv).Complete(context.Background(), userRequest(stream))
				e := checkError(t, err, tt.kind)
				if e.Status != tt.status {
					t.Errorf("status = %d, want %d", e.Status, tt.status)
				}
				if tt.retryAfter != nil && !tt.retryAfter(e.RetryAfter) {
					t.Errorf("RetryAfter = %v", e.RetryAfter)
				}
				if e.Message == "" {
					t.Error("no message")
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests: the SDK retried", n)
				}
			})
		})
	}
}

func TestStreamFailuresAreClassified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  llm.ErrorKind
	}{
		{"an error event in the stream is a server error", llmtest.Reply{Text: "partial answer", StreamError: "server_error"}, llm.ErrServer},
		{"a rate limit inside the stream is a rate limit", llmtest.Reply{Text: "partial", StreamError: "rate_limit_exceeded"}, llm.ErrRateLimit},
		{"a stream that ends before the finish is a bad response", llmtest.Reply{Text: "cut short by a proxy", EndAfter: 3}, llm.ErrBadResponse},
		{"a stream of garbage is a bad response", llmtest.Reply{Raw: "data: {not json\n\n", ContentType: "text/event-stream"}, llm.ErrBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, tt.reply)
			_, err := newProvider(t, srv).Complete(context.Background(), userRequest(true))
			checkError(t, err, tt.kind)
		})
	}
}

func TestTheKeyNeverAppearsInErrors(t *testing.T) {
	t.Parallel()
	echo := "Incorrect API key provided: " + testKey + ". You can find your API key at https://platform.openai.com/account/api-keys."
	replies := []llmtest.Reply{
		{ErrorType: "invalid_api_key", ErrorMessage: echo},
		{Status: 500, Raw: "upstream said: Bearer " + testKey, ContentType: "text/plain"},
		{Status: 200, Raw: "<p>" + testKey + "</p>", ContentType: "text/html"},
		{ErrorType: "invalid_api_key", ErrorMessage: "Incorrect API key provided: sk-test-***********T123."},
	}
	for _, r := range replies {
		modes(t, func(t *testing.T, stream bool) {
			srv := llmtest.NewServer(t, r)
			_, err := newProvider(t, srv).Complete(context.Background(), userRequest(stream))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v", err)
			}
			for _, s := range []string{err.Error(), errorChain(err)} {
				if strings.Contains(s, "SECRET123") || strings.Contains(s, "T123") {
					t.Errorf("key material in %q", s)
				}
			}
		})
	}
}

func TestTheKeyNeverAppearsInStreamErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "x", StreamError: "server_error", ErrorMessage: "bad key " + testKey})
	_, err := newProvider(t, srv).Complete(context.Background(), userRequest(true))
	e := checkError(t, err, llm.ErrServer)
	if !strings.Contains(e.Message, "bad key [redacted]") {
		t.Errorf("message = %q, want the server's text with the key redacted", e.Message)
	}
}

func TestAnUnreachableServerIsANetworkError(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	srv := llmtest.NewServer(t)
	p := newProvider(t, srv, func(c *config.Provider) { c.BaseURL = dead.URL + "/v1" })
	modes(t, func(t *testing.T, stream bool) {
		_, err := p.Complete(context.Background(), userRequest(stream))
		checkError(t, err, llm.ErrNetwork)
	})
}

func TestDeadlinesAndCancellation(t *testing.T) {
	t.Parallel()
	slow := llmtest.Reply{Text: "too late", Delay: time.Hour}
	stalled := llmtest.Reply{Text: "a stream that stops halfway", StallAfter: 2}
	short := func(c *config.Provider) { c.Timeout = config.Duration(100 * time.Millisecond) }
	tests := []struct {
		name     string
		reply    llmtest.Reply
		cfg      func(*config.Provider)
		deadline bool
		streams  []bool
	}{
		{"a slow answer past the caller's deadline is a timeout", slow, nil, true, []bool{false, true}},
		{"a slow answer past the provider's timeout is a timeout", slow, short, false, []bool{false, true}},
		{"a stalled stream past the caller's deadline is a timeout", stalled, nil, true, []bool{true}},
		{"a stalled stream past the provider's timeout is a timeout", stalled, short, false, []bool{true}},
	}
	for _, tt := range tests {
		for _, stream := range tt.streams {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				srv := llmtest.NewServer(t, tt.reply)
				var edits []func(*config.Provider)
				if tt.cfg != nil {
					edits = append(edits, tt.cfg)
				}
				ctx := context.Background()
				if tt.deadline {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
					defer cancel()
				}
				_, err := newProvider(t, srv, edits...).Complete(ctx, userRequest(stream))
				checkError(t, err, llm.ErrTimeout)
				if llm.KindOf(err) != llm.ErrTimeout {
					t.Errorf("KindOf = %v", llm.KindOf(err))
				}
			})
		}
	}
}

func TestACancelledCallIsCanceled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  llmtest.Reply
		stream bool
	}{
		{"while waiting for a plain answer", llmtest.Reply{Text: "never", Delay: time.Hour}, false},
		{"while waiting for the stream to start", llmtest.Reply{Text: "never", Delay: time.Hour}, true},
		{"in the middle of a stream", llmtest.Reply{Text: "never finishes", StallAfter: 1}, true},
	}
	for _, tt := range tests {
		r, stream := tt.reply, tt.stream
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, r)
			p := newProvider(t, srv)
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := p.Complete(ctx, userRequest(stream))
				errc <- err
			}()
			srv.Wait(1)
			cancel()
			err := <-errc
			checkError(t, err, llm.ErrCanceled)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("errors.Is(err, context.Canceled) = false for %v", err)
			}
		})
	}
}
