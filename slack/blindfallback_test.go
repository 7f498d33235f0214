package slack_test

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

func TestAFallbackToAModelThatCannotSeeIsToldToThePersonOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		first     llmtest.Reply // what the model that sees answers
		blindTold int           // notes the person gets
	}{
		{"the model that sees refuses, the blind one answers", llmtest.Reply{ErrorType: "model_not_found"}, 1},
		{"the model that sees answers", llmtest.TextReport("A grey pattern."), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := llmtest.NewServer(t, tt.first, llmtest.TextReport("A grey pattern."))
			w := bottest.Start(t, append(seeingAndBlind(t, model), bottest.WithConfig(func(c *config.Config) {
				a := c.Agents[bottest.AgentName]
				a.Models, a.MaxRetries = []string{"fake/m1", "fake/m2"}, 1
			}))...)
			f := w.Slack.AddFile(emulator.NewFile{Name: "screen.png", Mimetype: "image/png", User: asker, Data: pictureOf(t, 20, 20)})
			ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> what is this?", f)
			thread := w.Answered(channel, ts, "grey pattern")

			reqs := model.Requests()
			last := reqs[len(reqs)-1]
			if tt.blindTold == 1 {
				if len(reqs) != 2 || reqs[0].Model != "m1" || last.Model != "m2" {
					t.Fatalf("the calls went to %d models, the last %q; want m1 then m2", len(reqs), last.Model)
				}
				if u := lastUser(last); len(u.Images) != 0 || !strings.Contains(u.Content, "[The user attached an image you cannot see: screen.png]") {
					t.Errorf("the blind model got %d pictures and %q, want the note", len(u.Images), u.Content)
				}
			}
			if got := noteIn(thread, "cannot see images"); len(got) != tt.blindTold {
				t.Errorf("the person was told %d times (%q), want %d", len(got), got, tt.blindTold)
			}
		})
	}
}

func TestAHandOffToAnAgentThatCannotSeeIsToldToThePersonOnce(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	w := bottest.Start(t, append(seeingAndBlind(t, model), bottest.WithConfig(func(c *config.Config) {
		router := c.Agents[bottest.AgentName]
		billing := *router
		billing.Name, billing.Description, billing.Models = "billing", "Answers questions on invoices.", []string{"fake/m2"}
		router.Models, router.Router.Destinations = []string{"fake/m1"}, []string{"billing"}
		c.Agents["billing"] = &billing
	}))...)
	model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if r.Model == "m1" {
			return llmtest.Call(agent.HandoffTool, argsOf(map[string]any{"agent": "billing", "message": "an invoice"}))
		}
		return llmtest.TextReport("An invoice of 40 euros.")
	})
	f := w.Slack.AddFile(emulator.NewFile{Name: "invoice.png", Mimetype: "image/png", User: asker, Data: pictureOf(t, 20, 20)})
	ts := w.Slack.Share(channel, "", asker, "<@"+w.Slack.BotUserID()+"> what is this?", f)
	thread := w.Answered(channel, ts, "40 euros")
	reqs := model.Requests()
	if last := reqs[len(reqs)-1]; last.Model != "m2" || !strings.Contains(lastUser(last).Content, "[The user attached an image you cannot see: invoice.png]") {
		t.Fatalf("the last call went to %q with %q, want billing's blind model with the note", last.Model, lastUser(last).Content)
	}
	if got := noteIn(thread, "cannot see images"); len(got) != 1 {
		t.Errorf("the person was told %d times (%q), want once", len(got), got)
	}
}
