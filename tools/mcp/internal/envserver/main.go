// Command envserver is an MCP server over stdio whose one tool, env,
// answers with the environment it was started with, one NAME=value a line:
// the mcp package's tests read what a server is given.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("envserver", "1.0.0")
	s.AddTool(mcp.NewTool("env", mcp.WithDescription("Lists the server's environment.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			env := os.Environ()
			sort.Strings(env)
			return mcp.NewToolResultText(strings.Join(env, "\n")), nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
