package telemetry_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/telemetry"
	"github.com/slackbot/slackbot/telemetry/telemetrytest"
	"github.com/slackbot/slackbot/tools/mcp"
)

func TestReadyzIsNotReadyWithOneMCPServerDown(t *testing.T) {
	t.Parallel()
	// A registry whose one server cannot start: its command is missing.
	reg, err := mcp.NewRegistry(map[string]config.MCPServer{
		"github": {Type: "stdio", Command: filepath.Join(t.TempDir(), "no-such-server")},
	}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	url := telemetrytest.Serve(t, telemetry.NewMetrics(), telemetry.StoreCheck(state.NewMemory()), telemetry.MCPCheck(reg.Down))
	code, b := telemetrytest.Ready(t, url)
	if code != http.StatusServiceUnavailable || b.Status != "not ready" {
		t.Fatalf("one MCP server down: /readyz = %d %+v, want 503 not ready", code, b)
	}
	if b.Checks["mcp"] != "down: github" || b.Checks["state"] != "ok" {
		t.Fatalf("one MCP server down: checks %+v, want mcp down: github and state ok", b.Checks)
	}
}
