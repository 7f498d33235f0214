package playground_test

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack/bottest"
)

// dm is the DM between the person at the page and the bot.
const dm = "D" + playground.User

// hostileTitle is a suggested prompt's title that would run script, ping
// the channel and break out of an attribute if the page drew it as HTML.
const hostileTitle = `<img src=x onerror=alert(1)>" onclick="x <!channel>`

// hostileMessage is a suggested prompt's message that would close the
// attribute it is shown in and run script.
const hostileMessage = `"><script>alert(2)</script>`

// withPrompts gives the world's agent suggested prompts: a hostile one and
// a plain one.
var withPrompts = bottest.WithConfig(func(c *config.Config) {
	c.Agents[bottest.AgentName].SuggestedPrompts = []config.SuggestedPrompt{
		{Title: hostileTitle, Message: hostileMessage},
		{Title: "Build status", Message: "Is the build green?"},
	}
})

// promptsDrawn waits for the page's event stream of the DM to draw the
// suggested prompts, and returns their HTML.
func promptsDrawn(t *testing.T, w *world) string {
	t.Helper()
	for ev := range stream(ctxFor(t), t, w.page.URL+"/events?c="+dm) {
		if ev.name == "prompts" && ev.data["html"] != "" {
			return ev.data["html"]
		}
	}
	t.Fatal("the suggested prompts were never drawn")
	return ""
}

func TestOpeningTheDMDrawsTheBotsSuggestedPromptsAndAPressAsksIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t, withPrompts)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("The build is green.")}}}))
	if _, set := w.Slack.SuggestedPrompts(dm, ""); set {
		t.Fatal("prompts set before the DM was opened")
	}
	post(t, w.page.URL+"/view", `{"channel":"`+dm+`"}`, http.StatusNoContent)
	drawn := promptsDrawn(t, w)

	if n := strings.Count(drawn, `data-testid="suggested-prompt"`); n != 2 {
		t.Errorf("%d prompts drawn, want 2:\n%s", n, drawn)
	}
	if !strings.Contains(drawn, `>Build status</button>`) || !strings.Contains(drawn, `title="Is the build green?"`) {
		t.Errorf("the plain prompt is not drawn with its title and message:\n%s", drawn)
	}
	for _, raw := range []string{"<img", `" onclick`, "<!channel>", "<script"} {
		if strings.Contains(drawn, raw) {
			t.Errorf("the hostile prompt reached the page unescaped (%s):\n%s", raw, drawn)
		}
	}
	if !strings.Contains(drawn, `title="`+html.EscapeString(hostileMessage)+`">`+html.EscapeString(hostileTitle)+"</button>") {
		t.Errorf("the hostile prompt is not shown as its text:\n%s", drawn)
	}

	before := len(w.Slack.Messages(dm))
	post(t, w.page.URL+"/prompt", `{"title":"Build status"}`, http.StatusBadRequest)
	post(t, w.page.URL+"/prompt", `{"index":4,"title":"Build status"}`, http.StatusNotFound)
	post(t, w.page.URL+"/prompt", `{"index":-1,"title":"Build status"}`, http.StatusNotFound)
	post(t, w.page.URL+"/prompt", `{"index":0,"title":"Build status"}`, http.StatusConflict)
	if n := len(w.Slack.Messages(dm)); n != before {
		t.Fatalf("a refused press sent a message (%d messages, %d before)", n, before)
	}

	sent := post(t, w.page.URL+"/prompt", `{"index":1,"title":"Build status"}`, http.StatusOK)
	var resp struct{ TS, Thread string }
	if err := json.Unmarshal([]byte(sent), &resp); err != nil || resp.TS == "" || resp.Thread != resp.TS {
		t.Fatalf("the press answered %q", sent)
	}
	msgs := w.Slack.Thread(dm, resp.TS)
	if len(msgs) == 0 || msgs[0].User != playground.User || msgs[0].Text != "Is the build green?" {
		t.Fatalf("the press did not send the prompt's message as the person's: %+v", msgs)
	}
	w.Answered(dm, resp.TS, "The build is green.")
}

func TestLookingAtAChannelTellsTheBotWhereThePersonIs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.Model.Push(llmtest.TextReport("Done."))
	post(t, w.page.URL+"/view", `{"channel":"C0SECRET"}`, http.StatusBadRequest)
	post(t, w.page.URL+"/view", `{"channel":"C0GENERAL"}`, http.StatusNoContent)
	sent := post(t, w.page.URL+"/send", `{"channel":"`+dm+`","text":"summarise it"}`, http.StatusOK)
	var resp struct{ TS string }
	if err := json.Unmarshal([]byte(sent), &resp); err != nil || resp.TS == "" {
		t.Fatalf("send answered %q", sent)
	}
	w.Answered(dm, resp.TS, "Done.")
	if reqs := w.Model.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "The user is looking at #general.") {
		t.Fatalf("the DM's question lacks the line naming the channel in view")
	}
}

func TestTheAgentViewsEndpointsAnswerOnlyThePage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, withPrompts)
	before := len(w.Slack.Envelopes())
	for _, path := range []string{"/view", "/prompt"} {
		for _, a := range postAttacks {
			h := fromThePage(t, w)
			a.change(h)
			body := `{"channel":"` + dm + `","index":1,"title":"Build status"}`
			if status, answer := do(t, "POST", w.page.URL+path, body, h); status != a.status {
				t.Errorf("%s, %s: %d %q, want %d", path, a.name, status, answer, a.status)
			}
		}
	}
	if n := len(w.Slack.Envelopes()); n != before {
		t.Fatalf("a refused request reached the bot (%d envelopes, %d before)", n, before)
	}
}
