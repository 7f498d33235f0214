package slack_test

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
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
)

// world is the real bot, connected over Socket Mode to the emulator, with
// the scripted model server behind it.
type world struct {
	t        *testing.T
	srv      *emulator.Server
	model    *llmtest.Server
	cfg      *config.Config
	stop     context.CancelFunc
	done     chan error
	ctx      context.Context
	logger   *zap.Logger
	logs     *observer.ObservedLogs
	stopOnce sync.Once
	store    state.Store   // the first bot's; a second replica may share it
	runner   *agent.Runner // the first bot's runner
	bots     []*slack.Bot  // the first bot, then the replicas

	mu        sync.Mutex
	feedbacks []string // what the first bot's OnFeedback was called with
}

// feedbackCalls is what OnFeedback has been called with so far.
func (w *world) feedbackCalls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.feedbacks...)
}

// replica starts a second bot on the same emulator, sharing the first's
// state store, as a second replica shares Redis; it stops at cleanup.
func (w *world) replica() {
	w.t.Helper()
	w.replicaOn(w.store)
}

// replicaOn starts a second bot on the same emulator with its own store,
// as a second replica has its own connection to a shared Redis.
func (w *world) replicaOn(store state.Store) {
	w.t.Helper()
	n := w.srv.Connections()
	bot, err := slack.New(slack.Options{Config: w.cfg, Runner: w.runner, State: store, Log: w.logger.Named("replica2")})
	if err != nil {
		w.t.Fatal(err)
	}
	w.bots = append(w.bots, bot)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	w.t.Cleanup(func() {
		stop()
		<-done
	})
	w.waitFor("the second replica to connect", func() bool { return w.srv.Connections() > n })
}

type worldOption func(*config.Config, *agent.Runner)

const (
	channel = "C0GENERAL"
	asker   = "U0ADA"
)

// newWorld starts the emulator, the fake model and the bot, and waits until
// the bot is connected.
func newWorld(t *testing.T, opts ...worldOption) *world {
	t.Helper()
	return newWorldAt(t, nil, state.NewMemory(), nil, opts...)
}

// newWorldWith is newWorld with bot, when set, changing the bot's options
// before it is built.
func newWorldWith(t *testing.T, bot func(*slack.Options), opts ...worldOption) *world {
	t.Helper()
	return newWorldAt(t, nil, state.NewMemory(), bot, opts...)
}

// newWorldOn is newWorld with the bot's state in store.
func newWorldOn(t *testing.T, store state.Store, opts ...worldOption) *world {
	t.Helper()
	return newWorldAt(t, nil, store, nil, opts...)
}

// newWorldAt is newWorld with the emulator enforcing limits (nil: none),
// the bot keeping its state in store, and bot, when set, changing the
// bot's options before it is built.
func newWorldAt(t *testing.T, limits map[string]emulator.Limit, store state.Store, bot func(*slack.Options), opts ...worldOption) *world {
	t.Helper()
	srv, err := emulator.New(emulator.Options{AckTimeout: 2 * time.Second, PingInterval: time.Second, DisconnectGrace: 200 * time.Millisecond,
		RateLimits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	srv.AddChannel(channel, "general", true)
	srv.AddUser(asker, "ada")
	model := llmtest.NewServer(t)
	a := bottest.Agent()
	a.LLMTimeout, a.Tools = config.Duration(20*time.Second), []string{"everything__*"}
	cfg := bottest.Config(srv, a)
	core, logs := observer.New(zap.InfoLevel)
	log := zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel), zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, core)
	})))
	runner := bottest.Runner(t, model, cfg, log)
	for _, o := range opts {
		o(cfg, runner)
	}
	w := &world{t: t, srv: srv, model: model, cfg: cfg, done: make(chan error, 1), ctx: context.Background(), logger: log, logs: logs, store: store, runner: runner}
	bo := slack.Options{Config: cfg, Runner: runner, State: store, Log: log, OnFeedback: func(v string) {
		w.mu.Lock()
		w.feedbacks = append(w.feedbacks, v)
		w.mu.Unlock()
	}}
	if bot != nil {
		bot(&bo)
	}
	b, err := slack.New(bo)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	w.stop, w.bots = stop, []*slack.Bot{b}
	go func() { w.done <- b.Run(ctx) }()
	t.Cleanup(w.shutdown)
	w.waitFor("the bot to connect", func() bool { return srv.Connections() > 0 })
	return w
}

// shutdown stops the bot and waits for Run to return (once).
func (w *world) shutdown() {
	w.stopOnce.Do(func() {
		w.stop()
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			w.t.Error("the bot did not stop within 20 s")
		}
	})
}

// waitFor waits on the emulator's changes until cond holds.
func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := w.srv.WaitFor(ctx, cond); err != nil {
		w.t.Fatalf("timed out waiting for %s", what)
	}
}

// answered waits until the thread holds a bot message whose text contains
// want, and returns the thread.
func (w *world) answered(ch, ts, want string) []emulator.Message {
	w.t.Helper()
	var thread []emulator.Message
	w.waitFor("an answer containing "+want, func() bool {
		thread = w.srv.Thread(ch, ts)
		for _, m := range thread {
			if m.BotID != "" && strings.Contains(messageText(m), want) {
				return true
			}
		}
		return false
	})
	return thread
}

// messageText is a message's text and the text of its blocks.
func messageText(m emulator.Message) string {
	return m.Text + " " + string(m.Blocks)
}

// botMessages are the bot's messages in a thread.
func botMessages(thread []emulator.Message) []emulator.Message {
	var out []emulator.Message
	for _, m := range thread {
		if m.BotID != "" {
			out = append(out, m)
		}
	}
	return out
}

// ---- what the model answers ----

var (
	call        = bottest.Call
	slackReport = bottest.SlackReport
	textReport  = bottest.TextReport
	section     = bottest.Section
)

// lastUserText is the last user message the model was sent.
func lastUserText(r *llmtest.Recorded) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// gate holds model replies until released, so a test can act while a
// session is running.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// progressMessage waits for the bot's message with a Stop button in the
// thread ts of channel and returns it.
func (w *world) progressMessage(ts string) emulator.Message {
	w.t.Helper()
	var progress emulator.Message
	w.waitFor("the progress message", func() bool {
		for _, m := range botMessages(w.srv.Thread(channel, ts)) {
			if strings.Contains(string(m.Blocks), "slackbot_stop") {
				progress = m
				return true
			}
		}
		return false
	})
	return progress
}
