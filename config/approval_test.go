package config

import (
	"testing"
	"time"
)

func TestApprovalPolicies(t *testing.T) {
	t.Parallel()
	t.Run("policies are read beside cache and default to never, the asker and ten minutes", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + `mcp_servers:
  gh:
    command: node
    approval: writes
    tools_approval: {search: never, merge: always}
    approvers: [asker, U0ADMIN1, S0GROUP1]
  fs:
    command: node
rest_tools:
  hook:
    url: https://api.example.com/hook
    method: POST
    approval: always
openapi:
  pets:
    spec: https://api.example.com/openapi.json
    approval: writes
`})
		gh, fs := cfg.MCPServers["gh"], cfg.MCPServers["fs"]
		if gh.ToolApproval("search") != ApprovalNever || gh.ToolApproval("merge") != ApprovalAlways || gh.ToolApproval("other") != ApprovalWrites {
			t.Fatalf("gh modes %q %q %q", gh.ToolApproval("search"), gh.ToolApproval("merge"), gh.ToolApproval("other"))
		}
		if fs.ToolApproval("x") != ApprovalNever || len(fs.ApproversOrAsker()) != 1 || fs.ApproversOrAsker()[0] != ApproverAsker {
			t.Fatalf("fs mode %q approvers %v", fs.ToolApproval("x"), fs.ApproversOrAsker())
		}
		if got := gh.ApproversOrAsker(); len(got) != 3 || got[2] != "S0GROUP1" {
			t.Fatalf("gh approvers %v", got)
		}
		if cfg.RestTools["hook"].ApprovalMode() != ApprovalAlways || cfg.OpenAPI["pets"].ApprovalMode() != ApprovalWrites {
			t.Fatal("REST and OpenAPI approval not read")
		}
		if cfg.ApprovalTimeout.D() != 10*time.Minute {
			t.Fatalf("approval_timeout default %v", cfg.ApprovalTimeout)
		}
	})
	t.Run("bad modes, approvers and timeouts name their key", func(t *testing.T) {
		t.Parallel()
		_, err := loadFiles(t, map[string]string{"slackbot.yaml": baseConfig + `approval_timeout: 0s
mcp_servers:
  gh:
    command: node
    approval: sometimes
    tools_approval: {merge: maybe}
    approvers: [bob]
rest_tools:
  hook:
    url: https://api.example.com/hook
    approval: write
`})
		wantErrors(t, err,
			`approval_timeout: must be positive`,
			`mcp_servers.gh.approval: "sometimes" is not an approval mode; use one of: never, always, writes`,
			`mcp_servers.gh.tools_approval.merge: "maybe" is not an approval mode`,
			`mcp_servers.gh.approvers[0]: "bob" is neither "asker" nor a Slack user id`,
			`rest_tools.hook.approval: "write" is not an approval mode`)
	})
}
