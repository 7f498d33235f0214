package main

import (
	"context"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/state"
)

// runSlack serves Slack over Socket Mode until SIGINT or SIGTERM, then
// lets running sessions finish (slack.shutdown_grace) and stops the tools.
func runSlack(ctx context.Context, args []string, stderr io.Writer) error {
	c := newCommand("run", stderr)
	c.elicitation = true // tools' questions become Slack forms
	stderr = c.stderr
	if err := c.parse(args); err != nil {
		return err
	}
	w, err := c.wire(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	for name, p := range w.cfg.LLM.Providers {
		if p.APIKey == "" && p.BaseURL == "" {
			w.log.Warn("model provider has no api_key: its calls will be refused", zap.String("provider", name))
		}
	}
	// Dedup, thread leases and the bot's threads live here: SQLite by
	// default, so a restart does not answer an event twice or forget its
	// threads; Redis when several replicas share the work.
	store, err := state.Open(w.cfg.State)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer store.Close()
	obs, err := newObservability(w)
	if err != nil {
		return err
	}
	// Deferred after the store's Close, so it runs before it: the last
	// spans are sent and the endpoint stops while the store still answers.
	defer obs.close()
	bot, err := slack.New(slack.Options{Config: w.cfg, Runner: w.runner, State: store, Log: w.log.Named("slack"),
		Metrics: obs.metrics, Tracer: obs.tracer})
	if err != nil {
		return fmt.Errorf("slack: %w", err)
	}
	if err := obs.serve(w, bot, store); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "slackbot is running in Slack; Ctrl-C stops it.")
	return bot.Run(ctx)
}
