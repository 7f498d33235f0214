package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp"
	"github.com/slackbot/slackbot/tools/rest"
)

// warmupLimit bounds how long a command waits for MCP servers and OpenAPI
// documents before it starts answering; those not ready by then join as
// soon as they are.
const warmupLimit = 30 * time.Second

// buildTools starts the configured tool providers — MCP servers (in the
// background, mcp_init_concurrency at a time) and REST tools — and the
// orchestrator that serves them to every session. reg is the MCP servers'
// registry (nil without MCP servers). close stops it all, MCP servers and
// their processes included; it must be called.
func buildTools(cfg *config.Config, log *zap.Logger, elicitation bool) (orch *tools.Orchestrator, reg *mcp.Registry, close func() error, err error) {
	var providers []tools.Provider
	if len(cfg.MCPServers) > 0 {
		reg, err = mcp.NewRegistry(cfg.MCPServers, mcp.Options{Log: log.Named("mcp"), InitConcurrency: cfg.MCPInitConcurrency, Elicitation: elicitation})
		if err != nil {
			return nil, nil, nil, err
		}
		providers = append(providers, reg.Providers()...)
	}
	if len(cfg.RestTools) > 0 || len(cfg.OpenAPI) > 0 {
		rp, err := rest.New(cfg.RestTools, cfg.OpenAPI, rest.Options{Log: log.Named("rest")})
		if err != nil {
			if reg != nil {
				_ = reg.Close()
			}
			return nil, nil, nil, err
		}
		providers = append(providers, rp)
	}
	queues := make(map[string]int, len(cfg.Queues))
	for name, q := range cfg.Queues {
		queues[name] = q.Concurrency
	}
	max := cfg.ToolOutput.MaxBytes
	if max == 0 {
		max = config.DefaultToolResponseMaxByte
	}
	orch = tools.New(context.Background(), tools.Options{MaxResultBytes: max, Queues: queues, Log: log}, providers...)
	return orch, reg, func() error {
		// The orchestrator releases the servers' handles; the registry
		// then makes sure that every server process is gone.
		err := orch.Close()
		if reg != nil {
			err = errors.Join(err, reg.Close())
		}
		return err
	}, nil
}

// warmup waits, up to warmupLimit, for the tool providers to be ready and
// logs those that are not; they keep trying in the background.
func warmup(ctx context.Context, orch *tools.Orchestrator, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(ctx, warmupLimit)
	defer cancel()
	if err := orch.Warmup(ctx); err != nil {
		log.Warn("some tools are not available yet; they are retried in the background", zap.Error(err))
	}
}

// runTools lists the tools the configuration offers, after warming up every
// provider, and with --agent marks those that agent is offered.
func runTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("tools", stderr)
	stderr = c.stderr
	name := c.fs.String("agent", "", "show only the tools this agent is offered")
	if err := c.parse(args); err != nil {
		return err
	}
	w, err := c.wire(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	var a *config.Agent
	if *name != "" {
		if a, err = w.agent(*name); err != nil {
			return err
		}
	}
	ts := w.runner.Tools.Tools()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tQUEUE\tTIMEOUT\tCACHE\tDESCRIPTION")
	shown := 0
	for _, t := range ts {
		if a != nil && !a.AllowsTool(t.Name) {
			continue
		}
		shown++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, dash(t.Queue), durationOrDash(t.Timeout), durationOrDash(t.CacheTTL), firstLine(t.Description, 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	namespaces := map[string]int{}
	for _, t := range ts {
		ns, _, _ := strings.Cut(t.Name, tools.Separator)
		namespaces[ns]++
	}
	var missing []string
	for server, s := range w.cfg.MCPServers {
		if s.IsEnabled() && namespaces[server] == 0 {
			missing = append(missing, server)
		}
	}
	sort.Strings(missing)
	fmt.Fprintf(stderr, "%d tools", shown)
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "; MCP servers without tools (not started, or offering none): %s", strings.Join(missing, ", "))
	}
	fmt.Fprintln(stderr)
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func durationOrDash(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.String()
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return tools.Snippet(s, n)
}
