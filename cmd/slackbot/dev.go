package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
)

// runDev runs the playground: the Slack emulator, the real bot connected to
// it over Socket Mode as `slackbot run` connects to Slack, and a web page
// that draws the emulator's workspace, until SIGINT or SIGTERM.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("dev", stderr)
	c.elicitation = true // tools' questions become Slack forms
	listen := c.fs.String("listen", "127.0.0.1:3000", "address of the web page (loopback unless you mean otherwise)")
	if err := c.parse(args); err != nil {
		return err
	}
	w, err := c.wire(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	return serveDev(ctx, w, *listen, func(url string) {
		fmt.Fprintf(stdout, "slackbot playground: open %s (Ctrl-C stops it)\n", url)
	})
}

// serveDev starts the emulator, the bot and the page on listen, calls
// ready with the page's address and serves until ctx ends.
func serveDev(ctx context.Context, w *wiring, listen string, ready func(url string)) error {
	// Slack's own rate limits, so that what the bot does under them shows
	// here as it would in a workspace.
	srv, err := emulator.New(emulator.Options{RateLimits: emulator.SlackLimits()})
	if err != nil {
		return err
	}
	defer srv.Close()
	// The bot is the same as in Slack; only where it connects differs.
	cfg := *w.cfg
	cfg.Slack.BotToken = config.Secret(srv.BotToken())
	cfg.Slack.AppToken = config.Secret(srv.AppToken())
	cfg.Slack.APIURL = srv.APIURL()
	pg, err := playground.New(playground.Options{Server: srv, SlashCommand: cfg.Slack.SlashCommand,
		Setup: modelSetup(&cfg), Log: w.log.Named("playground")})
	if err != nil {
		return err
	}
	store := state.NewMemory()
	defer store.Close()
	obs, err := newObservability(w)
	if err != nil {
		return err
	}
	defer obs.close()
	bot, err := slack.New(slack.Options{Config: &cfg, Runner: w.runner, State: store,
		Log: w.log.Named("slack"), Observer: pg.Observe, Metrics: obs.metrics, Tracer: obs.tracer})
	if err != nil {
		return fmt.Errorf("slack: %w", err)
	}
	if err := obs.serve(w, bot, store); err != nil {
		return err
	}
	ln, err := playground.Listen(listen, w.log)
	if err != nil {
		return err
	}
	page := &http.Server{Handler: pg.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- page.Serve(ln) }()
	ready("http://" + ln.Addr().String() + "/")
	runErr := bot.Run(ctx)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = page.Shutdown(stopCtx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		w.log.Warn("the playground page stopped", zap.Error(err))
	}
	return runErr
}

// modelSetup says what to set when no model provider can be called: no
// api_key, and no base_url of a local server that needs none. It is empty
// when one can.
func modelSetup(cfg *config.Config) []string {
	names := make([]string, 0, len(cfg.LLM.Providers))
	for name, p := range cfg.LLM.Providers {
		if p.APIKey != "" || p.BaseURL != "" {
			return nil
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		env := "OPENAI_API_KEY"
		if cfg.LLM.Providers[name].Type == "anthropic" {
			env = "ANTHROPIC_API_KEY"
		}
		out = append(out, fmt.Sprintf("provider %q has no api_key: set %s in the environment and start `slackbot dev` again", name, env))
	}
	return append(out, "or use a local Ollama: add a provider with type: openai and base_url: http://localhost:11434/v1 to llm.providers in the configuration, and name its models (\"ollama/llama3.1:8b\") in the agent's models")
}
