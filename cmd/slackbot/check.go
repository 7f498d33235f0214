package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/tools/mcp"
)

// Statuses of a check row. Only checkFail makes `slackbot check` fail.
const (
	checkOK      = "ok"
	checkWarn    = "warn"
	checkFail    = "FAIL"
	checkSkipped = "skipped"
)

// checkRow is one line of the table `slackbot check` prints.
type checkRow struct {
	Component, Status, Detail string
}

// runCheck verifies what the bot needs before it can run — the
// configuration, both Slack tokens, one call to each model provider and
// the start of each MCP server — prints one row per component and fails
// when any of them does.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	stderr = lockedWriter(stderr) // MCP servers log from their own goroutines
	flags := flag.NewFlagSet("check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	cfgPath := flags.String("config", "slackbot.yaml", "configuration file")
	timeout := flags.Duration("timeout", warmupLimit, "how long each check may take")
	verbose := flags.Bool("verbose", false, "log every step to stderr")
	if err := flags.Parse(args); err != nil || flags.NArg() > 0 {
		if err == nil {
			fmt.Fprintln(stderr, "usage: slackbot check [--config FILE] [--timeout 30s] [--verbose]")
		}
		return errUsage
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		// Load already keeps the configuration's secrets out of its errors.
		detail := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			detail += " (start from slackbot.example.yaml, or name a file with --config)"
		}
		return printChecks(stdout, stderr, nil, []checkRow{{"config", checkFail, detail}})
	}
	rows := []checkRow{{"config", checkOK, fmt.Sprintf("%s: %d agents, %d model providers, %d MCP servers",
		cfg.Path, len(cfg.Agents), len(cfg.LLM.Providers), len(cfg.MCPServers))}}

	// The MCP servers' own logs would bury the table; they are there for
	// whoever asks for them.
	log := zap.NewNop()
	if *verbose {
		log = newLogger(cfg.Log, true, stderr)
	}
	var slackRows, llmRows, mcpRows []checkRow
	var wg sync.WaitGroup
	wg.Go(func() { slackRows = checkSlack(ctx, cfg.Slack, *timeout) })
	wg.Go(func() { llmRows = checkProviders(ctx, cfg, *timeout) })
	wg.Go(func() { mcpRows = checkMCPServers(ctx, cfg, *timeout, log) })
	wg.Wait()
	_ = log.Sync()
	rows = append(append(append(append(rows, slackRows...), checkChannelRules(cfg.Slack)...), llmRows...), mcpRows...)
	rows = append(rows, checkAgents(ctx, cfg, *timeout, log)...)
	return printChecks(stdout, stderr, configSecrets(cfg), rows)
}

// checkAgents measures every agent's tools against its models, with the
// tools started again for it.
func checkAgents(ctx context.Context, cfg *config.Config, timeout time.Duration, log *zap.Logger) []checkRow {
	names := make([]string, 0, len(cfg.Agents))
	for n := range cfg.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	fits, err := agentFits(ctx, cfg, names, timeout, log)
	if err != nil {
		return []checkRow{{"agents", checkFail, "starting the tools: " + err.Error()}}
	}
	return fitRows(fits)
}

// printChecks writes the table, with every secret the configuration holds
// taken out of the details, and a summary line to stderr. It returns exit
// status 1 when a row failed.
func printChecks(stdout, stderr io.Writer, secrets []string, rows []checkRow) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tSTATUS\tDETAIL")
	failed := 0
	for _, r := range rows {
		if r.Status == checkFail {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Component, r.Status, scrubSecrets(r.Detail, secrets))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "%d of %d checks failed\n", failed, len(rows))
		return exitCode(1)
	}
	fmt.Fprintln(stderr, "all checks passed")
	return nil
}

// scrubSecrets takes the configured secrets and anything shaped like a
// token or an API key out of s, and keeps it to one bounded line.
func scrubSecrets(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, redact.Mark)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	return llm.Redact(s, "")
}

// configSecrets lists every secret value the configuration holds.
func configSecrets(cfg *config.Config) []string {
	var out []string
	add := func(ss ...config.Secret) {
		for _, s := range ss {
			if s != "" {
				out = append(out, s.Reveal())
			}
		}
	}
	addMap := func(m map[string]config.Secret) {
		for _, s := range m {
			add(s)
		}
	}
	add(cfg.Slack.BotToken, cfg.Slack.AppToken, cfg.State.RedisURL)
	for _, p := range cfg.LLM.Providers {
		add(p.APIKey)
		addMap(p.Headers)
	}
	// A URL may carry a token in its query or userinfo.
	for _, s := range cfg.MCPServers {
		addMap(s.Env)
		addMap(s.Headers)
		out = append(out, redact.Secrets(s.URL)...)
	}
	for _, r := range cfg.RestTools {
		addMap(r.Headers)
		out = append(out, redact.Secrets(r.URL)...)
	}
	for _, o := range cfg.OpenAPI {
		addMap(o.Headers)
		out = append(out, redact.Secrets(o.Spec)...)
		out = append(out, redact.Secrets(o.BaseURL)...)
	}
	return out
}

// checkSlack asks Slack about each token: auth.test for the bot token,
// apps.connections.open (what Socket Mode calls first) for the app token.
func checkSlack(ctx context.Context, s config.Slack, timeout time.Duration) []checkRow {
	bot, app := s.BotToken.Reveal(), s.AppToken.Reveal()
	if bot == "" && app == "" {
		return []checkRow{{"slack", checkSkipped, "no Slack tokens — `make run` will start the playground"}}
	}
	client := &http.Client{Timeout: timeout}
	rows := make([]checkRow, 0, 2)

	row := checkRow{Component: "slack bot token", Status: checkFail}
	var scopeRow *checkRow // the bot token's scopes, when Slack lists them
	switch {
	case bot == "":
		row.Detail = "slack.bot_token is not set (OAuth & Permissions → Bot User OAuth Token, xoxb-…)"
	case !strings.HasPrefix(bot, "xoxb-"):
		row.Detail = "slack.bot_token is not a bot token, which starts with xoxb- (OAuth & Permissions → Bot User OAuth Token)"
	default:
		cctx, cancel := context.WithTimeout(ctx, timeout)
		var scopes []string
		api := slack.New(bot, slack.OptionAPIURL(s.APIURL), slack.OptionHTTPClient(client),
			slack.OptionOnResponseHeaders(func(_ string, h http.Header) { scopes = h.Values("X-OAuth-Scopes") }))
		res, err := api.AuthTestContext(cctx)
		cancel()
		if err != nil {
			row.Detail = "auth.test: " + slackReason(err)
		} else {
			row.Status = checkOK
			row.Detail = fmt.Sprintf("team %s (%s), bot user @%s (%s)", res.Team, res.TeamID, res.User, res.UserID)
			if sr, ok := botScopesRow(strings.Join(scopes, ","), scopes != nil); ok {
				scopeRow = &sr
			}
		}
	}
	rows = append(rows, row)
	if scopeRow != nil {
		rows = append(rows, *scopeRow)
	}

	row = checkRow{Component: "slack app token", Status: checkFail}
	switch {
	case app == "":
		row.Detail = "slack.app_token is not set (Basic Information → App-Level Tokens, with connections:write)"
	case !strings.HasPrefix(app, "xapp-"):
		row.Detail = "slack.app_token is not an app-level token, which starts with xapp- (Basic Information → App-Level Tokens)"
	default:
		cctx, cancel := context.WithTimeout(ctx, timeout)
		api := slack.New("", slack.OptionAppLevelToken(app), slack.OptionAPIURL(s.APIURL), slack.OptionHTTPClient(client))
		// The answer holds a one-time WebSocket URL; it is left unused, and
		// Slack forgets it.
		_, _, err := api.StartSocketModeContext(cctx)
		cancel()
		if err != nil {
			row.Detail = "apps.connections.open: " + slackReason(err)
		} else {
			row.Status = checkOK
			row.Detail = "Socket Mode connections can be opened"
		}
	}
	return append(rows, row)
}

// slackReason is Slack's error code with what to do about the common ones.
func slackReason(err error) string {
	msg := err.Error()
	switch msg {
	case "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive":
		return msg + " (the token is wrong, revoked or of another app: copy it again from the app's settings)"
	case "not_allowed_token_type":
		return msg + " (the token is of the wrong kind for this call)"
	case "missing_scope":
		return msg + " (the app-level token needs the connections:write scope)"
	}
	return msg
}

// checkProviders makes one tiny call to each model provider, in parallel.
func checkProviders(ctx context.Context, cfg *config.Config, timeout time.Duration) []checkRow {
	names := make([]string, 0, len(cfg.LLM.Providers))
	for name := range cfg.LLM.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	rows := make([]checkRow, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { rows[i] = checkProvider(ctx, cfg, name, timeout) })
	}
	wg.Wait()
	return rows
}

// checkProvider asks the provider's first known model to say ok.
func checkProvider(ctx context.Context, cfg *config.Config, name string, timeout time.Duration) checkRow {
	pc := cfg.LLM.Providers[name]
	row := checkRow{Component: "llm " + name, Status: checkFail}
	model := probeModel(cfg, name)
	if model == "" {
		row.Status = checkSkipped
		row.Detail = "no agent uses a model of this provider and it lists no models"
		return row
	}
	ref := name + "/" + model
	// The hosted APIs always want a key; a server at a base_url of its own
	// (a local model, a gateway) may not, so it is asked all the same.
	noKey := pc.APIKey == ""
	if noKey && pc.BaseURL == "" {
		row.Detail = ref + ": api_key is empty"
		return row
	}
	var p llm.Provider
	var err error
	if pc.Type == "anthropic" {
		p, err = anthropic.New(name, pc)
	} else {
		p, err = openai.New(name, pc)
	}
	if err != nil {
		row.Detail = err.Error()
		return row
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	_, err = p.Complete(cctx, &llm.Request{
		Model:           model,
		Messages:        []llm.Message{{Role: llm.RoleUser, Content: "Say ok"}},
		MaxOutputTokens: 5,
	})
	latency := shortDuration(time.Since(start))
	var reason string
	if err != nil {
		// An *llm.Error starts by naming the model, as the row already does.
		reason = llm.Redact(strings.TrimPrefix(err.Error(), "llm "+ref+": "), pc.APIKey.Reveal())
	}
	switch {
	case err != nil && noKey:
		row.Detail = fmt.Sprintf("%s: api_key is empty; %s", ref, reason)
	case err != nil:
		row.Detail = ref + ": " + reason
	case noKey:
		row.Status = checkWarn
		row.Detail = fmt.Sprintf("%s answered in %s, with api_key empty", ref, latency)
	default:
		row.Status = checkOK
		row.Detail = fmt.Sprintf("%s answered in %s", ref, latency)
	}
	return row
}

// probeModel is the model of provider name that the bot is likeliest to
// use: the first one an agent names (agents in name order), else the
// first the provider lists; "" when there is none.
func probeModel(cfg *config.Config, name string) string {
	agents := make([]string, 0, len(cfg.Agents))
	for a := range cfg.Agents {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	refs := append([]string(nil), cfg.Defaults.Models...)
	for _, a := range agents {
		refs = append(refs, cfg.Agents[a].Models...)
	}
	for _, ref := range refs {
		// A model's own name may hold slashes (OpenRouter's
		// "anthropic/claude-…"); the provider is what precedes the first.
		if p, m, ok := strings.Cut(ref, "/"); ok && p == name && m != "" {
			return m
		}
	}
	models := make([]string, 0, len(cfg.LLM.Providers[name].Models))
	for m := range cfg.LLM.Providers[name].Models {
		models = append(models, m)
	}
	sort.Strings(models)
	if len(models) > 0 {
		return models[0]
	}
	return ""
}

// checkMCPServers starts every enabled MCP server, waits for each to be
// ready and counts its tools, then stops them all, processes included.
func checkMCPServers(ctx context.Context, cfg *config.Config, timeout time.Duration, log *zap.Logger) []checkRow {
	names := make([]string, 0, len(cfg.MCPServers))
	enabled := map[string]config.MCPServer{}
	for name, s := range cfg.MCPServers {
		names = append(names, name)
		if s.IsEnabled() {
			enabled[name] = s
		}
	}
	sort.Strings(names)
	rows := make([]checkRow, len(names))
	if len(names) == 0 {
		return rows
	}
	start := time.Now()
	// A server that fails is not restarted during a check: its first
	// failure is the answer, and a restart loop would only add noise.
	reg, err := mcp.NewRegistry(enabled, mcp.Options{Log: log, InitConcurrency: cfg.MCPInitConcurrency, Backoff: []time.Duration{time.Hour}})
	if err != nil {
		for i, name := range names {
			rows[i] = checkRow{"mcp " + name, checkFail, err.Error()}
		}
		return rows
	}
	defer func() { _ = reg.Close() }()
	var wg sync.WaitGroup
	for i, name := range names {
		row := &rows[i]
		*row = checkRow{Component: "mcp " + name, Status: checkFail}
		if _, on := enabled[name]; !on {
			row.Status, row.Detail = checkSkipped, "enabled: false"
			continue
		}
		wg.Go(func() {
			p, err := reg.Acquire(name)
			if err != nil {
				row.Detail = err.Error()
				return
			}
			defer func() { _ = p.Close() }()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			if err := p.Warmup(cctx); err != nil {
				row.Detail = mcpReason(err, timeout)
				return
			}
			ready := shortDuration(time.Since(start))
			ts, err := p.Tools(cctx)
			if err != nil {
				row.Detail = "listing its tools: " + err.Error()
				return
			}
			row.Status = checkOK
			row.Detail = fmt.Sprintf("%d tools, ready in %s", len(ts), ready)
		})
	}
	wg.Wait()
	return rows
}

// mcpReason says why a server did not get ready: the cause of its failed
// start, or that it ran out of time.
func mcpReason(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("not ready after %s", timeout)
	}
	// Warmup's own words promise a restart, which a check does not do.
	if cause := errors.Unwrap(err); cause != nil {
		return "did not start: " + cause.Error()
	}
	return err.Error()
}
