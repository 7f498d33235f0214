package bottest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
)

// The channel and the person a world starts with.
const (
	Channel = "C0GENERAL"
	Asker   = "U0ADA"
)

// World is the real bot connected over Socket Mode to the emulator, with
// the scripted model server behind it. Everything in it stops when the
// test ends.
type World struct {
	T      testing.TB
	Slack  *emulator.Server
	Model  *llmtest.Server
	Config *config.Config
	Runner *agent.Runner          // the first bot's
	Store  state.Store            // the first bot's; a replica may share it
	Bots   []*slack.Bot           // the first bot, then the replicas
	Log    *zap.Logger            // the first bot's, written to the test's log
	Logs   *observer.ObservedLogs // every bot's lines at info and above (WithLogLevel)

	stop     context.CancelFunc
	done     chan error
	stopOnce sync.Once

	mu        sync.Mutex
	feedbacks []string
}

// Start starts the emulator (unless OnEmulator gave one, with Channel and
// Asker in it), the scripted model and the bot with the options applied,
// and returns once the bot is connected.
func Start(tb testing.TB, opts ...Option) *World {
	tb.Helper()
	s := settings{observe: zap.InfoLevel}
	for _, o := range opts {
		o(&s)
	}
	srv := s.emulator
	if srv == nil {
		srv = Emulator(tb, s.limits)
		srv.AddChannel(Channel, "general", true)
		srv.AddUser(Asker, "ada")
	}
	model := llmtest.NewServer(tb)
	a := Agent()
	a.LLMTimeout, a.Tools = config.Duration(20*time.Second), []string{"everything__*"}
	cfg := Config(srv, a)
	core, logs := observer.New(s.observe)
	log := zaptest.NewLogger(tb, zaptest.Level(zap.InfoLevel), zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, core)
	})))
	runner := Runner(tb, model, cfg, log)
	for _, f := range s.config {
		f(cfg)
	}
	for _, f := range s.runner {
		f(runner)
	}
	store := s.store
	if store == nil {
		store = state.NewMemory()
	}
	w := &World{T: tb, Slack: srv, Model: model, Config: cfg, Runner: runner, Store: store, Log: log, Logs: logs, done: make(chan error, 1)}
	bo := slack.Options{Config: cfg, Runner: runner, State: store, Log: log, OnFeedback: func(v string) {
		w.mu.Lock()
		w.feedbacks = append(w.feedbacks, v)
		w.mu.Unlock()
	}}
	for _, f := range s.bot {
		f(&bo)
	}
	b, err := slack.New(bo)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	w.stop, w.Bots = stop, []*slack.Bot{b}
	go func() { w.done <- b.Run(ctx) }()
	tb.Cleanup(w.Shutdown)
	w.Eventually("the bot to connect", func() bool { return srv.Connections() > 0 })
	return w
}

// Emulator starts an emulator enforcing limits (nil: none) with the
// timings the bot's tests use: a lost ack is redelivered after 2 s, pings
// every second. It closes when the test ends.
func Emulator(tb testing.TB, limits map[string]emulator.Limit) *emulator.Server {
	tb.Helper()
	srv, err := emulator.New(emulator.Options{AckTimeout: 2 * time.Second, PingInterval: time.Second,
		DisconnectGrace: 200 * time.Millisecond, RateLimits: limits})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}

// Replica starts another bot on the same emulator with the same
// configuration and runner, sharing the first bot's store unless
// OnStore gives it its own (as a replica has its own connection to a
// shared Redis); only OnStore and WithBot apply. It stops when the test
// ends; Start waits until it is connected.
func (w *World) Replica(opts ...Option) *slack.Bot {
	w.T.Helper()
	s := settings{store: w.Store}
	for _, o := range opts {
		o(&s)
	}
	n := w.Slack.Connections()
	bo := slack.Options{Config: w.Config, Runner: w.Runner, State: s.store, Log: w.Log.Named("replica" + string(rune('1'+len(w.Bots))))}
	for _, f := range s.bot {
		f(&bo)
	}
	bot, err := slack.New(bo)
	if err != nil {
		w.T.Fatal(err)
	}
	w.Bots = append(w.Bots, bot)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	w.T.Cleanup(func() {
		stop()
		<-done
	})
	w.Eventually("the replica to connect", func() bool { return w.Slack.Connections() > n })
	return bot
}

// Shutdown stops the first bot and waits for its Run to return (once),
// failing the test when that takes more than 20 s.
func (w *World) Shutdown() {
	w.stopOnce.Do(func() {
		w.stop()
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			w.T.Error("the bot did not stop within 20 s")
		}
	})
}

// Feedback is what the first bot's OnFeedback has been called with so far.
func (w *World) Feedback() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.feedbacks...)
}

// Eventually waits until cond holds, checking again on each change of the
// emulator; see wait.Eventually.
func (w *World) Eventually(what string, cond func() bool, opts ...wait.Option) {
	w.T.Helper()
	wait.Eventually(w.T, what, cond, append([]wait.Option{wait.On(w.Slack.Changed)}, opts...)...)
}

// Logged waits until a bot has logged a line with message msg.
func (w *World) Logged(msg string) {
	w.T.Helper()
	wait.Eventually(w.T, "the log line "+msg, func() bool { return w.Logs.FilterMessage(msg).Len() > 0 })
}

// Answered waits until the thread ts of ch holds a bot message whose text
// contains want, and returns the thread.
func (w *World) Answered(ch, ts, want string) []emulator.Message {
	w.T.Helper()
	var thread []emulator.Message
	w.Eventually("an answer containing "+want, func() bool {
		thread = w.Slack.Thread(ch, ts)
		for _, m := range thread {
			if m.BotID != "" && strings.Contains(MessageText(m), want) {
				return true
			}
		}
		return false
	})
	return thread
}

// ProgressMessage waits for the bot's message with a Stop button in the
// thread ts of ch and returns it.
func (w *World) ProgressMessage(ch, ts string) emulator.Message {
	w.T.Helper()
	var progress emulator.Message
	w.Eventually("the progress message", func() bool {
		for _, m := range BotMessages(w.Slack.Thread(ch, ts)) {
			if strings.Contains(string(m.Blocks), "slackbot_stop") {
				progress = m
				return true
			}
		}
		return false
	})
	return progress
}

// MessageText is a message's text and the text of its blocks.
func MessageText(m emulator.Message) string {
	return m.Text + " " + string(m.Blocks)
}

// BotMessages are the bot's messages in a thread.
func BotMessages(thread []emulator.Message) []emulator.Message {
	var out []emulator.Message
	for _, m := range thread {
		if m.BotID != "" {
			out = append(out, m)
		}
	}
	return out
}
