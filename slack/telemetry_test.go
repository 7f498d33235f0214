package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/telemetry"
	"github.com/slackbot/slackbot/telemetry/telemetrytest"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp"
)

// everything starts server-everything over stdio, its calls in queue (when
// one is named), and
// returns its registry and a warmed-up orchestrator; both close at cleanup.
func everything(t *testing.T, queue string) (*mcp.Registry, *tools.Orchestrator) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run make peers")
	}
	script, _ := filepath.Abs("../testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything is not installed (%v): run make peers", err)
	}
	reg, err := mcp.NewRegistry(map[string]config.MCPServer{"everything": {Command: node, Args: []string{script, "stdio"}, Queue: queue}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	var opts tools.Options
	if queue != "" {
		opts.Queues = map[string]int{queue: 2}
	}
	orch := tools.New(context.Background(), opts, reg.Providers()...)
	t.Cleanup(func() { _ = orch.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := orch.Warmup(ctx); err != nil {
		t.Fatal(err)
	}
	return reg, orch
}

const researcherPrompt = "You look things up for another agent."

// withResearcher gives the assistant a sub-agent, researcher.
var withResearcher = bottest.WithConfig(func(c *config.Config) {
	r := bottest.Agent()
	r.Name, r.Prompt, r.Description = "researcher", researcherPrompt, "Looks things up."
	c.Agents[r.Name] = r
	c.Agents[bottest.AgentName].Agents = []string{r.Name}
})

// toolThenReport answers the researcher with a report at once, and the
// assistant first with an MCP call and a sub-agent call in one turn, then
// with its answer.
func toolThenReport(r *llmtest.Recorded) llmtest.Reply {
	if strings.Contains(r.System, researcherPrompt) {
		b, _ := json.Marshal(map[string]any{"status": "success", "report_format": config.FormatSubAgent, "report_content": "Found: 42."})
		return llmtest.Call(agent.FinalReportTool, string(b))
	}
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool && strings.Contains(m.Content, "Echo: ping from slack") {
			return llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("The answer is *42*.")}}})
		}
	}
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: "everything__echo", Arguments: `{"message":"ping from slack"}`},
		{Name: agent.SubAgentPrefix + "researcher", Arguments: `{"prompt":"find the answer"}`},
	}}
}

// TestASessionWithAToolAndASubAgentIsMeasuredAndTraced runs a mention whose
// agent calls an MCP tool and a sub-agent, with two Web API calls failing
// on the way, then scrapes /metrics and reads the spans the OTLP receiver
// got.
func TestASessionWithAToolAndASubAgentIsMeasuredAndTraced(t *testing.T) {
	t.Parallel()
	_, orch := everything(t, "mcp")
	metrics := telemetry.NewMetrics()
	receiver := telemetrytest.NewReceiver(t)
	tracer, err := telemetry.NewTracer(config.Tracing{Endpoint: receiver.URL(), ServiceName: "slackbot-test"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tracer.Shutdown(context.Background()) })
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) { o.Metrics, o.Tracer = metrics, tracer }), bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }), withResearcher)
	url := telemetrytest.Serve(t, metrics, w.Bots[0].ReadyCheck(), telemetry.StoreCheck(w.Store))
	w.Model.Respond(toolThenReport)
	w.Slack.RateLimit("reactions.add", 1, 0)
	// A channel that appears once the bot has read the channel list: its
	// name is asked of conversations.info, which fails.
	w.Eventually("the channel list to be read", func() bool { return len(w.Slack.Calls("conversations.list")) > 0 })
	w.Slack.Fail("conversations.info", "internal_error", 1)
	const room = "C0METRICS"

	const question = "what is the answer, privately?"
	ts := w.Slack.Mention(room, asker, question)
	w.Answered(room, ts, "The answer is *42*.")
	var f telemetrytest.Families
	wait.Eventually(t, "the session to be counted and out of flight", func() bool {
		f = telemetrytest.Scrape(t, url+"/metrics")
		done, _ := f.Value("slackbot_sessions_total", "agent", bottest.AgentName, "status", "success")
		flying, _ := f.Value("slackbot_sessions_in_flight")
		// A scrape collects each metric on its own, so the session's
		// duration may show a scrape later than its count.
		timed, _ := f.Value("slackbot_session_duration_seconds", "agent", bottest.AgentName)
		return done == 1 && flying == 0 && timed == 1
	})

	t.Run("metrics", func(t *testing.T) {
		calls := float64(len(w.Model.Requests())) // assistant twice, researcher once
		if calls != 3 {
			t.Fatalf("%v model calls, want 3", calls)
		}
		usage := llmtest.DefaultUsage()
		for _, c := range []struct {
			name   string
			labels []string
			want   float64
		}{
			{"slackbot_session_duration_seconds", []string{"agent", bottest.AgentName}, 1},
			{"slackbot_session_queue_wait_seconds", nil, 1},
			{"slackbot_sessions_queued", nil, 0},
			{"slackbot_turn_duration_seconds", []string{"agent", bottest.AgentName}, 2},
			{"slackbot_turn_duration_seconds", []string{"agent", "researcher"}, 1},
			{"slackbot_llm_calls_total", []string{"model", "fake/m1", "outcome", "ok"}, calls},
			{"slackbot_llm_call_duration_seconds", []string{"model", "fake/m1"}, calls},
			{"slackbot_llm_tokens_total", []string{"model", "fake/m1", "kind", "input"}, calls * float64(usage.Input)},
			{"slackbot_llm_tokens_total", []string{"model", "fake/m1", "kind", "output"}, calls * float64(usage.Output)},
			{"slackbot_tool_calls_total", []string{"tool", "everything__echo", "outcome", "ok"}, 1},
			{"slackbot_tool_calls_total", []string{"tool", "agent__researcher", "outcome", "ok"}, 1},
			{"slackbot_tool_calls_total", []string{"tool", agent.FinalReportTool, "outcome", "ok"}, 2},
			{"slackbot_tool_call_duration_seconds", []string{"tool", "everything__echo"}, 1},
			{"slackbot_tool_queue_wait_seconds", []string{"queue", "mcp"}, 1},
			{"slackbot_slack_api_rate_limited_total", []string{"method", "reactions.add"}, 1},
			{"slackbot_slack_api_errors_total", []string{"method", "conversations.info", "error", "internal_error"}, 1},
		} {
			if got, ok := f.Value(c.name, c.labels...); !ok || got != c.want {
				t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
			}
		}
		if n, _ := f.Value("slackbot_slack_api_requests_total", "method", "chat.postMessage"); n < 1 {
			t.Errorf("no chat.postMessage request counted")
		}
		// The rate budgets: what the limiter let through, Slack's tiers as
		// the budgets, and the progress pace.
		posted, _ := f.Value("slackbot_slack_api_requests_total", "method", "chat.postMessage")
		if n, ok := f.Value("slackbot_slack_budget_calls_total", "method", "chat.postMessage"); !ok || n != posted {
			t.Errorf("slackbot_slack_budget_calls_total{chat.postMessage} = %v (present %v), want %v as on the wire", n, ok, posted)
		}
		if n, ok := f.Value("slackbot_slack_budget_per_minute", "method", "chat.update"); !ok || n != 50 {
			t.Errorf("slackbot_slack_budget_per_minute{chat.update} = %v (present %v), want Slack's tier 3, 50", n, ok)
		}
		if _, ok := f.Value("slackbot_slack_budget_utilisation_ratio", "method", "chat.postMessage"); !ok {
			t.Errorf("no budget utilisation for chat.postMessage")
		}
		if _, ok := f.Value("slackbot_slack_budget_wait_seconds_total", "method", "chat.postMessage"); !ok {
			t.Errorf("no budget wait for chat.postMessage")
		}
		if n, ok := f.Value("slackbot_progress_interval_seconds"); !ok || n <= 0 {
			t.Errorf("slackbot_progress_interval_seconds = %v (present %v)", n, ok)
		}
		for _, v := range f.LabelValues("slackbot_") {
			if strings.Contains(v, room) || strings.Contains(v, asker) || strings.Contains(v, ts) || strings.Contains(v, "xox") {
				t.Errorf("an identifier or a token reached a label: %q", v)
			}
		}
	})

	t.Run("traces", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tracer.Shutdown(ctx); err != nil { // sends what is left
			t.Fatal(err)
		}
		spans := receiver.Spans()
		byID := map[string]telemetrytest.Span{}
		for _, s := range spans {
			byID[s.SpanID] = s
		}
		named := func(name string) []telemetrytest.Span {
			var out []telemetrytest.Span
			for _, s := range spans {
				if s.Name == name {
					out = append(out, s)
				}
			}
			return out
		}
		one := func(name string) telemetrytest.Span {
			t.Helper()
			got := named(name)
			if len(got) != 1 {
				var all []string
				for _, s := range spans {
					all = append(all, s.Name)
				}
				t.Fatalf("%d spans named %q, want 1; spans: %v", len(got), name, all)
			}
			return got[0]
		}
		parentName := func(s telemetrytest.Span) string { return byID[s.ParentID].Name }

		session := one("session " + bottest.AgentName)
		if session.ParentID != "" || session.Service != "slackbot-test" {
			t.Errorf("the session span: parent %q, service %q; want a root span of slackbot-test", session.ParentID, session.Service)
		}
		if session.Attrs["slackbot.session.status"] != "success" || session.Attrs["gen_ai.agent.name"] != bottest.AgentName ||
			session.Attrs["slackbot.session.turns"] != "2" {
			t.Errorf("the session span's attributes: %v", session.Attrs)
		}
		turns := named("turn")
		if len(turns) != 3 { // two of the assistant, one of the researcher
			t.Fatalf("%d turn spans, want 3", len(turns))
		}
		chats := named("chat m1")
		if len(chats) != 3 {
			t.Fatalf("%d model call spans, want 3", len(chats))
		}
		for _, c := range chats {
			if parentName(c) != "turn" || c.Attrs["gen_ai.usage.input_tokens"] != "120" || c.Attrs["gen_ai.provider.name"] != "fake" {
				t.Errorf("a model call span under %q with %v", parentName(c), c.Attrs)
			}
		}
		echo := one("execute_tool everything__echo")
		sub := one("execute_tool agent__researcher")
		for _, s := range []telemetrytest.Span{echo, sub} {
			turn := byID[s.ParentID]
			if turn.Name != "turn" || turn.ParentID != session.SpanID || turn.Attrs["slackbot.turn"] != "1" {
				t.Errorf("%s hangs under %q (turn %s), want the session's first turn", s.Name, turn.Name, turn.Attrs["slackbot.turn"])
			}
			if s.Attrs["slackbot.tool.outcome"] != "ok" || s.Error {
				t.Errorf("%s: outcome %q, error %v", s.Name, s.Attrs["slackbot.tool.outcome"], s.Error)
			}
		}
		if echo.Attrs["slackbot.tool.queue"] != "mcp" || echo.Attrs["slackbot.tool.namespace"] != "everything" {
			t.Errorf("the MCP call's attributes: %v", echo.Attrs)
		}
		researcher := one("session researcher")
		if researcher.ParentID != sub.SpanID {
			t.Errorf("the sub-agent's session hangs under %q, want its tool call", parentName(researcher))
		}
		if researcher.Attrs["slackbot.depth"] != "2" {
			t.Errorf("the sub-agent's depth = %q", researcher.Attrs["slackbot.depth"])
		}
		for _, s := range spans {
			if s.TraceID != session.TraceID {
				t.Errorf("span %q is in another trace", s.Name)
			}
			if s.End < s.Start {
				t.Errorf("span %q ends before it starts", s.Name)
			}
		}
		for _, private := range []string{question, "ping from slack", "The answer is", "find the answer", "Found: 42", w.Slack.BotToken()} {
			if receiver.Contains(private) {
				t.Errorf("the exported spans carry %q", private)
			}
		}
	})
}

// TestReadyzFollowsTheSocketTheStoreAndTheMCPServers checks /readyz before
// the bot connects, when all is well, while its socket cannot come back,
// when an MCP server is down, and when the state store is closed.
func TestReadyzFollowsTheSocketTheStoreAndTheMCPServers(t *testing.T) {
	t.Parallel()
	reg, orch := everything(t, "mcp")
	metrics := telemetry.NewMetrics()
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) { o.Metrics = metrics }), bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }))

	// A bot built but not running yet is not ready.
	idle, err := slack.New(slack.Options{Config: w.Config, Runner: w.Runner, State: w.Store})
	if err != nil {
		t.Fatal(err)
	}
	if code, b := telemetrytest.Ready(t, telemetrytest.Serve(t, nil, idle.ReadyCheck())); code != http.StatusServiceUnavailable || b.Checks["slack"] != "socket not connected" {
		t.Fatalf("before connecting: /readyz = %d %+v", code, b)
	}

	url := telemetrytest.Serve(t, metrics, w.Bots[0].ReadyCheck(), telemetry.StoreCheck(w.Store), telemetry.MCPCheck(reg.Down))
	wantReady := func(what string, ready bool, check, state string) {
		t.Helper()
		var code int
		var b telemetrytest.Readiness
		wait.Eventually(t, what, func() bool {
			code, b = telemetrytest.Ready(t, url)
			return (code == http.StatusOK) == ready && b.Checks[check] == state
		})
	}
	wantReady("ready once connected", true, "slack", "ok")

	// The sockets drop and Slack refuses new ones for a while.
	w.Slack.Fail("apps.connections.open", "internal_error", 1000)
	w.Slack.DropConnections()
	wantReady("not ready while the socket is down", false, "slack", "socket not connected")
	w.Slack.Fail("apps.connections.open", "", 0)
	wantReady("ready again after reconnecting", true, "slack", "ok")

	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	wantReady("not ready with an MCP server down", false, "mcp", "down: everything")

	if err := w.Store.Close(); err != nil {
		t.Fatal(err)
	}
	wantReady("not ready with the store closed", false, "state", "closed")
}

// TestQueuedAndInFlightSessionsAreGaugedWhileTheyWait holds one session
// running with max_concurrent_sessions 1 while a second waits, then lets
// both finish.
func TestQueuedAndInFlightSessionsAreGaugedWhileTheyWait(t *testing.T) {
	t.Parallel()
	metrics := telemetry.NewMetrics()
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) { o.Metrics = metrics }), bottest.WithConfig(func(c *config.Config) { c.Slack.MaxConcurrentSessions = 1 }))
	url := telemetrytest.Serve(t, metrics)
	g := newGate()
	defer g.open()
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(lastUserText(r), "first") {
			<-g.ch
		}
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	ts1 := w.Slack.Mention(channel, asker, "first")
	w.Model.Wait(1)
	ts2 := w.Slack.Mention(channel, asker, "second")
	gauges := func() (flying, queued float64) {
		f := telemetrytest.Scrape(t, url+"/metrics")
		flying, _ = f.Value("slackbot_sessions_in_flight")
		queued, _ = f.Value("slackbot_sessions_queued")
		return flying, queued
	}
	wait.Eventually(t, "one session in flight and one queued", func() bool {
		flying, queued := gauges()
		return flying == 1 && queued == 1
	})
	g.open()
	w.Answered(channel, ts1, "Answer to first")
	w.Answered(channel, ts2, "Answer to second")
	wait.Eventually(t, "nothing in flight or queued", func() bool {
		flying, queued := gauges()
		return flying == 0 && queued == 0
	})
	f := telemetrytest.Scrape(t, url+"/metrics")
	if n, _ := f.Value("slackbot_session_queue_wait_seconds"); n != 2 {
		t.Errorf("%v slot waits observed, want 2", n)
	}
	if n, _ := f.Value("slackbot_sessions_total", "agent", bottest.AgentName, "status", "success"); n != 2 {
		t.Errorf("%v sessions counted, want 2", n)
	}
	// The second waited at least as long as the first held its slot.
	fam := f["slackbot_session_queue_wait_seconds"]
	if sum := fam.GetMetric()[0].GetHistogram().GetSampleSum(); sum <= 0 {
		t.Errorf("the waits sum to %v", sum)
	}
}

// TestAFeedbackClickIsCountedInTheMetrics clicks both buttons of an answer
// and scrapes slackbot_feedback_total.
func TestAFeedbackClickIsCountedInTheMetrics(t *testing.T) {
	t.Parallel()
	metrics := telemetry.NewMetrics()
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) { o.Metrics = metrics }))
	url := telemetrytest.Serve(t, metrics)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("Paris is the *capital*.")}}}))
	ts := w.Slack.Mention(channel, asker, "what is the capital of France?")
	bot := bottest.BotMessages(w.Answered(channel, ts, "capital"))
	answer := bot[len(bot)-1]
	positive, negative, ok := feedbackButtons(t, answer)
	if !ok {
		t.Fatalf("the answer has no feedback buttons: %s", answer.Blocks)
	}
	for i, v := range []string{positive, positive, negative} {
		user := []string{asker, "U0BOB", "U0CAT"}[i]
		w.Slack.AddUser(user, strings.ToLower(user))
		if _, err := w.Slack.Click(channel, answer.TS, user, feedbackAction, v); err != nil {
			t.Fatal(err)
		}
		thanked(w, user, ts, 1)
	}
	f := telemetrytest.Scrape(t, url+"/metrics")
	for value, want := range map[string]float64{"positive": 2, "negative": 1} {
		if got, _ := f.Value("slackbot_feedback_total", "value", value); got != want {
			t.Errorf("slackbot_feedback_total{value=%q} = %v, want %v", value, got, want)
		}
	}
}
