package playground_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/slacktest"
	"github.com/slackbot/slackbot/state"
)

// world is the playground as `slackbot dev` runs it: the emulator, the
// real bot connected to it over Socket Mode with the scripted model server
// behind it, and the page on a loopback listener.
type world struct {
	t     *testing.T
	srv   *slacktest.Server
	model *llmtest.Server
	page  *httptest.Server
}

// newWorld starts everything and waits until the bot is connected.
func newWorld(t *testing.T, opts ...func(*config.Config)) *world {
	t.Helper()
	srv, err := slacktest.New(slacktest.Options{AckTimeout: 2 * time.Second, PingInterval: time.Second, DisconnectGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	model := llmtest.NewServer(t)
	a := &config.Agent{
		Name: "assistant", Prompt: "You answer questions in Slack.", Models: []string{"fake/m1"},
		MaxTurns: 5, MaxToolCallsPerTurn: 5, MaxOutputTokens: 1024,
		ContextWindow: config.DefaultContextWindow, ContextBuffer: config.DefaultContextBuffer,
		LLMTimeout: config.Duration(20 * time.Second), ToolTimeout: config.Duration(10 * time.Second),
		MaxSessionDuration: config.Duration(time.Minute), Output: config.Output{Format: config.FormatMarkdown},
		RestrictionMessage: config.DefaultRestrictionMessage,
	}
	cfg := &config.Config{
		Agents: map[string]*config.Agent{"assistant": a},
		Slack: config.Slack{
			BotToken: config.Secret(srv.BotToken()), AppToken: config.Secret(srv.AppToken()), APIURL: srv.APIURL(),
			Agent: "assistant", SlashCommand: "/ask", ProgressInterval: config.Duration(20 * time.Millisecond),
			History:               config.History{MaxMessages: 100, MaxChars: 100000},
			MaxConcurrentSessions: 4, ShutdownGrace: config.Duration(2 * time.Second),
			RejectionMessage: config.DefaultRejectionMessage,
		},
	}
	for _, o := range opts {
		o(cfg)
	}
	provider, err := openai.New("fake", config.Provider{Type: "openai", BaseURL: model.URL() + "/v1/", APIKey: "sk-test-key"})
	if err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	runner := &agent.Runner{Providers: map[string]llm.Provider{"fake": provider}, Log: log, Agents: cfg.Agents,
		Backoff: func(int) time.Duration { return time.Millisecond }}
	pg, err := playground.New(playground.Options{Server: srv, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	bot, err := slack.New(slack.Options{Config: cfg, Runner: runner, State: state.NewMemory(), Log: log, Observer: pg.Observe})
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
	w := &world{t: t, srv: srv, model: model, page: page}
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

// call is a model reply calling one tool.
func call(name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args}}}
}

// slackReport is a final report of Block Kit messages.
func slackReport(messages any) llmtest.Reply {
	b, _ := json.Marshal(map[string]any{"status": "success", "report_format": "slack-block-kit", "messages": messages})
	return call(agent.FinalReportTool, string(b))
}

// section is one mrkdwn section block.
func section(text string) map[string]any {
	return map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}}
}

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
