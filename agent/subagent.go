package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// Sub-agents: an agent's `agents:` are offered as agent__<name> tools. A
// call runs the sub-agent as a session of its own, nested in the caller's:
// same Runner (model providers, tools), the caller's context (so its
// cancellation and time limit bound the child), events to the caller's
// observer and the child's tree under the call's node. The caller reads the
// child's report as the tool's result and pays for its tokens.

// SubAgentPrefix starts the name of the tool that calls a sub-agent:
// agent__researcher calls the agent researcher.
const SubAgentPrefix = "agent__"

// link ties a session to the one that started it, by a sub-agent call or
// a router's handoff.
type link struct {
	path []string // the agents of the sessions above, top first
	call string   // the id of the parent's tool call that started the session
	op   *Op      // that call's node: the session's tree hangs under it
	// clock is the starting session's, which stops while this one waits
	// for a person; nil for a handoff, whose first session is over.
	clock *clock
}

// clockAbove is the clock of the session that started this one, nil for
// none.
func (l *link) clockAbove() *clock {
	if l == nil {
		return nil
	}
	return l.clock
}

// above returns the agents above a session, top first; nil for a top-level
// one. Appending to it never changes the link.
func (l *link) above() []string {
	if l == nil {
		return nil
	}
	return slices.Clip(l.path)
}

// node starts the root of a session's tree: a tree of its own for a
// top-level session, else a node under the call that started it, sharing
// that tree's lock and numbering.
func (l *link) node(in Input, now time.Time) *Op {
	name := "session"
	if in.Agent != nil {
		name = in.Agent.Name
	}
	if l == nil {
		return newTree(name, now)
	}
	return l.op.child("session", name, now)
}

var (
	subAgentSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["prompt"],` +
		`"properties":{"prompt":{"type":"string","minLength":1,"description":"The task, self-contained: the sub-agent sees nothing of this conversation, ` +
		`so include every fact, name and constraint it needs, and say what answer you want back."}}}`)
	subAgentArgs = mustCompile(subAgentSchema)
)

func mustCompile(doc json.RawMessage) *tools.Schema {
	s, err := tools.CompileSchema(doc)
	if err != nil {
		panic(fmt.Sprintf("built-in schema: %v", err))
	}
	return s
}

// subAgentDef is the tool that calls sub-agent a.
func subAgentDef(tool string, a *config.Agent) llm.ToolDef {
	desc := strings.TrimSpace(a.Description)
	if desc == "" {
		desc = "The agent " + a.Name + "."
	}
	return llm.ToolDef{Name: tool, Schema: subAgentSchema, Description: desc +
		" It is an agent of its own: give it a self-contained task in prompt (it sees nothing of this conversation); its final report is the result."}
}

// subFormat is the format a sub-agent answers in: json when its output is
// json (its schema is the contract), else sub-agent.
func subFormat(a *config.Agent) string {
	if a.Output.Format == config.FormatJSON {
		return config.FormatJSON
	}
	return config.FormatSubAgent
}

// maxDepth is how deep sessions may nest.
func (r *Runner) maxDepth() int {
	if r.MaxDepth > 0 {
		return r.MaxDepth
	}
	return config.DefaultMaxAgentDepth
}

// refuse says why a session whose agents are path (top first, itself last)
// may not start agent next, by a sub-agent call or a handoff, or "" when it
// may: an agent already in the chain would loop, and the chain may not grow
// beyond the maximum depth. The model reads it and can do the work itself.
func (r *Runner) refuse(path []string, next string) string {
	chain := strings.Join(append(slices.Clip(path), next), " → ")
	if slices.Contains(path, next) {
		return fmt.Sprintf("Refused: %s is already working on this request higher up (%s), so this would loop. "+
			"Do this part yourself, or with your other tools.", next, chain)
	}
	if max := r.maxDepth(); len(path) >= max {
		return fmt.Sprintf("Refused: agents may be nested at most %d deep, and %s would be number %d (%s). "+
			"Do this part yourself, or with your other tools.", max, next, len(path)+1, chain)
	}
	return ""
}

// callSubAgent runs an agent__<name> call: the sub-agent's session, whose
// report is the result (a failure report is an error result).
func (s *session) callSubAgent(ctx context.Context, c *llm.ToolCall, op *Op) callOutcome {
	name := s.subAgents[c.Name]
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, subAgentArgs)
	if msg != "" {
		return callOutcome{msg, true}
	}
	var args struct {
		Prompt string `json:"prompt"`
	}
	_ = json.Unmarshal(raw, &args)
	if why := s.r.refuse(s.path, name); why != "" {
		return callOutcome{why, true}
	}
	sub := s.r.Agents[name]
	if sub == nil {
		return callOutcome{fmt.Sprintf("The agent %s is not configured any more; continue without it.", name), true}
	}
	in := Input{Agent: sub, Format: subFormat(sub), Prompt: args.Prompt, Observer: s.in.Observer, Approver: s.in.Approver, Elicitor: s.in.Elicitor,
		SessionID: s.id + "/" + name + "-" + randomID(2)}
	res := s.r.run(ctx, in, &link{path: s.path, call: c.ID, op: op, clock: s.clock})
	s.mu.Lock()
	s.usage.Add(res.Usage)
	s.mu.Unlock()
	content := res.Report.Text()
	if strings.TrimSpace(content) == "" {
		content = "The agent " + name + " gave an empty answer."
	}
	failed := res.Report.Status == StatusFailure
	if !failed {
		s.mu.Lock()
		s.lastTool = content
		s.mu.Unlock()
	}
	return callOutcome{content, failed}
}
