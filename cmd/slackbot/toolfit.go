package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
)

// agentFit is how one agent's tools measure against its models; err is
// why its sessions would be refused.
type agentFit struct {
	name string
	fit  agent.ToolFit
	err  error
}

// agentFits starts the configured tools — MCP servers, OpenAPI documents —
// waits up to limit for them, measures every agent's tools against its
// models (names sorted) and stops the tools again.
func agentFits(ctx context.Context, cfg *config.Config, names []string, limit time.Duration, log *zap.Logger) ([]agentFit, error) {
	orch, _, closeTools, err := buildTools(cfg, log, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = closeTools() }()
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := orch.Warmup(wctx); err != nil {
		log.Warn("some tools are not available; they are not counted", zap.Error(err))
	}
	r := &agent.Runner{Tools: orch, Agents: cfg.Agents}
	out := make([]agentFit, 0, len(names))
	for _, n := range names {
		fit, err := r.ToolFit(cfg.Agents[n])
		out = append(out, agentFit{n, fit, err})
	}
	return out, nil
}

// printFits writes each agent's tools line for `slackbot agents`, and
// returns how many agents are refused.
func printFits(w io.Writer, fits []agentFit) (refused int) {
	for _, f := range fits {
		if f.err != nil {
			refused++
			fmt.Fprintf(w, "%-20s REFUSED: %v\n", f.name, f.err)
			continue
		}
		fmt.Fprintf(w, "%-20s tools: %s\n", f.name, f.fit)
	}
	return refused
}

// fitRows are `slackbot check`'s rows of the agents: FAIL for an agent
// whose sessions would be refused, warn for one whose tools are more than
// its models take (tool search serves it), ok otherwise.
func fitRows(fits []agentFit) []checkRow {
	rows := make([]checkRow, 0, len(fits))
	for _, f := range fits {
		switch {
		case f.err != nil:
			rows = append(rows, checkRow{"agent " + f.name, checkFail, f.err.Error()})
		case f.fit.OverLimit() || f.fit.Heavy():
			rows = append(rows, checkRow{"agent " + f.name, checkWarn, f.fit.String()})
		default:
			rows = append(rows, checkRow{"agent " + f.name, checkOK, f.fit.String()})
		}
	}
	return rows
}
