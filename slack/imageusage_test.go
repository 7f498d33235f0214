package slack_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// A picture's tokens are part of the prompt tokens the provider reports;
// nothing estimates them apart. What the provider reports for a question
// with a picture is what its person's and channel's budgets count, and
// what the session costs.
func TestTheTokensAProviderReportsForAPictureCountInTheBudgetsAndTheCost(t *testing.T) {
	t.Parallel()
	for _, wire := range []string{"openai", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			t.Parallel()
			reported := llmtest.Usage{Input: 1834, Output: 41, CacheRead: 200}
			reply := llmtest.TextReport("A grey pattern.")
			reply.Usage = &reported
			model := llmtest.NewServer(t, reply)
			sees := true
			price := config.Model{Input: 3, Output: 15, CacheRead: 0.3, Vision: &sees}
			var mu sync.Mutex
			var done *llm.Usage
			w := bottest.Start(t, append(fakeProvider(t, model, wire, map[string]config.Model{"m1": price}), bottest.WithConfig(func(c *config.Config) {
				c.Quotas = config.Quotas{User: config.Budget{DailyTokens: 1e9, DailyCostUSD: 1000},
					Channel: config.Budget{DailyTokens: 1e9, DailyCostUSD: 1000}, Message: config.DefaultQuotaMessage}
			}), bottest.WithBot(func(o *slack.Options) {
				o.Observer = func(_ slack.Thread, e agent.Event) {
					if e.Kind == agent.EventSessionDone && e.Usage != nil {
						mu.Lock()
						done = e.Usage
						mu.Unlock()
					}
				}
			}))...)
			f := w.Slack.AddFile(emulator.NewFile{Name: "screen.png", Mimetype: "image/png", User: asker, Data: pictureOf(t, 800, 600)})
			ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> what is this?", f)
			w.Answered(channel, ts, "grey pattern")
			if u := lastUser(model.Requests()[0]); len(u.Images) != 1 {
				t.Fatalf("the request carried %d pictures, want the one attached", len(u.Images))
			}

			wantTokens := float64(reported.Input + reported.Output + reported.CacheRead)
			wantCost := llm.Cost(price, llm.Usage{InputTokens: reported.Input, OutputTokens: reported.Output, CacheReadTokens: reported.CacheRead})
			day := time.Now().UTC().Format("2006-01-02")
			for _, who := range []string{"user:" + asker, "channel:" + channel} {
				var tokens, cost float64
				w.Eventually("the session settled against "+who, func() bool {
					tokens, _ = w.Store.Get(t.Context(), "quota:"+who+":"+day+":tokens")
					cost, _ = w.Store.Get(t.Context(), "quota:"+who+":"+day+":cost")
					return tokens == wantTokens
				})
				if math.Abs(cost-wantCost) > 1e-9 {
					t.Errorf("%s: the budget counts $%.6f, want the reported usage's $%.6f", who, cost, wantCost)
				}
			}
			w.Eventually("the session's total", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return done != nil
			})
			if done.InputTokens != reported.Input || done.CacheReadTokens != reported.CacheRead || math.Abs(done.CostUSD-wantCost) > 1e-9 {
				t.Errorf("the session's usage is %+v, want the %d input tokens reported at $%.6f", *done, reported.Input, wantCost)
			}
		})
	}
}
