package agent

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

// SessionTool is a tool one session is offered beside its agent's own: a
// headend's tool bound to where the question was asked (the files of its
// Slack thread). It is offered on every turn but the final one, to this
// session only: not to its sub-agents.
type SessionTool struct {
	Def llm.ToolDef
	// Run runs one call; its arguments were checked against Def.Schema.
	Run func(ctx context.Context, arguments json.RawMessage) SessionResult
}

// SessionResult is what a SessionTool returns.
type SessionResult struct {
	Content string
	IsError bool
	// Store puts Content whole in the session's tool_output store,
	// whatever its size, and gives the model its handle; Name is what the
	// store records as its source. Without a store Content is cut to the
	// agent's tool_output.max_bytes.
	Store bool
	Name  string
}

// sessionTool is the session tool called name, or nil.
func (s *session) sessionTool(name string) *SessionTool {
	for i := range s.in.Tools {
		if s.in.Tools[i].Def.Name == name {
			return &s.in.Tools[i]
		}
	}
	return nil
}

// sessionDefs are the definitions of the session's own tools.
func (s *session) sessionDefs() []llm.ToolDef {
	defs := make([]llm.ToolDef, 0, len(s.in.Tools))
	for _, t := range s.in.Tools {
		defs = append(defs, t.Def)
	}
	return defs
}

// runSessionTool runs a call of a session tool.
func (s *session) runSessionTool(ctx context.Context, t *SessionTool, c *llm.ToolCall) callOutcome {
	schema, err := tools.CompileSchema(t.Def.Schema)
	if err != nil {
		return callOutcome{t.Def.Name + " cannot be called: its schema is broken.", true}
	}
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, schema)
	if msg != "" {
		return callOutcome{msg, true}
	}
	res := t.Run(ctx, raw)
	if res.IsError || !res.Store {
		return callOutcome{res.Content, res.IsError}
	}
	if s.store != nil {
		e, err := s.store.Put(c.Name, cmpName(res.Name, c.Arguments), res.Content)
		if err == nil {
			return callOutcome{tooloutput.TooLargeMessage(e), false}
		}
		if s.log != nil {
			s.log.Warn("a session tool's result could not be stored; cut instead", zap.String("tool", c.Name), zap.Error(err))
		}
	}
	max := s.a.ToolOutput.MaxBytes
	if max <= 0 {
		max = config.DefaultToolResponseMaxByte
	}
	cut := tools.Truncate(max)(ctx, tools.Call{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)}, tools.Result{Content: res.Content})
	return callOutcome{cut.Content, false}
}

// cmpName is the arguments the store records for a session tool's result:
// its name when it gave one.
func cmpName(name, args string) string {
	if name == "" {
		return args
	}
	b, _ := json.Marshal(map[string]string{"file": name})
	return string(b)
}
