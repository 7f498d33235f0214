package agent

import (
	"fmt"
	"strings"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

// ToolFit is how an agent's tools measure against its models: how many
// there are and what their schemas weigh, against the most tools a request
// may carry and the context window. It says whether the model is offered
// tools__search instead of every schema, and why.
type ToolFit struct {
	Agent string
	// Tools counts every tool the agent may call, built-ins included;
	// SchemaTokens is what all their definitions would take in a request
	// (estimated, raised by its margin).
	Tools        int
	SchemaTokens int
	// MaxTools is the most tools a request may carry (0 = no limit), as
	// set by the model MaxToolsModel.
	MaxTools      int
	MaxToolsModel string
	// Budget is the tokens a request may hold; Share the part of it the
	// schemas may take before they are too heavy.
	Budget int
	Share  float64
	// Mode is the agent's tool_search.
	Mode string
	// Search reports that tools__search is offered; then Offered tools
	// (built-ins, pinned tools and tools__search) come with every request,
	// weighing OfferedTokens, and up to Loaded found ones join them.
	Search        bool
	Offered       int
	OfferedTokens int
	Loaded        int
}

// OverLimit reports more tools than the models accept.
func (f ToolFit) OverLimit() bool { return f.MaxTools > 0 && f.Tools > f.MaxTools }

// Heavy reports schemas over their share of the context budget.
func (f ToolFit) Heavy() bool { return float64(f.SchemaTokens) > f.Share*float64(f.Budget) }

// String says it in a line, with the numbers.
func (f ToolFit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s tools, %s tokens of schemas (%d%% of the %s-token budget)", thousands(f.Tools), thousands(f.SchemaTokens),
		percent(f.SchemaTokens, f.Budget), thousands(f.Budget))
	var why []string
	if f.OverLimit() {
		why = append(why, fmt.Sprintf("over the limit of %s tools of %s", thousands(f.MaxTools), f.MaxToolsModel))
	}
	if f.Heavy() {
		why = append(why, fmt.Sprintf("over the share of %d%% of the context", int(f.Share*100+0.5)))
	}
	if len(why) > 0 {
		b.WriteString("; " + strings.Join(why, " and "))
	}
	if f.Search {
		fmt.Fprintf(&b, "; tool search (%s): %d tools offered on every turn (%s tokens), up to %d found ones loaded",
			f.Mode, f.Offered, thousands(f.OfferedTokens), f.Loaded)
	} else {
		fmt.Fprintf(&b, "; tool search %s: every schema offered", f.Mode)
	}
	return b.String()
}

// ToolFit measures agent a's tools in its own output format against its
// models. The error is why its sessions are refused, with the numbers:
// tools that cannot fit its models with tool_search: never, or pinned
// tools that alone do not.
func (r *Runner) ToolFit(a *config.Agent) (ToolFit, error) {
	ts, err := r.toolSet(a, formatOf(Input{Agent: a}))
	if err != nil {
		if ts != nil {
			return ts.fit, err
		}
		return ToolFit{Agent: a.Name}, err
	}
	return ts.fit, nil
}

// searchSettings returns a's tool-search keys with the built-in default
// for each left at zero (an agent built in code).
func searchSettings(a *config.Agent) (mode string, threshold int, share float64, loaded int) {
	mode, threshold, share, loaded = a.ToolSearch, a.ToolSearchThreshold, a.ToolSearchShare, a.ToolSearchLoaded
	if mode == "" {
		mode = config.ToolSearchAuto
	}
	if threshold <= 0 {
		threshold = config.DefaultToolSearchThreshold
	}
	if share <= 0 {
		share = config.DefaultToolSearchShare
	}
	if loaded <= 0 {
		loaded = config.DefaultToolSearchLoaded
	}
	return mode, threshold, share, loaded
}

// defTokens estimates a tool definition's tokens, raised by the margin:
// counting a thousand schemas exactly would cost seconds.
func defTokens(d *llm.ToolDef) int {
	n := llm.EstimateTokens(d.Name) + llm.EstimateTokens(d.Description) + llm.EstimateTokens(string(d.Schema))
	return perMessageOverhead + int(float64(n)*llm.EstimateMargin)
}

func percent(part, whole int) int {
	if whole <= 0 {
		return 0
	}
	return int(float64(part)*100/float64(whole) + 0.5)
}

// thousands writes n with commas: 1,223.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
