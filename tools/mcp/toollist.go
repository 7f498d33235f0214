package mcp

import (
	"encoding/json"
	"path"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// toolSet is a server's tools as offered: what Tools returns and how a
// full name maps back to the server's own.
type toolSet struct {
	list   []tools.Tool
	remote map[string]string // full name → the server's tool name
}

// offered reports whether the configuration lets tool name through: it
// must match an allow glob (when there are any) and no deny glob.
func offered(cfg config.MCPServer, name string) bool {
	for _, g := range cfg.ToolsDeny {
		if ok, _ := path.Match(g, name); ok {
			return false
		}
	}
	if len(cfg.ToolsAllow) == 0 {
		return true
	}
	for _, g := range cfg.ToolsAllow {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// buildTools names, filters and describes a server's tools. Two remote
// names that sanitize to the same full name get numeric suffixes, in the
// server's order.
func buildTools(server string, cfg config.MCPServer, remote []mcp.Tool) toolSet {
	ts := toolSet{remote: make(map[string]string, len(remote))}
	for _, rt := range remote {
		if !offered(cfg, rt.Name) {
			continue
		}
		name := tools.Disambiguate(tools.Name(server, rt.Name), func(n string) bool {
			_, taken := ts.remote[n]
			return taken
		})
		ts.remote[name] = rt.Name
		ts.list = append(ts.list, tools.Tool{
			Name:        name,
			Description: rt.Description,
			Schema:      inputSchema(rt),
			Queue:       cfg.Queue,
			Remote:      rt.Name,
			Timeout:     cfg.Timeout.D(),
			CacheTTL:    cfg.CacheTTL(rt.Name).D(),
			Approval:    tools.NewApproval(cfg.ToolApproval(rt.Name), mayWrite(rt), server, rt.Name, rt.Description, cfg.ApproversOrAsker()),
		})
	}
	return ts
}

// inputSchema is the tool's inputSchema exactly as the server sent it, so
// that keywords mcp-go's typed form does not model survive.
func inputSchema(t mcp.Tool) json.RawMessage {
	if len(t.RawInputSchema) > 0 {
		return t.RawInputSchema
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil
	}
	var doc struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	return doc.InputSchema
}

// mayWrite reports whether a tool may change something: unless annotated
// readOnlyHint: true, the MCP default is that it may.
func mayWrite(t mcp.Tool) bool {
	ro := t.Annotations.ReadOnlyHint
	return ro == nil || !*ro
}
