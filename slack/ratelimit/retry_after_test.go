package ratelimit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
)

// slackAnswering429Once is a Web API that answers its first call with a 429
// and Retry-After (in seconds, as Slack sends it), and every later one ok.
func slackAnswering429Once(t *testing.T, retryAfter string) string {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", retryAfter)
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// callThrough makes one chat.update call through the limiter and returns
// its status.
func callThrough(t *testing.T, l *Transport, base string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/chat.update", strings.NewReader("channel=C1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := l.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestARetryAfterOfFiveSecondsStillRefusesACallTwoSecondsLater(t *testing.T) {
	t.Parallel()
	base := slackAnswering429Once(t, "5")
	clk := newFakeClock()
	// Plenty of tokens: only the 429 can refuse a call.
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.update": {PerMinute: 600, Burst: 50}})
	if callThrough(t, l, base) != http.StatusTooManyRequests {
		t.Fatal("the server did not answer 429")
	}
	take := func() bool {
		_, ok := l.TakeNow(context.Background(), "chat.update", "", Answer)
		return ok
	}
	clk.advance(2 * time.Second)
	if take() {
		t.Fatal("a call 2 s after a 429 with Retry-After: 5 was let through: the header was not read as seconds")
	}
	clk.advance(3*time.Second - time.Millisecond)
	if take() {
		t.Fatal("a call 4.999 s after a 429 with Retry-After: 5 was let through")
	}
	clk.advance(time.Millisecond)
	if !take() {
		t.Fatal("no token once the 5 s of Retry-After had passed")
	}
}

func TestAfterA429TheBucketRefillsAtTheLoweredRate(t *testing.T) {
	t.Parallel()
	// One token a second and a burst of one: the 429's call takes the
	// only token, so every later token is a refill.
	base := slackAnswering429Once(t, "1")
	clk := newFakeClock()
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.update": {PerMinute: 60, Burst: 1}})
	if callThrough(t, l, base) != http.StatusTooManyRequests {
		t.Fatal("the server did not answer 429")
	}
	take := func() bool {
		_, ok := l.TakeNow(context.Background(), "chat.update", "", Answer)
		return ok
	}
	// The rate is halved to one token every 2 s: 1 s after the 429 (the
	// Retry-After is over) the bucket holds half a token.
	clk.advance(time.Second)
	if take() {
		t.Fatal("a token came 1/rate after the 429: the bucket refilled at the rate before it")
	}
	clk.advance(time.Second)
	if !take() {
		t.Fatal("no token 2/rate after the 429")
	}
	// And the next one again 2 s later, not 1.
	clk.advance(time.Second)
	if take() {
		t.Fatal("a second token came 1 s after the first: the lowered rate was not used for the refill")
	}
	clk.advance(time.Second)
	if !take() {
		t.Fatal("no second token 2 s after the first")
	}
}
