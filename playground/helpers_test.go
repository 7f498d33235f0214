package playground_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
)

// world is the playground as `slackbot dev` runs it: the emulator, the
// real bot connected to it over Socket Mode with the scripted model server
// behind it, and the page on a loopback listener.
type world struct {
	t     *testing.T
	srv   *emulator.Server
	model *llmtest.Server
	page  *httptest.Server
	store state.Store // the bot's
}

// newWorld starts everything and waits until the bot is connected.
func newWorld(t *testing.T, opts ...func(*config.Config)) *world {
	t.Helper()
	srv, err := emulator.New(emulator.Options{AckTimeout: 2 * time.Second, PingInterval: time.Second, DisconnectGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	model := llmtest.NewServer(t)
	a := bottest.Agent()
	a.LLMTimeout = config.Duration(20 * time.Second)
	cfg := bottest.Config(srv, a)
	for _, o := range opts {
		o(cfg)
	}
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	runner := bottest.Runner(t, model, cfg, log)
	pg, err := playground.New(playground.Options{Server: srv, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	store := state.NewMemory()
	bot, err := slack.New(slack.Options{Config: cfg, Runner: runner, State: store, Log: log, Observer: pg.Observe})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	page := httptest.NewServer(pg.Handler())
	t.Cleanup(func() {
		page.CloseClientConnections()
		page.Close()
		stop()
		<-done
	})
	w := &world{t: t, srv: srv, model: model, page: page, store: store}
	w.waitFor("the bot to connect", func() bool { return srv.Connections() > 0 })
	return w
}

// waitFor waits on the emulator's changes until cond holds.
func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.srv.WaitFor(ctx, cond); err != nil {
		w.t.Fatalf("timed out waiting for %s", what)
	}
}

var (
	slackReport = bottest.SlackReport
	section     = bottest.Section
)

// answerWithTable is a Block Kit answer with a bold word, a link and a
// table, the things the page must draw as Slack does.
func answerWithTable() llmtest.Reply {
	cell := func(s string) map[string]any { return map[string]any{"type": "raw_text", "text": s} }
	return slackReport([]any{map[string]any{"blocks": []any{
		section("The build is *green* — see <https://example.com/ci|the CI run>."),
		map[string]any{"type": "table", "rows": []any{
			[]any{cell("Job"), cell("Result")},
			[]any{cell("unit"), cell("passed")},
		}},
	}}})
}

// slow is a model that takes a minute to answer.
func slow(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} }

// progressOf waits for the progress message, with its Stop button, in the
// thread of #general that starts at ts.
func (w *world) progressOf(ts string) emulator.Message {
	w.t.Helper()
	var progress emulator.Message
	w.waitFor("the progress message", func() bool {
		for _, m := range w.srv.Thread(playground.General, ts) {
			if m.BotID != "" && strings.Contains(string(m.Blocks), "slackbot_stop") {
				progress = m
				return true
			}
		}
		return false
	})
	return progress
}

// stoppedIn waits for the "Stopped by" report in the thread of #general
// that starts at ts.
func (w *world) stoppedIn(ts string) {
	w.t.Helper()
	w.waitFor("the stopped report", func() bool {
		for _, m := range w.srv.Thread(playground.General, ts) {
			if m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), "Stopped by") {
				return true
			}
		}
		return false
	})
}
