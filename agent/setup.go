package agent

import (
	"fmt"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// What a session of an agent starts from: the tools it is offered, its
// limits and format. Computed once per agent where possible.

// toolSet is what a session offers the model. It depends only on the
// agent, the format and the shared tools, so the Runner builds it once per
// agent and format: token-counting a hundred schemas per session would cost
// more than the turns themselves.
type toolSet struct {
	agent     *config.Agent // the agent it was built for
	gen       uint64        // the shared tools' generation it was built from
	defs      []llm.ToolDef // every tool the agent may call
	finalDefs []llm.ToolDef // the final report alone
	offered   map[string]bool
	tokens    int    // of defs
	prompt    string // the static part of the system prompt
	promptTok int
	schema    *tools.Schema     // the output schema of a json session
	subAgents map[string]string // agent__<name> → name
	dests     []string          // a router's destinations that are configured

	fit     ToolFit
	refused error // why the agent's sessions cannot start, with the numbers
	// With tool search on, defs holds the tools offered on every turn
	// (built-ins, pinned tools, tools__search) and the others wait in
	// searchable, found through index; loadBound and loadTokens bound how
	// many found tools a session keeps offering and what they weigh.
	index      *tools.Index
	searchable map[string]*llm.ToolDef
	loadBound  int
	loadTokens int
}

// toolSetKey names a cache entry by agent name, not by pointer: a reloaded
// configuration brings new *config.Agent values, which replace the entry of
// their name instead of adding one.
type toolSetKey struct {
	agent  string
	format string
}

// toolSet returns the tools for agent a in format: the final report always,
// the optional built-ins and the shared tools when one of the agent's globs
// matches them, its sub-agents, and router__handoff-to for a router. It is
// built again when the shared tools change (an MCP server starts late or
// restarts).
func (r *Runner) toolSet(a *config.Agent, format string) (*toolSet, error) {
	key := toolSetKey{a.Name, format}
	var gen uint64
	if r.Tools != nil {
		gen = r.Tools.Generation()
	}
	if ts, ok := r.toolSets.Load(key); ok && ts.(*toolSet).agent == a && ts.(*toolSet).gen == gen {
		return ts.(*toolSet), ts.(*toolSet).refused
	}
	builtins := builtinDefs(format)
	ts := &toolSet{agent: a, gen: gen, offered: map[string]bool{FinalReportTool: true}, subAgents: map[string]string{}}
	if format == config.FormatJSON {
		sch, err := a.Output.Validator()
		if err != nil {
			return nil, fmt.Errorf("agent %s output schema: %w", a.Name, err)
		}
		ts.schema = tools.NewSchema(sch)
	}
	ts.finalDefs = []llm.ToolDef{builtins[FinalReportTool]}
	ts.defs = append(ts.defs, builtins[FinalReportTool])
	for _, name := range []string{TaskStatusTool, BatchTool, FinishTool} {
		// Under restrict_output, finish is how a model ends without an
		// answer of its own, and the reminder names it: always offered.
		if a.AllowsTool(name) || name == FinishTool && a.RestrictOutput {
			ts.offered[name] = true
			ts.defs = append(ts.defs, builtins[name])
		}
	}
	for _, name := range a.Agents {
		tool := SubAgentPrefix + name
		if sub := r.Agents[name]; sub != nil && !ts.offered[tool] {
			ts.offered[tool], ts.subAgents[tool] = true, name
			ts.defs = append(ts.defs, subAgentDef(tool, sub))
		}
	}
	for _, d := range a.Router.Destinations {
		if r.Agents[d] != nil {
			ts.dests = append(ts.dests, d)
		}
	}
	if len(ts.dests) > 0 {
		ts.offered[HandoffTool] = true
		ts.defs = append(ts.defs, handoffDef(ts.dests, r.Agents))
	}
	instructions := ""
	var shared []llm.ToolDef
	if r.Tools != nil {
		for _, t := range r.Tools.Tools() {
			if _, builtin := builtins[t.Name]; builtin || t.Name == SearchTool || ts.offered[t.Name] || !a.AllowsTool(t.Name) {
				continue
			}
			ts.offered[t.Name] = true
			shared = append(shared, llm.ToolDef{Name: t.Name, Description: t.Description, Schema: t.Schema})
		}
		instructions = r.Tools.Instructions(func(name string) bool { return ts.offered[name] })
	}
	r.fitTools(ts, a, shared)
	if ts.refused == nil {
		ts.tokens = toolDefsTokens(ts.defs)
	} else {
		ts.tokens = ts.fit.SchemaTokens // never used: counting would only cost time
	}
	ts.fit.OfferedTokens = ts.tokens
	ts.prompt = systemPrompt(a, format, ts.offered, instructions)
	ts.promptTok = llm.CountTokens(ts.prompt)
	r.toolSets.Store(key, ts)
	r.logFit(ts)
	return ts, ts.refused
}

func formatOf(in Input) string {
	switch {
	case in.Format != "":
		return in.Format
	case in.Agent.Output.Format != "":
		return in.Agent.Output.Format
	}
	return config.FormatMarkdown
}

// withLimits returns a with the built-in default for every limit left at
// zero. config.Load already fills them; this keeps an Agent built in code
// from making every turn final or refusing every call.
func withLimits(a *config.Agent) *config.Agent {
	d := config.BuiltinDefaults()
	if a.MaxTurns > 0 && a.MaxToolCallsPerTurn > 0 && a.MaxOutputTokens > 0 && a.ContextWindow > 0 && a.RestrictionMessage != "" &&
		a.MaxSessionDuration > 0 {
		return a
	}
	c := *a
	if c.MaxTurns <= 0 {
		c.MaxTurns = d.MaxTurns
	}
	if c.MaxToolCallsPerTurn <= 0 {
		c.MaxToolCallsPerTurn = d.MaxToolCallsPerTurn
	}
	if c.MaxOutputTokens <= 0 {
		c.MaxOutputTokens = d.MaxOutputTokens
	}
	if c.ContextWindow <= 0 {
		c.ContextWindow = d.ContextWindow
		if c.ContextBuffer <= 0 {
			c.ContextBuffer = d.ContextBuffer
		}
	}
	if c.RestrictionMessage == "" {
		c.RestrictionMessage = d.RestrictionMessage
	}
	if c.MaxSessionDuration <= 0 {
		c.MaxSessionDuration = d.MaxSessionDuration
	}
	return &c
}
