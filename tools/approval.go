package tools

import (
	"net/http"
	"strings"
)

// Approval says that a tool's calls wait for a person's yes before they
// run, and what that person is shown about the tool. A Tool without one
// runs at once.
type Approval struct {
	// Server is the source people know the tool by: the MCP server's
	// name, or the REST tool's or OpenAPI import's.
	Server string
	// Tool is the tool's name at its source ("create_issue").
	Tool string
	// Summary is the first line of the tool's description.
	Summary string
	// Approvers may decide: "asker", Slack user ids and user-group ids.
	Approvers []string
}

// Approval modes, as the configuration writes them.
const (
	approvalAlways = "always"
	approvalWrites = "writes"
)

// NeedsApproval decides, from a configured mode (never, always, writes)
// and whether the tool may change something, whether its calls wait.
func NeedsApproval(mode string, writes bool) bool {
	return mode == approvalAlways || (mode == approvalWrites && writes)
}

// WritingMethod reports whether an HTTP method may change something: any
// but GET, HEAD and OPTIONS.
func WritingMethod(method string) bool {
	switch strings.ToUpper(method) {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// NewApproval describes a tool that needs approval, or returns nil when
// mode and writes say its calls run at once.
func NewApproval(mode string, writes bool, server, tool, description string, approvers []string) *Approval {
	if !NeedsApproval(mode, writes) {
		return nil
	}
	return &Approval{Server: server, Tool: tool, Summary: FirstLine(description), Approvers: approvers}
}

// FirstLine is the first non-empty line of s, trimmed.
func FirstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// Approval returns the Approval of the tool offered as name, and whether
// args are fit to ask a person about: a call whose arguments its schema
// refuses fails without asking anyone. nil when the call runs at once.
func (o *Orchestrator) Approval(name, args string) *Approval {
	e := o.cat.Load().entries[name]
	if e == nil || e.tool.Approval == nil {
		return nil
	}
	if _, _, msg := parseArguments(name, args, e.schema); msg != "" {
		return nil
	}
	return e.tool.Approval
}
