package telemetry_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/telemetry"
	"github.com/slackbot/slackbot/telemetry/telemetrytest"
)

// member is an agent of the scripted team, answered by the fake model.
func member(name string) *config.Agent {
	return &config.Agent{
		Name: name, Prompt: "You are the agent " + name + ".", Output: config.Output{Format: config.FormatMarkdown},
		AgentDefaults: config.AgentDefaults{Models: []string{"fake/m1"},
			MaxTurns: 5, MaxRetries: 2, MaxToolCallsPerTurn: 5, MaxOutputTokens: 1024,
			ContextWindow: config.DefaultContextWindow, ContextBuffer: config.DefaultContextBuffer,
			LLMTimeout: config.Duration(time.Minute), ToolTimeout: config.Duration(10 * time.Second),
			MaxSessionDuration: config.Duration(time.Minute), RestrictionMessage: config.DefaultRestrictionMessage,
		},
	}
}

// TestAHandOffAMadeUpToolAndARetryAreMeasuredAndTraced runs a router that
// hands off (after one failed model attempt) to an agent that calls a
// tool that does not exist before it answers: the made-up name stays out
// of every label and span, the retry is counted, and the destination's
// session hangs under the hand-off call.
func TestAHandOffAMadeUpToolAndARetryAreMeasuredAndTraced(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	var mu sync.Mutex
	scripts := map[string][]llmtest.Reply{
		"triage": {{Status: 500, ErrorType: "server_error"}, llmtest.Call(agent.HandoffTool, `{"agent":"billing"}`)},
		"billing": {llmtest.Call("rm_rf_zz_invented", `{}`), llmtest.Call(agent.FinalReportTool,
			`{"status":"success","report_format":"markdown","report_content":"Refunded."}`)},
	}
	model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		for name, replies := range scripts {
			if strings.Contains(r.System, "You are the agent "+name+".") && len(replies) > 0 {
				scripts[name] = replies[1:]
				return replies[0]
			}
		}
		return llmtest.Reply{Status: 500, ErrorMessage: "unscripted"}
	})
	provider, err := openai.New("fake", config.Provider{Type: "openai", BaseURL: model.URL() + "/v1/", APIKey: "sk-test-key",
		Models: map[string]config.Model{"m1": {Input: 1, Output: 2}}}) // dollars per million tokens
	if err != nil {
		t.Fatal(err)
	}
	triage, billing := member("triage"), member("billing")
	triage.Router.Destinations = []string{"billing"}
	runner := &agent.Runner{Providers: map[string]llm.Provider{"fake": provider},
		Agents: map[string]*config.Agent{"triage": triage, "billing": billing}, Backoff: func(int) time.Duration { return time.Millisecond }}

	metrics := telemetry.NewMetrics()
	receiver := telemetrytest.NewReceiver(t)
	tracer, err := telemetry.NewTracer(config.Tracing{Endpoint: receiver.URL()}, "test")
	if err != nil {
		t.Fatal(err)
	}
	res := runner.Run(context.Background(), agent.Input{Agent: triage, Prompt: "refund my order 12345",
		Observer: agent.Tee(metrics.Observer(), tracer.Observer())})
	if res.Report.Status != agent.StatusSuccess || !strings.Contains(res.Report.Text(), "Refunded.") {
		t.Fatalf("the run ended with %s: %s", res.Report.Status, res.Report.Text())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tracer.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	f := telemetrytest.Scrape(t, telemetrytest.Serve(t, metrics)+"/metrics")
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"slackbot_tool_calls_total", []string{"tool", "unknown", "outcome", "unknown_tool"}, 1},
		{"slackbot_tool_calls_total", []string{"tool", agent.HandoffTool, "outcome", "ok"}, 1},
		{"slackbot_llm_retries_total", []string{"model", "fake/m1"}, 1},
		{"slackbot_llm_calls_total", []string{"model", "fake/m1", "outcome", "ok"}, 3},
		{"slackbot_turn_duration_seconds", []string{"agent", "triage"}, 1},
		{"slackbot_turn_duration_seconds", []string{"agent", "billing"}, 2},
	} {
		if got, ok := f.Value(c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	u := llmtest.DefaultUsage()
	wantCost := 3 * (float64(u.Input)*1 + float64(u.Output)*2) / 1e6
	if got, _ := f.Value("slackbot_llm_cost_usd_total", "model", "fake/m1"); math.Abs(got-wantCost) > 1e-12 {
		t.Errorf("slackbot_llm_cost_usd_total = %v, want %v", got, wantCost)
	}
	for _, v := range f.LabelValues("slackbot_") {
		if strings.Contains(v, "rm_rf") {
			t.Errorf("a made-up tool name reached a label: %q", v)
		}
	}

	spans := receiver.Spans()
	byName := map[string]telemetrytest.Span{}
	byID := map[string]telemetrytest.Span{}
	for _, s := range spans {
		byName[s.Name], byID[s.SpanID] = s, s
	}
	handoff, dest, router := byName["execute_tool "+agent.HandoffTool], byName["session billing"], byName["session triage"]
	if handoff.SpanID == "" || dest.SpanID == "" || router.SpanID == "" {
		t.Fatalf("missing spans among %d received", len(spans))
	}
	if dest.ParentID != handoff.SpanID {
		t.Errorf("the destination's session hangs under %q, want the hand-off call", byID[dest.ParentID].Name)
	}
	if turn := byID[handoff.ParentID]; turn.Name != "turn" || turn.ParentID != router.SpanID {
		t.Errorf("the hand-off call hangs under %q, want the router's turn", turn.Name)
	}
	if router.Attrs["slackbot.session.status"] != agent.HandedOff || dest.Attrs["slackbot.session.status"] != agent.StatusSuccess {
		t.Errorf("statuses: router %q, destination %q", router.Attrs["slackbot.session.status"], dest.Attrs["slackbot.session.status"])
	}
	unknown, ok := byName["execute_tool unknown"]
	if !ok || !unknown.Error || unknown.Attrs["slackbot.tool.outcome"] != "unknown_tool" {
		t.Errorf("the made-up call's span: %+v", unknown)
	}
	for _, private := range []string{"rm_rf", "12345", "Refunded."} {
		if receiver.Contains(private) {
			t.Errorf("the exported spans carry %q", private)
		}
	}
}

func TestABadTracingEndpointIsRefusedWithoutItsCredentials(t *testing.T) {
	_, err := telemetry.NewTracer(config.Tracing{Endpoint: "http://user:s3cret@collector:43 18/v1/traces"}, "test")
	if err == nil {
		t.Fatal("a URL with a space in its port was accepted")
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "collector") {
		t.Errorf("the error shows the endpoint: %v", err)
	}
	if !strings.Contains(err.Error(), "tracing.endpoint") {
		t.Errorf("the error does not name the key: %v", err)
	}
}
