package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// benchProvider answers instantly from prepared responses: a tool call on
// every turn but the last, then the final report. Its own cost is a count
// over the messages, so what the benchmark measures is the loop.
type benchProvider struct {
	turns     int
	toolCall  llm.Response
	finalCall llm.Response
}

func (p *benchProvider) Name() string { return "bench" }

func (p *benchProvider) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	n := 0
	for i := range req.Messages {
		if req.Messages[i].Role == llm.RoleAssistant {
			n++
		}
	}
	if n+1 >= p.turns {
		return &p.finalCall, nil
	}
	return &p.toolCall, nil
}

// benchTools offers n tools with a small object schema; each answers "ok".
type benchTools struct {
	tools.Base
	n int
}

func (b benchTools) Namespace() string { return "bench" }

func (b benchTools) Tools(context.Context) ([]tools.Tool, error) {
	out := make([]tools.Tool, b.n)
	for i := range out {
		out[i] = tools.Tool{Name: fmt.Sprintf("bench__tool_%03d", i), Description: "A benchmark tool that looks things up.",
			Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"]}`)}
	}
	return out, nil
}

func (benchTools) Call(context.Context, tools.Call) (tools.Result, error) {
	return tools.Result{Content: "ok: 3 results"}, nil
}

// BenchmarkSessionTurn measures the loop's own cost per turn — building the
// request, the context guard, dispatch, argument validation, events and the
// operation tree — with a model and tools that answer instantly, 100 tools
// registered. Each iteration is one session of turnsPerSession turns; the
// per-turn figures are reported as ns/turn and allocs/turn.
func BenchmarkSessionTurn(b *testing.B) {
	const turnsPerSession = 10
	ctx := context.Background()
	orch := tools.New(ctx, tools.Options{MaxResultBytes: config.DefaultToolResponseMaxByte}, benchTools{n: 100})
	p := &benchProvider{
		turns: turnsPerSession,
		toolCall: llm.Response{Provider: "bench", Model: "m", FinishReason: llm.FinishToolCalls, Message: llm.Message{Role: llm.RoleAssistant,
			ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "bench__tool_042", Arguments: `{"q":"golang release notes","limit":5}`}}}},
		finalCall: llm.Response{Provider: "bench", Model: "m", FinishReason: llm.FinishToolCalls, Message: llm.Message{Role: llm.RoleAssistant,
			ToolCalls: []llm.ToolCall{{ID: "call_f", Name: FinalReportTool, Arguments: `{"status":"success","report_format":"markdown","report_content":"Done: three results."}`}}}},
	}
	a := benchAgent()
	r := &Runner{Providers: map[string]llm.Provider{"bench": p}, Tools: orch}
	events := 0
	obs := func(Event) { events++ }
	// Warm the tokenizer's vocabulary outside the measurement.
	llm.CountTokens("warm up")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := r.Run(ctx, Input{Agent: a, Prompt: "Find the release notes.", Observer: obs})
		if res.Report.Source != SourceToolCall || res.Turns != turnsPerSession {
			b.Fatalf("session ended with %s after %d turns: %s", res.Report.Source, res.Turns, res.Report.Reason)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turnsPerSession), "ns/turn")
	b.ReportMetric(float64(testing.AllocsPerRun(20, func() {
		r.Run(ctx, Input{Agent: a, Prompt: "Find the release notes.", Observer: obs})
	}))/turnsPerSession, "allocs/turn")
}

func benchAgent() *config.Agent {
	return &config.Agent{
		Name: "bench", Prompt: "You look things up.", Tools: []string{"bench__*"},
		AgentDefaults: config.AgentDefaults{
			Models: []string{"bench/m"}, MaxTurns: 50, MaxRetries: 0, MaxToolCallsPerTurn: 10, MaxOutputTokens: 4096,
			ContextWindow: config.DefaultContextWindow, ContextBuffer: config.DefaultContextBuffer,
			LLMTimeout: config.Duration(config.DefaultLLMTimeout), ToolTimeout: config.Duration(config.DefaultToolTimeout),
			// Every schema is offered, as it was before tool search: the
			// figures stay comparable across commits.
			ToolSearch: config.ToolSearchNever,
		},
		Output: config.Output{Format: config.FormatMarkdown},
	}
}

// guardResult is a tool result at the size cap (tool_output.max_bytes,
// 12288 bytes), the largest message a turn normally appends.
func guardResult() llm.Message {
	var sb strings.Builder
	for sb.Len() < config.DefaultToolResponseMaxByte {
		sb.WriteString(`{"id": 4182, "title": "Release notes for v2.3", "url": "https://example.com/releases/v2.3", "tags": ["go", "slack"]}` + "\n")
	}
	return llm.Message{Role: llm.RoleTool, Content: sb.String()[:config.DefaultToolResponseMaxByte]}
}

// BenchmarkContextGuard12KB is what the context guard costs a turn for one
// tool result at the size cap: its estimate when appended, and the check
// before the next turn while the session is not near its limit.
func BenchmarkContextGuard12KB(b *testing.B) {
	m := guardResult()
	b.SetBytes(int64(len(m.Content)))
	b.ReportAllocs()
	for b.Loop() {
		g := newGuard(config.DefaultContextWindow, 2000)
		g.add(&m)
		if g.over([]llm.Message{m}) {
			b.Fatal("a 12 KB result overflowed a 128k window")
		}
	}
}

// BenchmarkContextGuardExact12KB is the exact o200k count of the same
// result, which the guard makes only near the limit, once per message.
func BenchmarkContextGuardExact12KB(b *testing.B) {
	m := guardResult()
	llm.CountTokens("warm up")
	b.SetBytes(int64(len(m.Content)))
	b.ReportAllocs()
	for b.Loop() {
		_ = messageTokens(&m)
	}
}
