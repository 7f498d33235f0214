package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// warmCalls run before timing starts, so that node's JIT has compiled the
// server's hot path for both sides alike.
const warmCalls = 2000

// BenchmarkEchoRoundTrip measures one echo call to server-everything over
// stdio through our provider and the orchestrator (provider) against a bare
// mcp-go client on the same server (bare): the difference is our cost.
func BenchmarkEchoRoundTrip(b *testing.B) {
	node, script := npmPeer(b, "server-everything")
	b.Run("provider", func(b *testing.B) {
		_, orch := setup(b, map[string]config.MCPServer{"every": stdio(node, script, "stdio")}, Options{}, tools.Options{})
		warm(b, orch)
		ctx := context.Background()
		for range warmCalls {
			orch.Execute(ctx, "1", "every__echo", `{"message":"hello"}`, time.Minute)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			out := orch.Execute(ctx, "1", "every__echo", `{"message":"hello"}`, time.Minute)
			if !out.OK() {
				b.Fatal(out.Content)
			}
		}
	})
	// handle isolates our provider from the orchestrator's own work
	// (argument validation, the call's goroutine and timer, logging).
	b.Run("handle", func(b *testing.B) {
		reg, err := NewRegistry(map[string]config.MCPServer{"every": stdio(node, script, "stdio")}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = reg.Close() })
		p, _ := reg.Acquire("every")
		ctx := context.Background()
		if err := p.Warmup(ctx); err != nil {
			b.Fatal(err)
		}
		call := tools.Call{ID: "1", Name: "every__echo", Arguments: []byte(`{"message":"hello"}`)}
		for range warmCalls {
			_, _ = p.Call(ctx, call)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if res, err := p.Call(ctx, call); err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		c, req := bareEcho(b, node, script)
		ctx := context.Background()
		for range warmCalls {
			_, _ = c.CallTool(ctx, req)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, err := c.CallTool(ctx, req)
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEchoRatio alternates one call through the orchestrator and our
// provider with one call from a bare mcp-go client, each to its own
// server-everything process, and reports the ratio of their total times.
// Alternating puts both sides under the same machine load at every moment,
// which separate sub-benchmarks on a busy machine do not.
func BenchmarkEchoRatio(b *testing.B) {
	node, script := npmPeer(b, "server-everything")
	_, orch := setup(b, map[string]config.MCPServer{"every": stdio(node, script, "stdio")}, Options{}, tools.Options{})
	warm(b, orch)
	c, req := bareEcho(b, node, script)
	ctx := context.Background()
	ours := func() {
		if out := orch.Execute(ctx, "1", "every__echo", `{"message":"hello"}`, time.Minute); !out.OK() {
			b.Fatal(out.Content)
		}
	}
	bare := func() {
		if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
			b.Fatal(err)
		}
	}
	for range warmCalls {
		ours()
		bare()
	}
	var tOurs, tBare time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		ours()
		mid := time.Now()
		bare()
		tOurs += mid.Sub(start)
		tBare += time.Since(mid)
		n++
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(n), "ours-ns/call")
	b.ReportMetric(float64(tBare.Nanoseconds())/float64(n), "bare-ns/call")
	b.ReportMetric(float64(tOurs)/float64(tBare), "ratio")
}

// bareEcho starts server-everything under a plain mcp-go client and returns
// it with an echo request.
func bareEcho(b *testing.B, node, script string) (*client.Client, mcp.CallToolRequest) {
	c, err := client.NewStdioMCPClient(node, nil, script, "stdio")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"message": "hello"}
	return c, req
}
