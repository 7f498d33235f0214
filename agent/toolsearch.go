package agent

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// An agent may have more tools than its models accept (OpenAI takes 128
// per request) or than its context window holds. Then the model is offered
// the tools it always needs — the built-ins, the agent's tools_pinned —
// and tools__search, which finds others by what they do; the tools a
// search returns are offered, with their schemas, from the next turn on,
// the least recently used leaving when too many are loaded.

// SearchTool finds tools among those not offered yet.
const SearchTool = "tools__search"

// nsTools is the namespace of tools__search in events and logs.
const nsTools = "tools"

// searchResults is how many tools one search returns (and loads).
const searchResults = 5

// maxQueryBytes bounds the query a model may send.
const maxQueryBytes = 1000

var searchSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["query"],` +
	`"properties":{"query":{"type":"string","minLength":1,"description":"What you want to do, in words (\"list the issues of a repository\")."},` +
	`"namespaces":{"type":"array","items":{"type":"string"},"description":"Only tools of these namespaces (the part of a name before __)."}}}`)

var searchSchemaCompiled = func() *tools.Schema {
	s, err := tools.CompileSchema(searchSchema)
	if err != nil {
		panic("tools__search schema: " + err.Error())
	}
	return s
}()

// fitTools measures the shared tools an agent may call against its models
// and decides, by its tool_search mode, whether they are offered whole or
// through tools__search; it fills ts.defs, the fit, and ts.refused when the
// agent cannot be served.
func (r *Runner) fitTools(ts *toolSet, a *config.Agent, shared []llm.ToolDef) {
	lim := withLimits(a)
	mode, threshold, share, loaded := searchSettings(a)
	budget := lim.ContextWindow - lim.MaxOutputTokens - lim.ContextBuffer
	fit := ToolFit{Agent: a.Name, MaxTools: a.MaxTools, MaxToolsModel: a.MaxToolsModel, Budget: budget, Share: share, Mode: mode,
		Tools: len(ts.defs) + len(shared)}
	for i := range ts.defs {
		fit.SchemaTokens += defTokens(&ts.defs[i])
	}
	for i := range shared {
		fit.SchemaTokens += defTokens(&shared[i])
	}
	var pinned, rest []llm.ToolDef
	for _, d := range shared {
		if pinnedBy(a.ToolsPinned, d.Name) {
			pinned = append(pinned, d)
		} else {
			rest = append(rest, d)
		}
	}
	switch mode {
	case config.ToolSearchNever:
	case config.ToolSearchAlways:
		fit.Search = len(rest) > 0
	default:
		fit.Search = len(rest) > 0 && (fit.Tools > threshold || fit.OverLimit() || fit.Heavy())
	}
	ts.fit = fit
	if !fit.Search {
		ts.defs = append(ts.defs, shared...)
		ts.fit.Offered = len(ts.defs)
		switch {
		case fit.OverLimit() || fit.SchemaTokens > budget:
			ts.refused = fmt.Errorf("agent %s: %s; set tool_search: auto, or give it fewer tools", a.Name, fit)
		case r.ToolOutput != nil && fit.MaxTools > 0 && fit.Tools+1 > fit.MaxTools:
			// tool_output joins them while the session holds a large result.
			ts.refused = fmt.Errorf("agent %s: %s; with tool_output that is one over the limit of %d tools of %s; set tool_search: auto, or give it fewer tools",
				a.Name, fit, fit.MaxTools, fit.MaxToolsModel)
		}
		return
	}
	ts.defs = append(ts.defs, pinned...)
	ts.searchable = make(map[string]*llm.ToolDef, len(rest))
	list := make([]tools.Tool, len(rest))
	for i := range rest {
		ts.searchable[rest[i].Name] = &rest[i]
		list[i] = tools.Tool{Name: rest[i].Name, Description: rest[i].Description, Schema: rest[i].Schema}
	}
	ts.index = tools.NewIndex(list)
	ts.offered[SearchTool] = true
	ts.defs = append(ts.defs, searchDef(ts.index))
	offeredTokens := 0
	for i := range ts.defs {
		offeredTokens += defTokens(&ts.defs[i])
	}
	// Found tools share what is left of the schemas' part of the window,
	// and the request's tool slots beside the offered tools and
	// tool_output.
	ts.loadTokens = int(share*float64(budget)) - offeredTokens
	ts.loadBound = loaded
	if fit.MaxTools > 0 {
		ts.loadBound = min(loaded, fit.MaxTools-len(ts.defs)-1)
	}
	ts.fit.Offered, ts.fit.Loaded = len(ts.defs), max(ts.loadBound, 0)
	switch {
	case ts.loadBound < 1:
		ts.refused = fmt.Errorf("agent %s: its %d pinned and built-in tools leave no room for found ones under the limit of %d tools of %s; pin fewer tools",
			a.Name, len(ts.defs), fit.MaxTools, fit.MaxToolsModel)
	case offeredTokens > budget:
		ts.refused = fmt.Errorf("agent %s: its pinned and built-in tools take %s tokens, more than the %s-token budget of a request; pin fewer tools",
			a.Name, thousands(offeredTokens), thousands(budget))
	}
}

// pinnedBy reports whether one of the tools_pinned globs matches name.
func pinnedBy(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// searchDef describes tools__search with the namespaces it searches.
func searchDef(x *tools.Index) llm.ToolDef {
	var ns []string
	for _, n := range x.Namespaces() {
		ns = append(ns, fmt.Sprintf("%s (%s)", n.Namespace, thousands(n.Tools)))
	}
	return llm.ToolDef{Name: SearchTool, Schema: searchSchema, Description: fmt.Sprintf(
		"Find tools for a step of your task among %s tools that are not listed here (namespaces: %s). "+
			"Describe what you want to do in words; the best %d matches come back, name and one line each, "+
			"and from your next turn on you can call them with their full schemas.",
		thousands(x.Len()), strings.Join(ns, ", "), searchResults)}
}

// logFit writes a line when an agent's tools are more than its models
// take, or heavy: never silently.
func (r *Runner) logFit(ts *toolSet) {
	if r.Log == nil {
		return
	}
	switch f := ts.fit; {
	case ts.refused != nil:
		r.Log.Error("agent refused: its tools do not fit its models", zap.String("agent", f.Agent), zap.String("fit", ts.refused.Error()))
	case f.OverLimit() || f.Heavy():
		r.Log.Warn("agent has more tools than its models take", zap.String("agent", f.Agent), zap.String("fit", f.String()))
	case f.Search:
		r.Log.Info("agent finds its tools by search", zap.String("agent", f.Agent), zap.String("fit", f.String()))
	}
}

// searchStatus is what a person is shown while tools__search runs.
func searchStatus(args string) string {
	var a struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	q := strings.Join(strings.Fields(a.Query), " ")
	if q == "" {
		return "Looking for a tool"
	}
	return "Looking for a tool to " + tools.Snippet(q, 120)
}

// searchTools runs tools__search: the best matches among the tools not
// offered yet, which are loaded for the next turns.
func (s *session) searchTools(c *llm.ToolCall) callOutcome {
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, searchSchemaCompiled)
	if msg != "" {
		return callOutcome{msg, true}
	}
	var a struct {
		Query      string   `json:"query"`
		Namespaces []string `json:"namespaces"`
	}
	_ = json.Unmarshal(raw, &a)
	query := strings.Join(strings.Fields(a.Query), " ")
	if query == "" {
		return callOutcome{"The query is empty: describe in words what you want to do.", true}
	}
	if len(query) > maxQueryBytes {
		return callOutcome{fmt.Sprintf("The query is %d bytes long; describe what you want to do in at most %d.", len(query), maxQueryBytes), true}
	}
	known := s.index.Namespaces()
	var unknown []string
	for _, n := range a.Namespaces {
		if !slices.ContainsFunc(known, func(k tools.NamespaceCount) bool { return k.Namespace == n }) {
			unknown = append(unknown, tools.Snippet(n, 64))
		}
	}
	if len(unknown) > 0 {
		return callOutcome{fmt.Sprintf("No tools to search in %s; the namespaces are: %s.", strings.Join(unknown, ", "), namespaceList(known)), true}
	}
	hits := s.index.Search(query, a.Namespaces, searchResults)
	if len(hits) == 0 {
		return callOutcome{fmt.Sprintf("No tool matches %q. Try other words for what you want to do (namespaces: %s).", query, namespaceList(known)), false}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Tools for %q, best first. They are loaded: call them from your next turn.\n", query)
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Name
		fmt.Fprintf(&b, "- %s: %s\n", h.Name, h.Summary)
	}
	s.load(names)
	return callOutcome{strings.TrimRight(b.String(), "\n"), false}
}

func namespaceList(ns []tools.NamespaceCount) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.Namespace
	}
	return strings.Join(parts, ", ")
}

// notLoaded answers a call to a tool the model may use but has not found
// yet: its schema was never offered, so the call is likely guesswork.
func notLoaded(name string) string {
	return fmt.Sprintf("The tool %s is not loaded yet. Call %s with words for what you want to do (its name will do) to load it, "+
		"then call it on your next turn with the schema you are given.", name, SearchTool)
}

// loadedTools are the tools a session's searches found, least recently
// used first, and what their definitions weigh; under session.mu.
type loadedTools struct {
	order  []string
	tokens map[string]int
	total  int
}

// load offers the named tools from the next turn on, as the most recently
// used; the least recently used leave while there are more than the bound
// or they weigh more than their share of the window (the newest stays).
func (s *session) load(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.loaded
	if l.tokens == nil {
		l.tokens = map[string]int{}
	}
	for _, n := range names {
		if i := slices.Index(l.order, n); i >= 0 {
			l.order = append(slices.Delete(l.order, i, i+1), n)
			continue
		}
		d := s.searchable[n]
		if d == nil {
			continue
		}
		t := toolDefsTokens([]llm.ToolDef{*d})
		l.order = append(l.order, n)
		l.tokens[n] = t
		l.total += t
	}
	for len(l.order) > 1 && (len(l.order) > s.loadBound || l.total > s.loadTokens) {
		gone := l.order[0]
		l.order = l.order[1:]
		l.total -= l.tokens[gone]
		delete(l.tokens, gone)
	}
}

// touch marks a loaded tool as used now; it reports whether the tool is
// loaded.
func (s *session) touch(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.loaded.order, name)
	if i < 0 {
		return false
	}
	s.loaded.order = append(slices.Delete(s.loaded.order, i, i+1), name)
	return true
}

// loadedDefs returns the definitions of the loaded tools and their tokens.
func (s *session) loadedDefs() ([]llm.ToolDef, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defs := make([]llm.ToolDef, 0, len(s.loaded.order))
	for _, n := range s.loaded.order {
		defs = append(defs, *s.searchable[n])
	}
	return defs, s.loaded.total
}
