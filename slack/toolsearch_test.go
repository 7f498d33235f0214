package slack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/tools"
)

// weatherBox is a provider of many tools, enough to be searched.
type weatherBox struct{ tools.Base }

func (weatherBox) Namespace() string { return "box" }

func (weatherBox) Tools(context.Context) ([]tools.Tool, error) {
	var out []tools.Tool
	for i := range 80 {
		out = append(out, tools.Tool{Name: fmt.Sprintf("box__forecast_%d", i), Description: "Weather forecast for a city."})
	}
	return out, nil
}

func (weatherBox) Call(context.Context, tools.Call) (tools.Result, error) {
	return tools.Result{Content: "sunny"}, nil
}

// The progress message says what a search looks for, in the model's words
// escaped like any text the model writes.
func TestTheProgressMessageSaysWhatToolASearchLooksFor(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.ProgressInterval = config.Duration(time.Millisecond)
		c.Slack.RateLimits = map[string]config.RateLimit{"chat.update": {PerMinute: 1e6, Burst: 1000}}
		a := c.Agents["assistant"]
		a.Tools, a.ToolSearch = []string{"box__*"}, config.ToolSearchAlways
	}), bottest.WithRunner(func(r *agent.Runner) {
		r.Tools = tools.New(context.Background(), tools.Options{}, weatherBox{})
	}))
	release := make(chan struct{})
	w.Model.Push(llmtest.Call(agent.SearchTool, `{"query":"check the <!channel> weather"}`))
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		select { // the answer waits until the test has seen the progress
		case <-release:
		case <-time.After(20 * time.Second):
		}
		return llmtest.TextReport("Sunny.")
	})
	ts := w.Slack.Mention(channel, asker, "weather?")
	const want = "Looking for a tool to check the &lt;!channel&gt; weather"
	var seen string
	w.Eventually("the progress message to say what the search looks for", func() bool {
		for _, c := range w.Slack.Calls("chat.update") {
			if blocks := c.Params.Get("blocks"); strings.Contains(blocks, "Looking for a tool") {
				seen = strings.ReplaceAll(blocks, `\u0026`, "&")
				return true
			}
		}
		return false
	})
	close(release)
	w.Answered(channel, ts, "Sunny")
	if !strings.Contains(seen, want) || strings.Contains(seen, "<!channel>") {
		t.Errorf("progress = %s, want %q with the broadcast escaped", seen, want)
	}
}
