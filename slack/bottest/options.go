package bottest

import (
	"go.uber.org/zap/zapcore"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
)

// Option changes the world Start builds, or the bot Replica adds.
type Option func(*settings)

type settings struct {
	emulator *emulator.Server
	limits   map[string]emulator.Limit
	store    state.Store
	config   []func(*config.Config)
	runner   []func(*agent.Runner)
	bot      []func(*slack.Options)
	observe  zapcore.Level
}

// WithConfig changes the configuration before the bot is built.
func WithConfig(f func(*config.Config)) Option {
	return func(s *settings) { s.config = append(s.config, f) }
}

// WithRunner changes the runner before the bot is built.
func WithRunner(f func(*agent.Runner)) Option {
	return func(s *settings) { s.runner = append(s.runner, f) }
}

// WithBot changes the bot's options before it is built.
func WithBot(f func(*slack.Options)) Option {
	return func(s *settings) { s.bot = append(s.bot, f) }
}

// OnStore keeps the bot's state in store instead of a fresh memory store.
func OnStore(store state.Store) Option { return func(s *settings) { s.store = store } }

// OnEmulator connects the bot to srv, which the caller owns and has set
// up, instead of a fresh emulator.
func OnEmulator(srv *emulator.Server) Option { return func(s *settings) { s.emulator = srv } }

// WithRateLimits makes the fresh emulator enforce limits per method.
func WithRateLimits(limits map[string]emulator.Limit) Option {
	return func(s *settings) { s.limits = limits }
}

// WithLogLevel records the bot's log lines from level up in Logs, not only
// from info up; the test's own log still shows info and above.
func WithLogLevel(level zapcore.Level) Option { return func(s *settings) { s.observe = level } }
