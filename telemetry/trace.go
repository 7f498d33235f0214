package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
)

// Tracer turns sessions into OpenTelemetry spans sent over OTLP/HTTP: a
// span per session, under it one per turn, under each turn one per model
// call and per tool call; a sub-agent's session (or a router's
// destination) under the tool call that started it. Spans carry names,
// sizes, tokens, cost and timings, never prompts, arguments, results or
// answers. A nil *Tracer traces nothing.
type Tracer struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

// Environment variables that turn tracing on without tracing.endpoint; the
// exporter reads them itself.
var otlpEnv = []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// NewTracer builds the tracer cfg describes, or returns nil when tracing is
// off: no tracing.endpoint and no OTLP endpoint in the environment. It
// connects to nothing until the first spans are exported.
func NewTracer(cfg config.Tracing, version string) (*Tracer, error) {
	var opts []otlptracehttp.Option
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil {
			// url.Error quotes the whole URL, credentials included: keep
			// only what is wrong with it.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("tracing.endpoint is not a URL: %w", err)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	} else if !envSet() {
		return nil, nil
	}
	if len(cfg.Headers) > 0 {
		h := make(map[string]string, len(cfg.Headers))
		for k, v := range cfg.Headers {
			h[k] = v.Reveal()
		}
		opts = append(opts, otlptracehttp.WithHeaders(h))
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	name := cfg.ServiceName
	if name == "" {
		name = config.DefaultServiceName
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", name), attribute.String("service.version", version)))
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Ratio()))))
	return &Tracer{tp: tp, tracer: tp.Tracer("github.com/slackbot/slackbot/telemetry")}, nil
}

func envSet() bool {
	for _, k := range otlpEnv {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// Shutdown exports the spans not sent yet and stops the tracer; ctx bounds
// how long it tries.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Observer returns an observer that traces one request's sessions (the
// top-level session, its sub-agents and hand-offs). Use a new one for each
// request.
func (t *Tracer) Observer() agent.Observer {
	if t == nil {
		return nil
	}
	r := &traceRun{t: t, spans: map[*agent.Op]trace.Span{}, turns: map[*agent.Op]*agent.Op{}}
	return r.observe
}

// traceRun holds the spans of one request. Spans stay in the map after
// they end: a router's destination starts after the hand-off call ended,
// and still hangs under it.
type traceRun struct {
	t     *Tracer
	mu    sync.Mutex
	spans map[*agent.Op]trace.Span // by node of the operation tree
	turns map[*agent.Op]*agent.Op  // a session's node → its open turn's node
}

func (r *traceRun) observe(e agent.Event) {
	if e.Op == nil {
		return
	}
	switch e.Kind {
	case agent.EventSessionStarted:
		depth := len(e.Path)
		r.start(e.Op, "session "+e.Agent, e.Time,
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", e.Agent),
			attribute.String("slackbot.session.id", e.Session),
			attribute.Int("slackbot.depth", depth))
	case agent.EventTurnStarted:
		session := e.Op.Parent()
		r.endTurn(session, e.Time)
		r.start(e.Op, "turn", e.Time, attribute.Int("slackbot.turn", e.Turn), attribute.Bool("slackbot.turn.final", e.Final))
		r.mu.Lock()
		r.turns[session] = e.Op
		r.mu.Unlock()
	case agent.EventLLMRetry:
		if s := r.span(e.Op); s != nil && e.LLM != nil {
			s.AddEvent("model call retried", trace.WithTimestamp(e.Time), trace.WithAttributes(
				attribute.String("gen_ai.request.model", e.LLM.Model), attribute.Int64("slackbot.wait_ms", e.LLM.Wait.Milliseconds())))
		}
	case agent.EventLLMCall:
		r.llmCall(e)
	case agent.EventToolStarted:
		if e.Tool == nil {
			return
		}
		// Named when it ends: only then is it known whether the model
		// called a tool that exists or made a name up.
		r.start(e.Op, "execute_tool", e.Time,
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.call.id", e.Tool.ID),
			attribute.Int("slackbot.tool.arg_bytes", e.Tool.ArgBytes))
	case agent.EventToolFinished:
		r.toolFinished(e)
	case agent.EventResumed:
		r.approvalEvent(e)
	case agent.EventSessionDone:
		r.endTurn(e.Op, e.Time)
		r.sessionDone(e)
	}
}

// start opens op's span under the span of its nearest traced ancestor.
func (r *traceRun) start(op *agent.Op, name string, at time.Time, attrs ...attribute.KeyValue) trace.Span {
	ctx := context.Background()
	r.mu.Lock()
	for p := op.Parent(); p != nil; p = p.Parent() {
		if s, ok := r.spans[p]; ok {
			ctx = trace.ContextWithSpan(ctx, s)
			break
		}
	}
	r.mu.Unlock()
	_, s := r.t.tracer.Start(ctx, name, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	r.mu.Lock()
	r.spans[op] = s
	r.mu.Unlock()
	return s
}

func (r *traceRun) span(op *agent.Op) trace.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spans[op]
}

// endTurn ends the session's open turn, at the turn's own end.
func (r *traceRun) endTurn(session *agent.Op, fallback time.Time) {
	r.mu.Lock()
	turn := r.turns[session]
	delete(r.turns, session)
	s := r.spans[turn]
	r.mu.Unlock()
	if turn == nil || s == nil {
		return
	}
	snap := turn.Snapshot()
	if !snap.OK {
		s.SetStatus(codes.Error, "the turn's model call failed")
	}
	s.End(trace.WithTimestamp(opEnd(turn, fallback)))
}

// llmCall records a finished model call as a span from its node's start
// to its end.
func (r *traceRun) llmCall(e agent.Event) {
	info := e.LLM
	if info == nil {
		return
	}
	snap := e.Op.Snapshot()
	start, end := snap.Start, snap.End
	if end.IsZero() {
		end = e.Time
	}
	model := info.Model
	if model == "" {
		model = "unknown"
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", info.Provider),
		attribute.String("gen_ai.request.model", info.Model),
		attribute.Int("gen_ai.usage.input_tokens", info.Usage.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", info.Usage.OutputTokens),
		attribute.Float64("slackbot.cost_usd", info.Usage.CostUSD),
	}
	if info.FinishReason != "" {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(info.FinishReason)}))
	}
	if info.Usage.CacheReadTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.usage.cache_read_input_tokens", info.Usage.CacheReadTokens))
	}
	if info.Purpose != "" {
		attrs = append(attrs, attribute.String("slackbot.llm.purpose", info.Purpose))
	}
	attrs = append(attrs, attribute.Int("slackbot.llm.tool_calls", info.ToolCalls))
	s := r.start(e.Op, "chat "+model, start, attrs...)
	if info.Err != "" {
		// The error's text may name hosts; the log has it.
		s.SetStatus(codes.Error, "every attempt failed")
	}
	s.End(trace.WithTimestamp(end))
}

func (r *traceRun) toolFinished(e agent.Event) {
	info := e.Tool
	s := r.span(e.Op)
	if info == nil || s == nil {
		return
	}
	outcome := toolOutcome(info)
	s.SetName("execute_tool " + toolLabel(info))
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.tool.name", toolLabel(info)),
		attribute.String("slackbot.tool.outcome", outcome),
		attribute.Int("slackbot.tool.result_bytes", info.ResultBytes),
	}
	if info.Namespace != "" {
		attrs = append(attrs, attribute.String("slackbot.tool.namespace", info.Namespace))
	}
	if info.Queue != "" {
		attrs = append(attrs, attribute.String("slackbot.tool.queue", info.Queue),
			attribute.Int64("slackbot.tool.queue_wait_ms", info.QueueWait.Milliseconds()))
	}
	if info.Cached {
		attrs = append(attrs, attribute.Bool("slackbot.tool.cached", true))
	}
	if info.Oversize {
		attrs = append(attrs, attribute.Bool("slackbot.tool.oversize", true))
	}
	s.SetAttributes(attrs...)
	if !info.OK {
		s.SetStatus(codes.Error, outcome)
	}
	s.End(trace.WithTimestamp(e.Time))
}

func (r *traceRun) sessionDone(e agent.Event) {
	s := r.span(e.Op)
	if s == nil {
		return
	}
	if sum := e.Result; sum != nil {
		s.SetAttributes(attribute.String("slackbot.session.status", sum.Status),
			attribute.Int("slackbot.session.turns", sum.Turns), attribute.Int("slackbot.session.tool_calls", sum.ToolCalls))
		if sum.Status == agent.StatusFailure {
			s.SetStatus(codes.Error, clip(e.Notice, 200))
		}
	}
	if u := e.Usage; u != nil {
		s.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", u.InputTokens),
			attribute.Int("gen_ai.usage.output_tokens", u.OutputTokens), attribute.Float64("slackbot.cost_usd", u.CostUSD))
	}
	s.End(trace.WithTimestamp(e.Time))
}

// clip bounds a status description.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
