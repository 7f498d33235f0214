package config

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Approval modes: when a person must say yes before a tool's call runs.
const (
	ApprovalNever  = "never"  // calls run at once (the default)
	ApprovalAlways = "always" // every call waits for a person
	// ApprovalWrites makes the calls that may change something wait: an MCP
	// tool not annotated readOnlyHint: true, a REST call whose method is
	// not GET, HEAD or OPTIONS.
	ApprovalWrites = "writes"
)

// ApproverAsker names the person who asked the question as an approver.
const ApproverAsker = "asker"

// DefaultApprovalTimeout is how long a call waits for a decision before it
// counts as denied.
const DefaultApprovalTimeout = 10 * time.Minute

var approvalModes = []string{ApprovalNever, ApprovalAlways, ApprovalWrites}

// approverRe matches a Slack user id (U…, W…) or user-group id (S…).
var approverRe = regexp.MustCompile(`^[UWS][A-Z0-9]{2,}$`)

// ApprovalPolicy is when the calls of an MCP server, a REST tool or an
// OpenAPI import wait for a person's approval, and who may give it.
type ApprovalPolicy struct {
	// Approval is never (default), always or writes.
	Approval string `yaml:"approval"`
	// Approvers may decide: "asker" (the default: the person who asked),
	// Slack user ids and user-group ids. slack.admins always may.
	Approvers []string `yaml:"approvers"`
}

// ApprovalMode is the mode of the policy, never when unset.
func (p ApprovalPolicy) ApprovalMode() string {
	if p.Approval == "" {
		return ApprovalNever
	}
	return p.Approval
}

// ApproversOrAsker is who may decide: the approvers, or the asker alone.
func (p ApprovalPolicy) ApproversOrAsker() []string {
	if len(p.Approvers) == 0 {
		return []string{ApproverAsker}
	}
	return p.Approvers
}

// ToolApproval is the mode for one of the server's tools (by its own
// name): its tools_approval entry, else the server's approval.
func (s MCPServer) ToolApproval(tool string) string {
	if m, ok := s.ToolsApproval[tool]; ok && m != "" {
		return m
	}
	return s.ApprovalMode()
}

// checkApproval validates a policy under key (and tools_approval when the
// caller passes it).
func checkApproval(w *walker, key string, p ApprovalPolicy, perTool map[string]string) {
	if m := p.Approval; m != "" && !slices.Contains(approvalModes, m) {
		w.errorf(key+".approval", "%q is not an approval mode; use one of: %s (default never)", m, oneOf(approvalModes))
	}
	for _, tool := range sortedKeys(perTool) {
		if m := perTool[tool]; !slices.Contains(approvalModes, m) {
			w.errorf(key+".tools_approval."+tool, "%q is not an approval mode; use one of: %s", m, oneOf(approvalModes))
		}
	}
	for i, a := range p.Approvers {
		if a != ApproverAsker && !approverRe.MatchString(a) {
			w.errorf(fmt.Sprintf("%s.approvers[%d]", key, i), "%q is neither %q nor a Slack user id (U…, W…) or user-group id (S…)", a, ApproverAsker)
		}
	}
}

// validateApprovals checks every approval policy and approval_timeout.
func (c *Config) validateApprovals(w *walker) {
	for _, name := range sortedKeys(c.MCPServers) {
		s := c.MCPServers[name]
		checkApproval(w, "mcp_servers."+name, s.ApprovalPolicy, s.ToolsApproval)
	}
	for _, name := range sortedKeys(c.RestTools) {
		checkApproval(w, "rest_tools."+name, c.RestTools[name].ApprovalPolicy, nil)
	}
	for _, name := range sortedKeys(c.OpenAPI) {
		checkApproval(w, "openapi."+name, c.OpenAPI[name].ApprovalPolicy, nil)
	}
	if w.present["approval_timeout"] && c.ApprovalTimeout.D() <= 0 {
		w.errorf("approval_timeout", "must be positive (how long a call waits for a person's decision; default %s)", DefaultApprovalTimeout)
	}
}
