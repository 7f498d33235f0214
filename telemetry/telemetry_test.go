package telemetry_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/telemetry"
	"github.com/slackbot/slackbot/telemetry/telemetrytest"
)

func TestFeedbackIsCountedByValueWithUnknownValuesAsOther(t *testing.T) {
	t.Parallel()
	m := telemetry.NewMetrics()
	for _, v := range []string{"positive", "positive", "negative", "U0123-secret-ish"} {
		m.Feedback(v)
	}
	f := telemetrytest.Scrape(t, telemetrytest.Serve(t, m)+"/metrics")
	for _, want := range []struct {
		value string
		n     float64
	}{{"positive", 2}, {"negative", 1}, {"other", 1}} {
		if got, _ := f.Value("slackbot_feedback_total", "value", want.value); got != want.n {
			t.Errorf("slackbot_feedback_total{value=%q} = %v, want %v", want.value, got, want.n)
		}
	}
	for _, v := range f.LabelValues("slackbot_feedback") {
		if strings.Contains(v, "U0123") {
			t.Errorf("a feedback value reached a label: %q", v)
		}
	}
}

func TestANilMetricsMeasuresNothingAndDoesNotPanic(t *testing.T) {
	t.Parallel()
	var m *telemetry.Metrics
	m.Feedback("positive")
	m.SessionQueued()()
	m.SessionStarted(time.Second)()
	m.SessionEnded("a", "success", time.Second)
	if m.Observer() != nil {
		t.Error("a nil Metrics has an observer")
	}
	rt := http.DefaultTransport
	if m.SlackTransport(rt) != rt {
		t.Error("a nil Metrics wraps the transport")
	}
}

// TestTheSlackTransportCountsErrorsAndHandsBackTheWholeBody runs a
// Slack-like server answering ok:false, a 429, a 500 and an answer larger
// than what the transport peeks at, and reads every body through the
// wrapped client.
func TestTheSlackTransportCountsErrorsAndHandsBackTheWholeBody(t *testing.T) {
	t.Parallel()
	big := `{"ok":true,"messages":["` + strings.Repeat("x", 10000) + `"]}`
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/api/chat.postMessage":
			_, _ = io.WriteString(w, `{"error":"channel_not_found","ok":false}`)
		case "/api/chat.update":
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
		case "/api/users.info":
			w.WriteHeader(http.StatusInternalServerError)
		case "/api/conversations.replies":
			_, _ = io.WriteString(w, big)
		case "/api/reactions.add":
			_, _ = io.WriteString(w, `{"ok":false,"error":"<script>not a code"}`)
		}
	}))
	defer slack.Close()
	m := telemetry.NewMetrics()
	client := &http.Client{Transport: m.SlackTransport(http.DefaultTransport)}
	bodies := map[string]string{}
	for _, method := range []string{"chat.postMessage", "chat.update", "users.info", "conversations.replies", "reactions.add"} {
		resp, err := client.Post(slack.URL+"/api/"+method, "application/x-www-form-urlencoded", strings.NewReader("channel=C1"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		bodies[method] = string(b)
	}
	if bodies["conversations.replies"] != big {
		t.Errorf("a large answer came back with %d bytes, want %d", len(bodies["conversations.replies"]), len(big))
	}
	if bodies["chat.postMessage"] != `{"error":"channel_not_found","ok":false}` {
		t.Errorf("an error answer came back as %q", bodies["chat.postMessage"])
	}
	f := telemetrytest.Scrape(t, telemetrytest.Serve(t, m)+"/metrics")
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"slackbot_slack_api_errors_total", []string{"method", "chat.postMessage", "error", "channel_not_found"}, 1},
		{"slackbot_slack_api_rate_limited_total", []string{"method", "chat.update"}, 1},
		{"slackbot_slack_api_errors_total", []string{"method", "users.info", "error", "http_500"}, 1},
		{"slackbot_slack_api_errors_total", []string{"method", "reactions.add", "error", "other"}, 1},
		{"slackbot_slack_api_requests_total", []string{"method", "conversations.replies"}, 1},
		{"slackbot_slack_api_request_duration_seconds", []string{"method", "chat.postMessage"}, 1},
	}
	for _, c := range checks {
		if got, _ := f.Value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if _, ok := f.Value("slackbot_slack_api_errors_total", "method", "conversations.replies"); ok {
		t.Error("a successful answer was counted as an error")
	}
	if _, ok := f.Value("slackbot_slack_api_errors_total", "method", "chat.update"); ok {
		t.Error("a 429 was counted as an error too")
	}
}

func TestReadyzIsReadyOnlyWhileEveryCheckPassesAndShowsNoErrorText(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	var mu sync.Mutex
	var down []string
	servers := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return down
	}
	setDown := func(names ...string) {
		mu.Lock()
		down = names
		mu.Unlock()
	}
	failing := telemetry.Check{Name: "upstream", Ready: func(context.Context) error {
		if len(servers()) > 0 {
			return io.ErrUnexpectedEOF // stands for an error naming a host
		}
		return nil
	}}
	url := telemetrytest.Serve(t, telemetry.NewMetrics(), telemetry.StoreCheck(store), telemetry.MCPCheck(servers), failing)

	if code, b := telemetrytest.Ready(t, url); code != http.StatusOK || b.Status != "ready" || b.Checks["state"] != "ok" || b.Checks["mcp"] != "ok" {
		t.Fatalf("all well: /readyz = %d %+v", code, b)
	}
	setDown("github", "jira")
	code, b := telemetrytest.Ready(t, url)
	if code != http.StatusServiceUnavailable || b.Checks["mcp"] != "down: github, jira" || b.Checks["upstream"] != "failing" {
		t.Fatalf("servers down: /readyz = %d %+v", code, b)
	}
	setDown()
	_ = store.Close()
	if code, b := telemetrytest.Ready(t, url); code != http.StatusServiceUnavailable || b.Checks["state"] != "closed" || b.Checks["mcp"] != "ok" {
		t.Fatalf("store closed: /readyz = %d %+v", code, b)
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz = %d while the process serves", resp.StatusCode)
	}
}

func TestANotReadyLineNamesNoAddress(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 6379}, Err: syscall.ECONNREFUSED}
	srv := httptest.NewServer(telemetry.Handler(nil, zap.New(core),
		telemetry.Check{Name: "state", Ready: func(context.Context) error { return fmt.Errorf("state: redis does not answer: %w", refused) }}))
	defer srv.Close()
	if code, _ := telemetrytest.Ready(t, srv.URL); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz answered %d with the store refusing connections", code)
	}
	lines := logs.FilterMessage("not ready").All()
	if len(lines) != 1 {
		t.Fatalf("%d not-ready lines, want 1", len(lines))
	}
	why := lines[0].ContextMap()["error"]
	if s, _ := why.(string); s != "connection refused" {
		t.Errorf("the not-ready line says %v, want connection refused and no address", why)
	}
}
