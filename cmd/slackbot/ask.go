package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

// wiring is what a subcommand needs to run sessions.
type wiring struct {
	cfg        *config.Config
	runner     *agent.Runner
	log        *zap.Logger
	closeTools func() error
	// mcp is the MCP servers' registry, nil when none is configured.
	mcp *mcp.Registry
}

// wire loads the configuration and builds the runner. Logs go to stderr as
// JSON lines at the configured level; verbose lowers it to debug.
func wire(ctx context.Context, path string, verbose bool, stderr io.Writer, elicitation bool) (*wiring, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	log := newLogger(cfg.Log, verbose, stderr)
	providers := make(map[string]llm.Provider, len(cfg.LLM.Providers))
	for name, pc := range cfg.LLM.Providers {
		var p llm.Provider
		switch pc.Type {
		case "anthropic":
			p, err = anthropic.New(name, pc)
		default:
			p, err = openai.New(name, pc)
		}
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", name, err)
		}
		providers[name] = p
	}
	// Oversized tool results are kept on disk for their session; a bot that
	// could not keep them would lose them, so it does not start.
	store, err := tooloutput.OpenRun(cfg.ToolOutput.Dir, log.Named("tool_output"))
	if err != nil {
		return nil, err
	}
	orch, reg, closeTools, err := buildTools(cfg, log, elicitation)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	closeAll := func() error { return errors.Join(closeTools(), store.Close()) }
	warmup(ctx, orch, log)
	runner := &agent.Runner{Providers: providers, Tools: orch, Log: log, Agents: cfg.Agents, MaxDepth: cfg.MaxAgentDepth, ToolOutput: store,
		ApprovalTimeout: cfg.ApprovalTimeout.D()}
	// Each agent's tools are measured against its models now, so that one
	// with more than they take, or refused, is logged at start rather than
	// at its first question.
	names := make([]string, 0, len(cfg.Agents))
	for n := range cfg.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		_, _ = runner.ToolFit(cfg.Agents[n]) // the runner logs what matters
	}
	return &wiring{cfg: cfg, log: log, closeTools: closeAll, mcp: reg, runner: runner}, nil
}

// Close stops the tools: MCP servers and every process they started.
func (w *wiring) Close() {
	if err := w.closeTools(); err != nil {
		w.log.Warn("stopping the tools", zap.Error(err))
	}
	_ = w.log.Sync()
}

// newLogger writes log lines to w at the configuration's log.level (every
// command honours it; --verbose lowers it to debug) in its log.format.
func newLogger(lc config.Log, verbose bool, w io.Writer) *zap.Logger {
	level, err := zapcore.ParseLevel(lc.Level)
	if err != nil { // config.Load accepts only known levels
		level = zapcore.InfoLevel
	}
	if verbose {
		level = zapcore.DebugLevel
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder = zapcore.NewJSONEncoder(enc)
	if lc.Format == "console" {
		encoder = zapcore.NewConsoleEncoder(enc)
	}
	// Every line passes through redact, whatever a field holds.
	return zap.New(redact.Core(zapcore.NewCore(encoder, zapcore.AddSync(w), level)))
}

func (w *wiring) agent(name string) (*config.Agent, error) {
	if a, ok := w.cfg.Agents[name]; ok {
		return a, nil
	}
	names := make([]string, 0, len(w.cfg.Agents))
	for n := range w.cfg.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("no agent named %q in %s (agents: %s)", name, w.cfg.AgentsDir, strings.Join(names, ", "))
}

// command holds the flags every command that runs sessions takes,
// --config and --verbose, beside its own; its stderr is safe for the log
// and progress lines that many goroutines write.
type command struct {
	fs      *flag.FlagSet
	config  *string
	verbose *bool
	stderr  io.Writer
	// elicitation: the sessions can show a tool's question to a person
	// (Slack, a terminal), so the MCP client declares that it can ask.
	elicitation bool
}

func newCommand(name string, stderr io.Writer) *command {
	stderr = lockedWriter(stderr)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &command{fs: fs, stderr: stderr,
		config:  fs.String("config", "slackbot.yaml", "configuration file"),
		verbose: fs.Bool("verbose", false, "log every event to stderr")}
}

// parse reads args; a mistake in them is a usage error.
func (c *command) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		return errUsage
	}
	return nil
}

// wire loads the configuration and builds the runner (see wire).
func (c *command) wire(ctx context.Context) (*wiring, error) {
	return wire(ctx, *c.config, *c.verbose, c.stderr, c.elicitation)
}

func runAsk(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := newCommand("ask", stderr)
	stderr = c.stderr
	name := c.fs.String("agent", "", "agent to ask (required)")
	approve := approveFlag(c.fs)
	format := c.fs.String("format", "", "output format: markdown, json, tty, slack-block-kit, … (default: the agent's)")
	quiet := c.fs.Bool("quiet", false, "do not print progress to stderr")
	if err := c.parse(args); err != nil {
		return err
	}
	question := strings.TrimSpace(strings.Join(c.fs.Args(), " "))
	if *name == "" || question == "" {
		fmt.Fprintln(stderr, `usage: slackbot ask [--config FILE] --agent NAME [--format FORMAT] [--approve GLOBS] "question"`)
		return errUsage
	}
	if *format != "" && !validFormat(*format) {
		return fmt.Errorf("--format %q is not a format; use one of: %s", *format, strings.Join(config.Formats, ", "))
	}
	// Approval answers and a tool's questions are read from the same lines.
	var lines <-chan string
	var elicitor tools.Elicitor
	if c.elicitation = interactive(stdin); c.elicitation {
		lines = agent.Lines(stdin)
		elicitor = &termElicitor{line: nextLine(lines), out: stderr}
	}
	w, err := c.wire(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	a, err := w.agent(*name)
	if err != nil {
		return err
	}
	var obs agent.Observer
	if !*quiet && !*c.verbose {
		obs = progress(stderr)
	}
	ap := terminalApprover(stdin, lines, stderr, *approve)
	res := w.runner.Run(ctx, agent.Input{Agent: a, Format: *format, Prompt: question, Observer: obs, Approver: ap, Elicitor: elicitor})
	if err := printReport(stdout, res.Report); err != nil {
		return err
	}
	if res.Report.Status == agent.StatusFailure {
		return exitCode(1)
	}
	return nil
}

// runChat keeps a conversation in the terminal: each line is a question,
// answered by a new session that sees the earlier questions and answers.
func runChat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := newCommand("chat", stderr)
	stderr = c.stderr
	name := c.fs.String("agent", "assistant", "agent to talk to")
	approve := approveFlag(c.fs)
	if err := c.parse(args); err != nil {
		return err
	}
	c.elicitation = interactive(stdin)
	w, err := c.wire(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	a, err := w.agent(*name)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Talking to %s (%s). One question per line; Ctrl-D ends.\n", a.Name, strings.Join(a.Models, ", "))
	var history []llm.Message
	// Questions, approval answers and a tool's questions come from the
	// same lines.
	lines := agent.Lines(stdin)
	ap := terminalApprover(stdin, lines, stderr, *approve)
	var elicitor tools.Elicitor
	if c.elicitation {
		elicitor = &termElicitor{line: nextLine(lines), out: stderr}
	}
	for fmt.Fprint(stderr, "> "); ; fmt.Fprint(stderr, "> ") {
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
		case <-ctx.Done():
		}
		if !ok {
			return nil
		}
		q := strings.TrimSpace(line)
		if q == "" {
			continue
		}
		// A long conversation keeps its latest exchanges within the
		// model's window rather than failing every question.
		var dropped int
		if history, dropped = agent.TrimHistory(a, history, q); dropped > 0 {
			fmt.Fprintf(stderr, "  · the conversation is long: its %d oldest messages are forgotten to fit the model's context window\n", dropped)
		}
		res := w.runner.Run(ctx, agent.Input{Agent: a, Format: config.FormatMarkdown, History: history, Prompt: q, Observer: progress(stderr), Approver: ap, Elicitor: elicitor})
		if err := printReport(stdout, res.Report); err != nil {
			return err
		}
		history = append(history, llm.Message{Role: llm.RoleUser, Content: q}, llm.Message{Role: llm.RoleAssistant, Content: res.Report.Text()})
		if ctx.Err() != nil {
			return nil
		}
	}
}

// printReport writes the answer in its format: Block Kit messages repaired
// into a JSON array, JSON indented, text as it is.
func printReport(w io.Writer, r *agent.Report) error {
	if r.Format == config.FormatSlackBlockKit {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false) // keep Slack's <url|label> and &amp; readable
		enc.SetIndent("", "  ")
		return enc.Encode(r.Slack)
	}
	_, err := fmt.Fprintln(w, r.Text())
	return err
}

// progress prints a short line per step to stderr, for people watching.
// Steps of sub-agents (and of a router's destination) name the agent:
// "  · researcher › github__search_code … 1.2s ok".
func progress(w io.Writer) agent.Observer {
	return func(e agent.Event) {
		who := ""
		if len(e.Path) > 1 {
			who = strings.Join(e.Path[1:], " › ") + " › "
		}
		switch e.Kind {
		case agent.EventSessionStarted:
			if who != "" {
				fmt.Fprintf(w, "  · %sstarted\n", who)
			}
		case agent.EventToolStarted:
			if e.Tool.Name == agent.ToolOutputTool {
				fmt.Fprintf(w, "  · %sreading a large result…\n", who)
			}
			if e.Tool.Status != "" {
				fmt.Fprintf(w, "  · %s%s…\n", who, e.Tool.Status)
			}
		case agent.EventToolFinished:
			note := ""
			if e.Tool.Oversize {
				note = ", too large to show whole"
			}
			fmt.Fprintf(w, "  · %s%s … %s%s\n", who, e.Tool.Name, toolOutcome(e.Tool), note)
		case agent.EventTaskStatus:
			fmt.Fprintf(w, "  · %s%s\n", who, e.Status.Now)
		case agent.EventLLMRetry:
			fmt.Fprintf(w, "  · %smodel call failed, retrying: %s\n", who, e.LLM.Err)
		case agent.EventFinalReport:
			if e.Report.Synthetic() {
				fmt.Fprintf(w, "  · %sno answer: %s\n", who, e.Report.Reason)
			}
		case agent.EventSessionDone:
			if e.Result != nil && e.Result.Status == agent.HandedOff {
				fmt.Fprintf(w, "  · %s%s\n", who, e.Notice)
			}
		}
	}
}

// toolOutcome is how long a call took and how it ended, with its wait in
// a queue and whether the result came from the cache: "1.2s ok, queued
// 300ms, cached".
func toolOutcome(t *agent.ToolInfo) string {
	status := "ok"
	if !t.OK {
		status = "failed"
		if t.Failure != "" {
			status = t.Failure
		}
	}
	out := shortDuration(t.Latency) + " " + status
	if t.QueueWait > 0 {
		out += ", queued " + shortDuration(t.QueueWait)
	}
	if t.Cached {
		out += ", cached"
	}
	return out
}

// shortDuration writes d for a progress line: milliseconds under a
// second, tenths of a second above.
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func runAgents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agents", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "slackbot.yaml", "configuration file")
	noTools := fs.Bool("no-tools", false, "do not start the tools to measure each agent's against its models")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(cfg.Agents))
	for n := range cfg.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return errors.New("no agent files in " + cfg.AgentsDir)
	}
	for _, n := range names {
		a := cfg.Agents[n]
		fmt.Fprintf(stdout, "%-20s %-16s %s\n    models: %s\n", n, a.Output.Format, a.Description, strings.Join(a.Models, ", "))
	}
	if *noTools {
		fmt.Fprintf(stdout, "%d agents, all valid\n", len(names))
		return nil
	}
	log := newLogger(cfg.Log, false, lockedWriter(stderr))
	fits, err := agentFits(ctx, cfg, names, warmupLimit, log)
	if err != nil {
		return err
	}
	if refused := printFits(stdout, fits); refused > 0 {
		fmt.Fprintf(stdout, "%d agents, %d refused: their tools do not fit their models\n", len(names), refused)
		return exitCode(1)
	}
	fmt.Fprintf(stdout, "%d agents, all valid\n", len(names))
	return nil
}

func validFormat(f string) bool {
	for _, v := range config.Formats {
		if v == f {
			return true
		}
	}
	return false
}

// lockedWriter serialises writes to w: log lines and progress lines are
// written from every tool call's goroutine, and must not interleave.
func lockedWriter(w io.Writer) io.Writer {
	if lw, ok := w.(*syncWriter); ok {
		return lw
	}
	return &syncWriter{w: w}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
