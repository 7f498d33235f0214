// Package fakeserver builds the misbehaving MCP servers the mcp package's
// fault tests run against, over stdio (through cmd testserver) or HTTP.
package fakeserver

import (
	"context"
	"encoding/json"
	"os"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Options choose the extra behaviour of a server.
type Options struct {
	// BadSchema adds tool "broken" whose inputSchema does not compile.
	BadSchema bool
	// CancelFile, when set, is written to when a hang call is cancelled.
	CancelFile string
}

// New returns a server with these tools: echo, crash (the process exits
// mid-call), hang (answers only when cancelled), freeze (the process stops
// answering anything, pings included), "get.thing" and
// "get thing" (names that collide once sanitized), read_file, write_file,
// delete_file, whereami (working directory and $SLACKBOT_PROBE), lookup (a top-level oneOf in its schema), and add_tool (adds tool "added", announcing list_changed).
func New(o Options) *server.MCPServer {
	s := server.NewMCPServer("fake", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithInstructions("Use echo to test."))
	text := func(t string) server.ToolHandlerFunc {
		return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(t), nil
		}
	}
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes message"),
		mcp.WithString("message", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Echo: " + r.GetString("message", "")), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exits the process mid-call")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("hang", mcp.WithDescription("Never answers")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			if o.CancelFile != "" {
				_ = os.WriteFile(o.CancelFile, []byte("cancelled"), 0o644)
			}
			return nil, ctx.Err()
		})
	s.AddTool(mcp.NewTool("freeze", mcp.WithDescription("Stops the process (SIGSTOP) after answering")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			go func() {
				time.Sleep(50 * time.Millisecond) // let the answer out first
				_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			}()
			return mcp.NewToolResultText("freezing"), nil
		})
	s.AddTool(mcp.NewTool("whereami", mcp.WithDescription("Says the working directory and $SLACKBOT_PROBE")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			wd, _ := os.Getwd()
			return mcp.NewToolResultText(wd + " " + os.Getenv("SLACKBOT_PROBE")), nil
		})
	s.AddTool(mcp.NewTool("get.thing"), text("dot"))
	s.AddTool(mcp.NewTool("get thing"), text("space"))
	s.AddTool(mcp.NewTool("read_file"), text("read"))
	s.AddTool(mcp.NewTool("write_file"), text("written"))
	s.AddTool(mcp.NewTool("delete_file"), text("deleted"))
	s.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("Adds tool added")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(mcp.NewTool("added"), text("I was added"))
			return mcp.NewToolResultText("ok"), nil
		})
	// Its schema's top-level oneOf is a keyword mcp-go's typed tool drops:
	// either a path or an id, never both, never neither.
	s.AddTool(mcp.NewToolWithRawSchema("lookup", "find a thing by path or by id",
		json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"id":{"type":"integer"}},`+
			`"oneOf":[{"required":["path"]},{"required":["id"]}],"additionalProperties":false}`)), text("found"))
	if o.BadSchema {
		s.AddTool(mcp.NewToolWithRawSchema("broken", "bad schema",
			json.RawMessage(`{"type":"object","properties":{"x":{"type":"no-such-type"}}}`)), text("never"))
	}
	return s
}
