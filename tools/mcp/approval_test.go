package mcp

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/slackbot/slackbot/config"
)

func TestAToolsApprovalFollowsItsAnnotationsAndThePolicy(t *testing.T) {
	t.Parallel()
	remote := []mcp.Tool{
		mcp.NewTool("read", mcp.WithDescription("Reads.\nMore."), mcp.WithReadOnlyHintAnnotation(true)),
		mcp.NewTool("delete", mcp.WithDestructiveHintAnnotation(true)),
		mcp.NewTool("plain"), // no annotations: it may write
		mcp.NewTool("merge", mcp.WithReadOnlyHintAnnotation(true)),
	}
	tests := []struct {
		name   string
		policy config.MCPServer
		asks   map[string]bool
	}{
		{"never (the default) asks about nothing", config.MCPServer{}, map[string]bool{}},
		{"writes asks about every tool not annotated read-only", config.MCPServer{ApprovalPolicy: config.ApprovalPolicy{Approval: "writes"}},
			map[string]bool{"s__delete": true, "s__plain": true}},
		{"always asks about every tool", config.MCPServer{ApprovalPolicy: config.ApprovalPolicy{Approval: "always"}},
			map[string]bool{"s__read": true, "s__delete": true, "s__plain": true, "s__merge": true}},
		{"tools_approval overrides the server's mode per tool", config.MCPServer{ApprovalPolicy: config.ApprovalPolicy{Approval: "writes"},
			ToolsApproval: map[string]string{"merge": "always", "plain": "never"}}, map[string]bool{"s__delete": true, "s__merge": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, tool := range buildTools("s", tt.policy, remote).list {
				if got := tool.Approval != nil; got != tt.asks[tool.Name] {
					t.Errorf("%s: asks %v, want %v", tool.Name, got, tt.asks[tool.Name])
				}
				if a := tool.Approval; a != nil && (a.Server != "s" || len(a.Approvers) != 1 || a.Approvers[0] != "asker") {
					t.Errorf("%s: approval %+v", tool.Name, a)
				}
				if a := tool.Approval; a != nil && tool.Name == "s__read" && a.Summary != "Reads." {
					t.Errorf("summary %q, want the description's first line", a.Summary)
				}
			}
		})
	}
}
