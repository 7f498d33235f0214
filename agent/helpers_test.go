package agent

// The scenario tests drive the real loop through the real SDK clients (the
// llm/openai and llm/anthropic adapters) against llmtest, the scripted fake
// model server, on 127.0.0.1. Tools are real tools.Provider implementations
// registered through tools.New. This file holds what the scenarios share: the
// harness, small tool providers, reply builders and ways to read what the
// model was sent.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/tools"
)

// testKey is the API key every fake provider is configured with; no log
// line, event, report or error may ever show it.
const testKey = "sk-test-SECRET123"

// testModel is the model the test agent names ("fake/test-model").
const testModel = "test-model"

// Prices of testModel, in USD per million tokens.
const (
	priceInput  = 3.0
	priceOutput = 15.0
)

// testAgent returns an agent with every limit set explicitly: config loading
// (which fills defaults) is tested elsewhere.
func testAgent() *config.Agent {
	return &config.Agent{
		Name:   "tester",
		Prompt: "You are a careful test agent. Use the tools, then report.",
		AgentDefaults: config.AgentDefaults{
			Models:                   []string{"fake/" + testModel},
			MaxTurns:                 6,
			MaxRetries:               2,
			MaxToolCallsPerTurn:      5,
			MaxOutputTokens:          1024,
			ContextWindow:            config.DefaultContextWindow,
			ContextBuffer:            config.DefaultContextBuffer,
			LLMTimeout:               config.Duration(30 * time.Second),
			ToolTimeout:              config.Duration(10 * time.Second),
			RestrictionMessage:       config.DefaultRestrictionMessage,
			RestrictionMaxInjections: 3,
		},
		Tools:          []string{"test__*"},
		Output:         config.Output{Format: config.FormatMarkdown},
		RestrictOutput: false,
	}
}

// wire selects the adapter a harness speaks through.
type wire string

const (
	wireOpenAI    wire = "openai"
	wireAnthropic wire = "anthropic"
)

// harness is one agent, one fake model server and a Runner wired to them.
type harness struct {
	t        *testing.T
	srv      *llmtest.Server
	runner   *Runner
	agent    *config.Agent
	events   *eventLog
	format   string   // Input.Format
	watch    Observer // also receives the session's events, after events
	approver Approver // Input.Approver
	files    []attach.File
}

type option func(*harnessConfig)

type harnessConfig struct {
	wire      wire
	providers []tools.Provider
	orchOpts  tools.Options
	agent     func(*config.Agent)
	replies   []llmtest.Reply
	format    string
}

// withTools registers tool providers on the Runner.
func withTools(p ...tools.Provider) option {
	return func(c *harnessConfig) { c.providers = append(c.providers, p...) }
}

// withAgent adjusts the test agent.
func withAgent(f func(a *config.Agent)) option {
	return func(c *harnessConfig) {
		prev := c.agent
		c.agent = func(a *config.Agent) {
			if prev != nil {
				prev(a)
			}
			f(a)
		}
	}
}

// withToolOptions sets the Orchestrator's options.
func withToolOptions(o tools.Options) option { return func(c *harnessConfig) { c.orchOpts = o } }

// withFormat sets Input.Format, as the Slack headend does.
func withFormat(f string) option { return func(c *harnessConfig) { c.format = f } }

// overAnthropic makes the harness speak the Anthropic Messages API.
func overAnthropic() option { return func(c *harnessConfig) { c.wire = wireAnthropic } }

// script queues the model's replies.
func script(r ...llmtest.Reply) option {
	return func(c *harnessConfig) { c.replies = append(c.replies, r...) }
}

func newHarness(t *testing.T, opts ...option) *harness {
	t.Helper()
	c := harnessConfig{wire: wireOpenAI}
	for _, o := range opts {
		o(&c)
	}
	srv := llmtest.NewServer(t, c.replies...)
	a := testAgent()
	if c.agent != nil {
		c.agent(a)
	}
	var orch *tools.Orchestrator
	if len(c.providers) > 0 {
		orch = tools.New(context.Background(), c.orchOpts, c.providers...)
	}
	h := &harness{t: t, srv: srv, agent: a, events: &eventLog{}, format: c.format}
	h.runner = &Runner{
		Providers: map[string]llm.Provider{"fake": newProvider(t, c.wire, "fake", srv)},
		Tools:     orch,
		Backoff:   fastBackoff,
	}
	return h
}

// fastBackoff keeps retries quick; Retry-After still applies on top.
func fastBackoff(int) time.Duration { return time.Millisecond }

// providerConfig is how a fake server is configured as a provider.
func providerConfig(w wire, srv *llmtest.Server) config.Provider {
	cfg := config.Provider{
		Type:   string(w),
		APIKey: testKey,
		Models: map[string]config.Model{testModel: {Input: priceInput, Output: priceOutput}},
	}
	if w == wireOpenAI {
		cfg.BaseURL = srv.URL() + "/v1/"
	} else {
		cfg.BaseURL = srv.URL()
	}
	return cfg
}

// newProvider builds the real adapter for w against srv.
func newProvider(t *testing.T, w wire, name string, srv *llmtest.Server) llm.Provider {
	t.Helper()
	cfg := providerConfig(w, srv)
	var (
		p   llm.Provider
		err error
	)
	switch w {
	case wireOpenAI:
		p, err = openai.New(name, cfg)
	case wireAnthropic:
		p, err = anthropic.New(name, cfg)
	}
	if err != nil {
		t.Fatalf("provider %s: %v", w, err)
	}
	return p
}

// run runs one session with a deadline that turns a hang into a failure.
func (h *harness) run(prompt string) *Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.runCtx(ctx, prompt)
}

// sessionWatchdog is how long a test waits for a session before failing:
// a session that outlives its context (a tool that ignores its timeout
// and is waited for) fails its test instead of hanging the suite.
const sessionWatchdog = 15 * time.Second

func (h *harness) runCtx(ctx context.Context, prompt string) *Result {
	h.t.Helper()
	done := make(chan *Result, 1)
	go func() {
		done <- h.runner.Run(ctx, Input{Agent: h.agent, Prompt: prompt, Files: h.files, Format: h.format, Observer: Tee(h.events.observe, h.watch), Approver: h.approver})
	}()
	var res *Result
	select {
	case res = <-done:
	case <-time.After(sessionWatchdog):
		h.t.Fatalf("the session did not end within %s: something it waits for ignores its deadline", sessionWatchdog)
	}
	if res == nil || res.Report == nil {
		h.t.Fatalf("Run returned no report: %+v", res)
	}
	return res
}

// requests returns what the model was sent, failing the test if the server
// ever had to answer without a script or refused a request as invalid.
func (h *harness) requests() []*llmtest.Recorded {
	h.t.Helper()
	reqs := h.srv.Requests()
	for i, r := range reqs {
		if r.Invalid != "" {
			h.t.Errorf("request %d was refused by the fake server as the real service would: %s", i+1, r.Invalid)
		}
	}
	if h.srv.Exhausted() {
		h.t.Errorf("the loop made more model calls than scripted (%d requests)", len(reqs))
	}
	return reqs
}

// wantRequests asserts the number of model calls and returns them.
func (h *harness) wantRequests(n int) []*llmtest.Recorded {
	h.t.Helper()
	reqs := h.requests()
	if len(reqs) != n {
		h.t.Fatalf("model calls = %d, want %d", len(reqs), n)
	}
	return reqs
}

// ---- replies the fake model sends ----

// tc is one tool call of a reply.
func tc(name, args string) llmtest.ToolCall { return llmtest.ToolCall{Name: name, Arguments: args} }

// jsonArgs encodes v as tool-call arguments.
func jsonArgs(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// reportArgs are agent__final_report arguments for a markdown session.
func reportArgs(status, content string) string {
	return jsonArgs(map[string]any{"status": status, "report_format": config.FormatMarkdown, "report_content": content})
}

func text(s string) llmtest.Reply { return llmtest.Reply{Text: s} }

// sequence returns the replies one by one, for responders that adjust
// them to the request; past the end it answers with an empty reply.
func sequence(replies ...llmtest.Reply) func() llmtest.Reply {
	var mu sync.Mutex
	return func() llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return llmtest.Reply{}
		}
		r := replies[0]
		replies = replies[1:]
		return r
	}
}

// ---- reading what the model was sent ----

// toolResults returns the tool messages of a request, in order.
func toolResults(r *llmtest.Recorded) []llm.Message {
	var out []llm.Message
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

// lastToolResult returns the content of the last tool message of a request.
func lastToolResult(t *testing.T, r *llmtest.Recorded) string {
	t.Helper()
	res := toolResults(r)
	if len(res) == 0 {
		t.Fatalf("request carries no tool result; messages: %s", dump(r.Messages))
	}
	return res[len(res)-1].Content
}

// toolResultFor returns the content of the tool message answering the call
// with the given id.
func toolResultFor(t *testing.T, r *llmtest.Recorded, id string) string {
	t.Helper()
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool && m.ToolCallID == id {
			return m.Content
		}
	}
	t.Fatalf("no tool result for call %s; messages: %s", id, dump(r.Messages))
	return ""
}

// wireMessage is one message of an OpenAI request body, system ones
// included, in the order sent.
type wireMessage struct {
	Role    string
	Content string
}

// wireMessages decodes an OpenAI request body into its messages, to see
// where injected system messages stand in the conversation.
func wireMessages(t *testing.T, r *llmtest.Recorded) []wireMessage {
	t.Helper()
	if r.Format != llmtest.FormatOpenAI {
		t.Fatalf("wireMessages reads OpenAI bodies, got %s", r.Format)
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatalf("decode request body: %v", err)
	}
	out := make([]wireMessage, 0, len(body.Messages))
	for _, m := range body.Messages {
		out = append(out, wireMessage{Role: m.Role, Content: contentText(m.Content)})
	}
	return out
}

func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// injected returns the system messages the loop added after the system
// prompt, in order (OpenAI wire only).
func injected(t *testing.T, r *llmtest.Recorded) []string {
	t.Helper()
	var out []string
	for i, m := range wireMessages(t, r) {
		if i > 0 && (m.Role == "system" || m.Role == "developer") {
			out = append(out, m.Content)
		}
	}
	return out
}

// wantFinalOnly asserts that a request offered only agent__final_report and
// required a tool call.
func wantFinalOnly(t *testing.T, r *llmtest.Recorded) {
	t.Helper()
	if !slices.Equal(r.ToolNames, []string{FinalReportTool}) {
		t.Errorf("tools offered = %v, want only %s", r.ToolNames, FinalReportTool)
	}
	if r.ToolChoice != string(llm.ToolChoiceRequired) {
		t.Errorf("tool_choice = %q, want %q", r.ToolChoice, llm.ToolChoiceRequired)
	}
}

// wantOpenTurn asserts that a request offered the given tools and left the
// choice to the model.
func wantOpenTurn(t *testing.T, r *llmtest.Recorded, tools ...string) {
	t.Helper()
	if !slices.Equal(r.ToolNames, tools) {
		t.Errorf("tools offered = %v, want %v", r.ToolNames, tools)
	}
	if r.ToolChoice == string(llm.ToolChoiceRequired) {
		t.Errorf("tool_choice = required on a turn that is not final")
	}
}

var nonceRe = regexp.MustCompile(`<ai-agent-([0-9A-Za-z]+)-FINAL`)

// nonceOf extracts the session's XML nonce from the system prompt the
// model received.
func nonceOf(t *testing.T, r *llmtest.Recorded) string {
	t.Helper()
	m := nonceRe.FindStringSubmatch(r.System)
	if m == nil {
		t.Fatalf("no XML nonce in the system prompt:\n%s", r.System)
	}
	return m[1]
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// ---- assertions on results ----

// wantReport checks the report's status and source and that it is not
// empty.
func wantReport(t *testing.T, res *Result, status string, src Source) {
	t.Helper()
	r := res.Report
	if r.Status != status || r.Source != src {
		t.Errorf("report status/source = %s/%s, want %s/%s (reason %q, content %q)", r.Status, r.Source, status, src, r.Reason, r.Content)
	}
	if strings.TrimSpace(r.Text()) == "" {
		t.Errorf("report is empty: %+v", r)
	}
	if r.Synthetic() != (src == SourceSynthetic) {
		t.Errorf("Synthetic() = %v for source %s", r.Synthetic(), r.Source)
	}
}

func wantTurns(t *testing.T, res *Result, n int) {
	t.Helper()
	if res.Turns != n {
		t.Errorf("turns = %d, want %d", res.Turns, n)
	}
}

// ---- events ----

// eventLog records a session's events; tool events arrive from several
// goroutines.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) observe(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func (l *eventLog) ofKind(k EventKind) []Event {
	var out []Event
	for _, e := range l.all() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func (l *eventLog) notices() []string {
	var out []string
	for _, e := range l.ofKind(EventNotice) {
		out = append(out, e.Notice)
	}
	return out
}

// hasNotice reports whether a notice containing s was emitted.
func (l *eventLog) hasNotice(s string) bool {
	return slices.ContainsFunc(l.notices(), func(n string) bool { return strings.Contains(n, s) })
}

// bufferLogger is a zap logger at debug level writing JSON lines to a buffer.
func bufferLogger() (*zap.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(buf), zapcore.DebugLevel)), buf
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ---- tools ----

// fn is one tool of a toolbox: its JSON Schema and what a call does.
type fn struct {
	schema string
	call   func(ctx context.Context, args map[string]any) (tools.Result, error)
}

// toolbox is a tools.Provider in namespace "test" whose tools are plain
// functions.
type toolbox map[string]fn

func (toolbox) Namespace() string { return "test" }

// Instructions, Warmup and Close: a toolbox holds nothing.
func (toolbox) Instructions() string         { return "" }
func (toolbox) Warmup(context.Context) error { return nil }
func (toolbox) Close() error                 { return nil }

func (b toolbox) Tools(context.Context) ([]tools.Tool, error) {
	names := make([]string, 0, len(b))
	for n := range b {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]tools.Tool, 0, len(b))
	for _, n := range names {
		out = append(out, tools.Tool{Name: tools.Name("test", n), Description: "Test tool " + n + ".", Schema: json.RawMessage(b[n].schema)})
	}
	return out, nil
}

func (b toolbox) Call(ctx context.Context, c tools.Call) (tools.Result, error) {
	short := strings.TrimPrefix(c.Name, "test"+tools.Separator)
	f, ok := b[short]
	if !ok {
		return tools.Result{}, fmt.Errorf("toolbox has no %s", c.Name)
	}
	var args map[string]any
	if err := json.Unmarshal(c.Arguments, &args); err != nil {
		return tools.Result{}, err
	}
	return f.call(ctx, args)
}

const (
	anyArgs  = `{"type":"object"}`
	textArgs = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`
)

// echo answers "echo: <text>".
func echo() fn {
	return fn{textArgs, func(_ context.Context, a map[string]any) (tools.Result, error) {
		return tools.Result{Content: fmt.Sprintf("echo: %v", a["text"])}, nil
	}}
}

// failing returns an error.
func failing(msg string) fn {
	return fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) {
		return tools.Result{}, fmt.Errorf("%s", msg)
	}}
}

// panicking panics.
func panicking(v any) fn {
	return fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) { panic(v) }}
}

// hanging ignores its context and blocks until the test ends.
func hanging(t *testing.T) fn {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) {
		<-release
		return tools.Result{Content: "too late"}, nil
	}}
}

// constant answers with r.
func constant(r tools.Result) fn {
	return fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) { return r, nil }}
}

// barrier lets n calls through only once all n have arrived: calls made one
// after the other would wait for ever, so it proves they run in parallel. A
// call gives up when its context ends.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

// meet waits at the barrier and answers "met <who>".
func (b *barrier) meet() fn {
	return fn{`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`,
		func(ctx context.Context, a map[string]any) (tools.Result, error) {
			b.mu.Lock()
			b.arrived++
			if b.arrived == b.n {
				close(b.open)
			}
			b.mu.Unlock()
			select {
			case <-b.open:
				return tools.Result{Content: fmt.Sprintf("met %v", a["who"])}, nil
			case <-ctx.Done():
				return tools.Result{}, fmt.Errorf("nobody came: %w", ctx.Err())
			}
		}}
}
