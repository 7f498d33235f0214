package telemetry_test

import (
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/telemetry"
)

// BenchmarkMetricsObserver is what counting costs a session per model call
// and tool call.
func BenchmarkMetricsObserver(b *testing.B) {
	m := telemetry.NewMetrics()
	obs := m.Observer()
	call := agent.Event{Kind: agent.EventLLMCall, Session: "s", Agent: "assistant", LLM: &agent.LLMCallInfo{Provider: "openai", Model: "gpt-4.1",
		Usage: llm.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.004}, Latency: 2 * time.Second}}
	tool := agent.Event{Kind: agent.EventToolFinished, Session: "s", Agent: "assistant", Tool: &agent.ToolInfo{Name: "github__search_code",
		OK: true, Latency: 300 * time.Millisecond, Queue: "github", QueueWait: time.Millisecond}}
	b.ReportAllocs()
	for b.Loop() {
		obs(call)
		obs(tool)
	}
}
