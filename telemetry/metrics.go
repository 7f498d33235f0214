// Package telemetry measures the bot for the people who run it: Prometheus
// metrics of sessions, model calls, tool calls and Slack Web API calls, read
// from the agent's session events and from the Slack client's HTTP traffic;
// OpenTelemetry spans of each session; and the HTTP endpoint that serves
// the metrics with liveness and readiness checks.
//
// Labels are bounded: agent, model, tool, queue, status, outcome, Slack
// method and error code; never a user, a channel, a session or a message.
package telemetry

import (
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/tools"
)

// Metrics holds the bot's Prometheus collectors in a registry of its own.
// A nil *Metrics measures nothing, so callers need not check.
type Metrics struct {
	reg *prometheus.Registry

	sessions        *prometheus.CounterVec
	sessionDuration *prometheus.HistogramVec
	inFlight        prometheus.Gauge
	queued          prometheus.Gauge
	slotWait        prometheus.Histogram
	turnDuration    *prometheus.HistogramVec

	llmCalls    *prometheus.CounterVec
	llmDuration *prometheus.HistogramVec
	llmRetries  *prometheus.CounterVec
	tokens      *prometheus.CounterVec
	cost        *prometheus.CounterVec

	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	toolWait     *prometheus.HistogramVec

	slackCalls    *prometheus.CounterVec
	slackErrors   *prometheus.CounterVec
	slackLimited  *prometheus.CounterVec
	slackDuration *prometheus.HistogramVec

	feedback  *prometheus.CounterVec
	streams   *prometheus.CounterVec
	approvals *prometheus.CounterVec
	budgets   *budgetCollector
}

// Buckets, in seconds, for the kinds of wait the bot measures.
var (
	sessionBuckets = []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600}
	callBuckets    = []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}
	toolBuckets    = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}
	waitBuckets    = []float64{0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
)

// NewMetrics returns the bot's metrics, with the Go runtime's and the
// process's, registered in a registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	m.sessions = counter("slackbot_sessions_total",
		"Sessions the Slack headend ran to the end, by agent and final status (success, partial, failure, stopped, interrupted).", "agent", "status")
	m.sessionDuration = histogram("slackbot_session_duration_seconds",
		"From a request's arrival to its answer posted in Slack, waits included.", sessionBuckets, "agent")
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "slackbot_sessions_in_flight",
		Help: "Sessions running now (holding one of max_concurrent_sessions)."})
	m.queued = prometheus.NewGauge(prometheus.GaugeOpts{Name: "slackbot_sessions_queued",
		Help: "Requests waiting now for one of max_concurrent_sessions."})
	m.slotWait = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "slackbot_session_queue_wait_seconds",
		Help: "How long a request waited for one of max_concurrent_sessions.", Buckets: waitBuckets})
	m.reg.MustRegister(m.inFlight, m.queued, m.slotWait)
	m.turnDuration = histogram("slackbot_turn_duration_seconds",
		"One turn of a session (a model call and the tool calls it asked for), sub-agents' turns included.", callBuckets, "agent")

	m.llmCalls = counter("slackbot_llm_calls_total", "Model calls, by model and outcome (ok, error: every attempt failed).", "model", "outcome")
	m.llmDuration = histogram("slackbot_llm_call_duration_seconds", "Successful model calls, retries included.", callBuckets, "model")
	m.llmRetries = counter("slackbot_llm_retries_total", "Model attempts that failed and were retried or passed to a fallback.", "model")
	m.tokens = counter("slackbot_llm_tokens_total", "Tokens the model providers reported, by model and kind (input, output, cache_read, cache_write).", "model", "kind")
	m.cost = counter("slackbot_llm_cost_usd_total", "Cost of the model calls in US dollars, from the configured prices.", "model")

	m.toolCalls = counter("slackbot_tool_calls_total",
		"Tool calls, by tool and outcome (ok, error, timeout, canceled, invalid_arguments, unknown_tool, …); unknown tools are counted as tool \"unknown\".", "tool", "outcome")
	m.toolDuration = histogram("slackbot_tool_call_duration_seconds", "Tool calls from start to result, queue wait included.", toolBuckets, "tool")
	m.toolWait = histogram("slackbot_tool_queue_wait_seconds", "How long tool calls waited for a slot of their queue.", waitBuckets, "queue")

	m.slackCalls = counter("slackbot_slack_api_requests_total", "Slack Web API requests, by method.", "method")
	m.slackErrors = counter("slackbot_slack_api_errors_total",
		"Slack Web API requests that failed, by method and error: Slack's error code, http_<status>, or transport.", "method", "error")
	m.slackLimited = counter("slackbot_slack_api_rate_limited_total", "Slack Web API requests answered 429 (rate limited), by method.", "method")
	m.slackDuration = histogram("slackbot_slack_api_request_duration_seconds", "Slack Web API requests, until the response's headers.", prometheus.DefBuckets, "method")

	m.feedback = counter("slackbot_feedback_total", "Feedback on answers, by value (positive, negative).", "value")
	m.streams = counter("slackbot_slack_streams_total",
		"Sessions that chose a streamed message, by outcome: answered (ended by chat.stopStream), answered_below (the stop failed; the answer posted as messages), fallback_budget and fallback_refused (shown as a progress message instead).", "outcome")
	m.approvals = newApprovals(m.reg)
	m.budgets = newBudgetCollector()
	m.reg.MustRegister(m.budgets)

	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus's text format (or OpenMetrics
// when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Registry is where the metrics are registered, for a caller that adds
// collectors of its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SessionQueued counts a request waiting for one of
// max_concurrent_sessions; call the function it returns when the wait
// ends, whether the request got a slot or gave up.
func (m *Metrics) SessionQueued() (done func()) {
	if m == nil {
		return func() {}
	}
	m.queued.Inc()
	var once sync.Once
	return func() { once.Do(m.queued.Dec) }
}

// SessionStarted counts a session that got one of max_concurrent_sessions
// after waiting wait (0 when one was free) and is in flight until the
// function it returns is called.
func (m *Metrics) SessionStarted(wait time.Duration) (done func()) {
	if m == nil {
		return func() {}
	}
	m.slotWait.Observe(wait.Seconds())
	m.inFlight.Inc()
	var once sync.Once
	return func() { once.Do(m.inFlight.Dec) }
}

// SessionEnded counts a session whose answer was posted, with its final
// status and how long it took from the request's arrival.
func (m *Metrics) SessionEnded(agentName, status string, took time.Duration) {
	if m == nil {
		return
	}
	m.sessions.WithLabelValues(agentName, sessionStatus(status)).Inc()
	m.sessionDuration.WithLabelValues(agentName).Observe(took.Seconds())
}

// sessionStatus keeps the status label to the known values.
func sessionStatus(s string) string {
	switch s {
	case agent.StatusSuccess, agent.StatusPartial, agent.StatusFailure, "stopped", "interrupted":
		return s
	}
	return "other"
}

// Feedback counts a person's feedback on an answer: "positive" or
// "negative"; anything else is counted as "other".
func (m *Metrics) Feedback(value string) {
	if m == nil {
		return
	}
	if value != "positive" && value != "negative" {
		value = "other"
	}
	m.feedback.WithLabelValues(value).Inc()
}

// Observer returns an observer for one request's sessions (the top-level
// session, its sub-agents and hand-offs): it counts model calls, tokens,
// cost, retries, tool calls and turns. Use a new one for each request.
func (m *Metrics) Observer() agent.Observer {
	if m == nil {
		return nil
	}
	o := &sessionMetrics{m: m, turns: map[string]turnStart{}}
	return o.observe
}

// sessionMetrics follows the open turn of each session of one request.
type sessionMetrics struct {
	m     *Metrics
	mu    sync.Mutex
	turns map[string]turnStart // by session id
}

type turnStart struct {
	agent string
	op    *agent.Op
	at    time.Time
}

func (o *sessionMetrics) observe(e agent.Event) {
	m := o.m
	switch e.Kind {
	case agent.EventTurnStarted:
		o.endTurn(e)
		o.mu.Lock()
		o.turns[e.Session] = turnStart{agent: e.Agent, op: e.Op, at: e.Time}
		o.mu.Unlock()
	case agent.EventSessionDone:
		o.endTurn(e)
	case agent.EventLLMRetry:
		if e.LLM != nil {
			m.llmRetries.WithLabelValues(modelLabel(e.LLM)).Inc()
		}
	case agent.EventLLMCall:
		info := e.LLM
		if info == nil {
			return
		}
		model := modelLabel(info)
		if info.Err != "" {
			m.llmCalls.WithLabelValues(model, "error").Inc()
			return
		}
		m.llmCalls.WithLabelValues(model, "ok").Inc()
		m.llmDuration.WithLabelValues(model).Observe(info.Latency.Seconds())
		u := info.Usage
		for _, k := range []struct {
			kind string
			n    int
		}{{"input", u.InputTokens}, {"output", u.OutputTokens}, {"cache_read", u.CacheReadTokens}, {"cache_write", u.CacheWriteTokens}} {
			if k.n > 0 {
				m.tokens.WithLabelValues(model, k.kind).Add(float64(k.n))
			}
		}
		if u.CostUSD > 0 {
			m.cost.WithLabelValues(model).Add(u.CostUSD)
		}
	case agent.EventResumed:
		if isApproval(e) {
			m.approvals.WithLabelValues(approvalDecision(e.Wait)).Inc()
		}
	case agent.EventToolFinished:
		info := e.Tool
		if info == nil {
			return
		}
		tool := toolLabel(info)
		m.toolCalls.WithLabelValues(tool, toolOutcome(info)).Inc()
		m.toolDuration.WithLabelValues(tool).Observe(info.Latency.Seconds())
		if info.Queue != "" {
			m.toolWait.WithLabelValues(info.Queue).Observe(info.QueueWait.Seconds())
		}
	}
}

// endTurn observes the duration of the session's open turn, if any.
func (o *sessionMetrics) endTurn(e agent.Event) {
	o.mu.Lock()
	t, ok := o.turns[e.Session]
	delete(o.turns, e.Session)
	o.mu.Unlock()
	if !ok {
		return
	}
	o.m.turnDuration.WithLabelValues(t.agent).Observe(opEnd(t.op, e.Time).Sub(t.at).Seconds())
}

// opEnd is when op finished, or fallback when it has no end yet.
func opEnd(op *agent.Op, fallback time.Time) time.Time {
	if op != nil {
		if s := op.Snapshot(); !s.End.IsZero() {
			return s.End
		}
	}
	return fallback
}

var labelRe = regexp.MustCompile(`^[A-Za-z0-9_.:/@-]{1,100}$`)

// modelLabel is "provider/model", or "unknown" when the call failed before
// a model was chosen.
func modelLabel(info *agent.LLMCallInfo) string {
	name := info.Model
	if info.Provider != "" && name != "" {
		name = info.Provider + "/" + name
	}
	if !labelRe.MatchString(name) {
		return "unknown"
	}
	return name
}

// toolLabel is the tool's name; a name the model made up is "unknown", so
// the label stays bounded by the configured tools.
func toolLabel(info *agent.ToolInfo) string {
	if info.Failure == string(tools.FailUnknownTool) || !labelRe.MatchString(info.Name) {
		return "unknown"
	}
	return info.Name
}

// toolOutcome is ok, the orchestrator's failure kind, or error for a tool
// that answered with an error of its own.
func toolOutcome(info *agent.ToolInfo) string {
	switch {
	case info.OK:
		return "ok"
	case info.Failure != "":
		return info.Failure
	}
	return "error"
}
