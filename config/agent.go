package config

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// Tool names the agent file's keys refer to.
const (
	finalReportTool = "agent__final_report"
	handoffTool     = "router__handoff-to"
	subAgentPrefix  = "agent__"
)

var agentNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// reservedAgentNames would collide with the built-in agent__ tools.
var reservedAgentNames = []string{"final_report", "task_status", "batch"}

// loadAgentFile reads one agent file: YAML frontmatter between "---"
// lines, then the system prompt. Keys the file omits are taken from
// cfg.Defaults (as Load leaves them: complete; a zero AgentDefaults means
// the built-in defaults). The agent is validated against cfg: its models'
// providers, and its sub-agents and router destinations among cfg.Agents.
// cfg may be nil.
func loadAgentFile(path string, cfg *Config, o Options) (*Agent, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	p := &problems{}
	for _, prov := range cfg.LLM.Providers {
		p.secret(prov.APIKey.Reveal(), 4)
	}
	for _, s := range []Secret{cfg.Slack.BotToken, cfg.Slack.AppToken, cfg.State.RedisURL} {
		p.secret(s.Reveal(), 4)
	}
	a, w := loadAgent(path, cfg, o.lookup(), p)
	if w != nil {
		all := map[string]*Agent{a.Name: a}
		for name, other := range cfg.Agents {
			if name != a.Name {
				all[name] = other
			}
		}
		checkRefs(all, map[string]*walker{a.Name: w}, false)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return a, nil
}

// loadAgent reads, decodes, completes and validates one agent file,
// reporting problems to p. It always returns an agent, at least named, so
// that other agents' references to it resolve; the walker is nil when the
// file could not be decoded.
func loadAgent(file string, cfg *Config, lookup func(string) (string, bool), p *problems) (*Agent, *walker) {
	name := strings.TrimSuffix(filepath.Base(file), ".md")
	a := &Agent{Name: name, Path: file}
	if !agentNameRe.MatchString(name) {
		p.add(file, 0, "", "agent name %q (the file name without .md) may contain only letters, digits, '_' and '-'; rename the file", name)
	} else if slices.Contains(reservedAgentNames, name) {
		p.add(file, 0, "", "agent name %q is taken by the built-in tool %s; rename the file", name, subAgentPrefix+name)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		p.add(file, 0, "", "%v", err)
		return a, nil
	}
	front, body, line, ferr := splitFrontmatter(data)
	if ferr != "" {
		p.add(file, line, "", "%s", ferr)
		return a, nil
	}
	w, ok := decodeYAML(file, front, a, lookup, p)
	a.Name, a.Path = name, file
	if !ok {
		return a, nil
	}
	a.Prompt = strings.TrimSpace(body)

	set := func(k string) bool { return w.present[k] }
	base := cfg.Defaults
	if reflect.ValueOf(base).IsZero() {
		base = BuiltinDefaults()
	}
	inherit(&a.AgentDefaults, base, set)
	inheritToolOutput(&a.ToolOutput, cfg.ToolOutput, set)
	if cfg.Path == "" && !set("tool_output.overlap_percent") { // no configuration file: built-in defaults
		a.ToolOutput.OverlapPercent = defaultOverlapPercent
	}
	if a.ToolOutput.MaxBytes == 0 {
		a.ToolOutput.MaxBytes = DefaultToolResponseMaxByte
	}
	if a.ToolOutput.MaxChunksForFullMode == 0 {
		a.ToolOutput.MaxChunksForFullMode = defaultMaxChunksForFull
	}
	if a.Output.Format == "" {
		a.Output.Format = FormatMarkdown
	}
	a.validate(w, cfg, set)
	return a, w
}

// splitFrontmatter separates the YAML frontmatter from the prompt. The
// frontmatter keeps its opening "---" (a YAML document start) so that YAML
// line numbers are the file's. A file without frontmatter is all prompt.
func splitFrontmatter(data []byte) (front []byte, body string, line int, problem string) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if !isFence(first) {
		return nil, string(data), 0, ""
	}
	off := len(first) + 1
	for off < len(data) {
		l, _, found := bytes.Cut(data[off:], []byte("\n"))
		if isFence(l) {
			end := min(off+len(l)+1, len(data))
			return data[:off], string(data[end:]), 0, ""
		}
		if !found {
			break
		}
		off += len(l) + 1
	}
	return nil, "", 1, `the frontmatter opened with "---" on line 1 is not closed; end it with a line holding only "---"`
}

func isFence(l []byte) bool { return string(bytes.TrimRight(l, " \t\r")) == "---" }

// validate checks an agent whose omitted keys have been filled in. set
// reports which keys the file itself sets: values inherited from the
// defaults section were checked there.
func (a *Agent) validate(w *walker, cfg *Config, set func(string) bool) {
	checkLimits(w, "", a.AgentDefaults, set)
	if len(a.Models) == 0 {
		where := "defaults.models in the configuration file"
		if cfg.Path != "" {
			where = "defaults.models in " + cfg.Path
		}
		w.errorf("models", "no model to use: list provider/model references here, or set %s", where)
	}
	note := ""
	for i, ref := range a.Models {
		if set("models") {
			checkModelRef(w, fmt.Sprintf("models[%d]", i), ref, cfg)
		}
		prov, model, err := ParseModelRef(ref)
		if err != nil {
			continue
		}
		// An agent cannot use more context than the smallest window among
		// its models, since any of them may end up serving a turn.
		if m, ok := cfg.LLM.Providers[prov].Models[model]; ok && m.ContextWindow > 0 && m.ContextWindow < a.ContextWindow {
			a.ContextWindow = m.ContextWindow
			note = fmt.Sprintf(", capped by the window of %s", ref)
		}
		// Any of the models may serve a turn, so a request carries no more
		// tools than the strictest of them accepts.
		if n := cfg.LLM.Providers[prov].MaxToolsOf(model); n > 0 && (a.MaxTools == 0 || n < a.MaxTools) {
			a.MaxTools, a.MaxToolsModel = n, ref
		}
	}
	checkWindow(w, firstSet("", set, "context_window", "max_output_tokens", "context_buffer", "models"),
		a.ContextWindow, a.MaxOutputTokens, a.ContextBuffer, note)
	checkGlobs(w, "tools", a.Tools)
	a.checkVoice(w)
	checkSuggestedPrompts(w, "suggested_prompts", a.SuggestedPrompts)
	checkToolOutput(w, "", a.ToolOutput, set, cfg)
	if set("tool_output.dir") {
		w.errorf("tool_output.dir", "can be set only in the configuration file: stored results of every agent live there")
	}
	if !slices.Contains(Formats, a.Output.Format) {
		msg := fmt.Sprintf("%q is not an output format", a.Output.Format)
		if s := suggest(a.Output.Format, Formats); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		w.errorf("output.format", "%s; use one of: %s", msg, oneOf(Formats))
	} else {
		a.resolveSchema(w)
	}
}

// AllowsTool reports whether the agent may be offered the tool with the
// given full name: agent__final_report always; router__handoff-to when the
// agent is a router; agent__<name> for its sub-agents; anything else when
// one of its tools globs (path.Match syntax) matches the name.
func (a *Agent) AllowsTool(name string) bool {
	switch {
	case name == finalReportTool:
		return true
	case name == handoffTool && a.IsRouter():
		return true
	}
	if sub, ok := strings.CutPrefix(name, subAgentPrefix); ok && slices.Contains(a.Agents, sub) {
		return true
	}
	for _, g := range a.Tools {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// IsRouter reports whether the agent may hand the conversation off.
func (a *Agent) IsRouter() bool { return len(a.Router.Destinations) > 0 }

// checkRefs checks the sub-agents and router destinations of the agents in
// check (by name, with the walker that read each) against all agents, and
// reports cycles of sub-agents. With everyCycleOnce, each cycle is reported
// once, on the first of its agents by name (used when all agents are
// checked together); otherwise every cycle through a checked agent is.
func checkRefs(all map[string]*Agent, check map[string]*walker, everyCycleOnce bool) {
	names := sortedKeys(all)
	for _, name := range sortedKeys(check) {
		a, w := all[name], check[name]
		for i, sub := range a.Agents {
			if all[sub] == nil {
				w.errorf(fmt.Sprintf("agents[%d]", i), "agent %q does not exist (agents: %s)", sub, oneOf(names))
			}
		}
		for i, dest := range a.Router.Destinations {
			key := fmt.Sprintf("router.destinations[%d]", i)
			switch {
			case all[dest] == nil:
				w.errorf(key, "agent %q does not exist (agents: %s)", dest, oneOf(names))
			case dest == name:
				w.errorf(key, "a router cannot hand off to itself")
			}
		}
		floor := ""
		if everyCycleOnce {
			floor = name
		}
		if cycle := findCycle(all, name, floor); cycle != nil {
			i := slices.Index(a.Agents, cycle[1])
			w.errorf(fmt.Sprintf("agents[%d]", i), "sub-agents form a cycle: %s; an agent cannot call itself, directly or through others",
				strings.Join(cycle, " → "))
		}
	}
}

// findCycle returns a path of sub-agent calls from start back to start
// (start first and last) through agents not named below floor, or nil.
func findCycle(all map[string]*Agent, start, floor string) []string {
	done := map[string]bool{}
	var walk func(name string, trail []string) []string
	walk = func(name string, trail []string) []string {
		a := all[name]
		if a == nil {
			return nil
		}
		for _, sub := range a.Agents {
			if sub == start {
				return append(slices.Clone(trail), sub)
			}
			if done[sub] || sub < floor || all[sub] == nil {
				continue
			}
			done[sub] = true
			if c := walk(sub, append(trail, sub)); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(start, []string{start})
}
