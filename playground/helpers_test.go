package playground_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// world is the playground as `slackbot dev` runs it: the emulator, the
// real bot connected to it over Socket Mode with the scripted model server
// behind it, and the page on a loopback listener.
type world struct {
	*bottest.World
	page *httptest.Server
}

// newWorld starts everything and waits until the bot is connected.
func newWorld(t *testing.T, opts ...bottest.Option) *world {
	t.Helper()
	srv := bottest.Emulator(t, nil)
	pg, err := playground.New(playground.Options{Server: srv, Log: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	bot := bottest.Start(t, append([]bottest.Option{bottest.OnEmulator(srv), bottest.WithBot(func(o *slack.Options) { o.Observer = pg.Observe })}, opts...)...)
	page := httptest.NewServer(pg.Handler())
	t.Cleanup(func() {
		page.CloseClientConnections()
		page.Close()
	})
	return &world{World: bot, page: page}
}

// answerWithTable is a Block Kit answer with a bold word, a link and a
// table, the things the page must draw as Slack does.
func answerWithTable() llmtest.Reply {
	cell := func(s string) map[string]any { return map[string]any{"type": "raw_text", "text": s} }
	return llmtest.SlackReport([]any{map[string]any{"blocks": []any{
		llmtest.Section("The build is *green* — see <https://example.com/ci|the CI run>."),
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
	w.T.Helper()
	var progress emulator.Message
	w.Eventually("the progress message", func() bool {
		for _, m := range w.Slack.Thread(playground.General, ts) {
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
	w.T.Helper()
	w.Eventually("the stopped report", func() bool {
		for _, m := range w.Slack.Thread(playground.General, ts) {
			if m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), "Stopped by") {
				return true
			}
		}
		return false
	})
}
