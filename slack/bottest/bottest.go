// Package bottest starts the whole bot for a test, one way: Start builds a
// World (the Slack emulator, the scripted model server, the store, the bot
// and, on demand, more replicas), with waits on what the emulator shows and
// the bot's logs, and stops it all when the test ends. Its parts (an agent
// answered by the scripted model, a configuration pointing at the emulator,
// the runner) serve tests that build something else around them.
package bottest

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/slack/emulator"
)

// AgentName is the agent Config answers with.
const AgentName = "assistant"

// Agent is an agent whose model is the scripted server (provider "fake").
func Agent() *config.Agent {
	return &config.Agent{
		Name: AgentName, Prompt: "You answer questions in Slack.", Output: config.Output{Format: config.FormatMarkdown},
		AgentDefaults: config.AgentDefaults{Models: []string{"fake/m1"},
			MaxTurns: 5, MaxToolCallsPerTurn: 5, MaxOutputTokens: 1024,
			ContextWindow: config.DefaultContextWindow, ContextBuffer: config.DefaultContextBuffer,
			LLMTimeout: config.Duration(time.Minute), ToolTimeout: config.Duration(10 * time.Second),
			MaxSessionDuration: config.Duration(time.Minute), RestrictionMessage: config.DefaultRestrictionMessage,
		},
	}
}

// Config is a configuration holding a, whose Slack section points at srv,
// with quick progress and a short shutdown grace for tests. Sessions show
// progress messages (display: message); a test of streams sets
// Slack.Display.
func Config(srv *emulator.Server, a *config.Agent) *config.Config {
	return &config.Config{
		Agents: map[string]*config.Agent{a.Name: a},
		Slack: config.Slack{
			BotToken: config.Secret(srv.BotToken()), AppToken: config.Secret(srv.AppToken()), APIURL: srv.APIURL(),
			Agent: a.Name, SlashCommand: "/ask", ProgressInterval: config.Duration(20 * time.Millisecond),
			Display: config.DisplayMessage, TaskDisplay: config.TaskDisplayTimeline,
			History:               config.History{MaxMessages: 100, MaxChars: 100000},
			MaxConcurrentSessions: 4, ShutdownGrace: config.Duration(2 * time.Second),
			// Tests ask many questions at once as one person.
			MaxSessionsPerUser: 100,
			RejectionMessage:   config.DefaultRejectionMessage,
		},
		Quotas: config.Quotas{Message: config.DefaultQuotaMessage},
	}
}

// Runner runs cfg's agents against the scripted model server, with quick
// retries.
func Runner(tb testing.TB, model *llmtest.Server, cfg *config.Config, log *zap.Logger) *agent.Runner {
	tb.Helper()
	provider, err := openai.New("fake", config.Provider{Type: "openai", BaseURL: model.URL() + "/v1/", APIKey: "sk-test-key"})
	if err != nil {
		tb.Fatal(err)
	}
	return &agent.Runner{Providers: map[string]llm.Provider{"fake": provider}, Log: log, Agents: cfg.Agents,
		Backoff: func(int) time.Duration { return time.Millisecond }}
}
