// Package bottest builds what a test of the whole bot needs around the Slack
// emulator: an agent answered by the scripted model server, a configuration
// that points the bot at the emulator, the runner, and the model's replies.
package bottest

import (
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/slack/slacktest"
)

// AgentName is the agent Config answers with.
const AgentName = "assistant"

// Agent is an agent whose model is the scripted server (provider "fake").
func Agent() *config.Agent {
	return &config.Agent{
		Name: AgentName, Prompt: "You answer questions in Slack.", Models: []string{"fake/m1"},
		MaxTurns: 5, MaxToolCallsPerTurn: 5, MaxOutputTokens: 1024,
		ContextWindow: config.DefaultContextWindow, ContextBuffer: config.DefaultContextBuffer,
		LLMTimeout: config.Duration(time.Minute), ToolTimeout: config.Duration(10 * time.Second),
		MaxSessionDuration: config.Duration(time.Minute), Output: config.Output{Format: config.FormatMarkdown},
		RestrictionMessage: config.DefaultRestrictionMessage,
	}
}

// Config is a configuration holding a, whose Slack section points at srv,
// with quick progress and a short shutdown grace for tests. Sessions show
// progress messages (display: message); a test of streams sets
// Slack.Display.
func Config(srv *slacktest.Server, a *config.Agent) *config.Config {
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

// Call is a model reply calling one tool.
func Call(name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: args}}}
}

// SlackReport is a final report of Block Kit messages.
func SlackReport(messages any) llmtest.Reply {
	b, _ := json.Marshal(map[string]any{"status": "success", "report_format": "slack-block-kit", "messages": messages})
	return Call(agent.FinalReportTool, string(b))
}

// TextReport is a final report of Markdown, through report_content.
func TextReport(content string) llmtest.Reply {
	b, _ := json.Marshal(map[string]any{"status": "success", "report_format": "slack-block-kit", "report_content": content})
	return Call(agent.FinalReportTool, string(b))
}

// Section is one mrkdwn section block.
func Section(text string) map[string]any {
	return map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}}
}
