package slack_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp"
)

// servedMCP serves s over streamable HTTP on loopback as the MCP server
// name and returns a warmed-up orchestrator holding its tools; o are the
// registry's options (Elicitation for a server that asks).
func servedMCP(t *testing.T, name string, s *mcpserver.MCPServer, o mcp.Options) *tools.Orchestrator {
	t.Helper()
	srv := httptest.NewServer(mcpserver.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	reg, err := mcp.NewRegistry(map[string]config.MCPServer{name: {Type: "http", URL: srv.URL}}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	orch := tools.New(context.Background(), tools.Options{}, reg.Providers()...)
	t.Cleanup(func() { _ = orch.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := orch.Warmup(ctx); err != nil {
		t.Fatal(err)
	}
	return orch
}
