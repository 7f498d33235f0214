package playground_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/slackbot/slackbot/llm/llmtest"
)

// TestInTheBrowserTheDMOffersItsSuggestedPromptsAndAPressIsAnswered opens
// #general (the bot is told the person looks at it), then the bot's DM:
// the agent's suggested prompts appear above the composer, the hostile one
// as plain text; pressing one asks its question as the person, and the
// answer arrives in the DM's thread with the line naming #general before
// the model.
func TestInTheBrowserTheDMOffersItsSuggestedPromptsAndAPressIsAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t, withPrompts)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("The build is green.")}}}))
	b := newBrowser(t, w.page.URL)
	w.Eventually("the bot told the person looks at #general", func() bool {
		for _, e := range w.Slack.Envelopes() {
			if e.Acked && strings.Contains(string(e.Payload), `"app_context_changed"`) {
				return true
			}
		}
		return false
	})
	if _, set := w.Slack.SuggestedPrompts(dm, ""); set {
		t.Fatal("prompts set before the DM was opened")
	}

	b.run("open the DM", chromedp.Click(chromedp.CSS(`[data-testid="channel"][data-channel="`+dm+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-channel="`+dm+`"] [data-testid="composer"]`)))
	prompt := `[data-testid="prompts"] [data-testid="suggested-prompt"]`
	b.waitText("the plain prompt", prompt+`[data-prompt="1"]`, "Build status")
	b.waitText("the hostile prompt as its text", prompt+`[data-prompt="0"]`, "<img src=x onerror=alert(1)>")
	js := `document.querySelectorAll('[data-testid="prompts"] :is(img, script, [onclick])').length`
	if injected, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](js)); err != nil || injected != 0 {
		t.Errorf("%d elements injected by a prompt's title (%v)", injected, err)
	}

	b.run("press the prompt", chromedp.Click(chromedp.CSS(prompt+`[data-prompt="1"]`)))
	b.waitFor("the thread pane", `[data-testid="thread-pane"]:not([hidden])`)
	b.waitText("the prompt's message sent as the person's", `[data-testid="messages"] [data-testid="message"][data-bot="false"]`, "Is the build green?")
	b.waitText("the answer in the DM's thread", thread, "The build is green.")
	if reqs := w.Model.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "The user is looking at #general.") {
		t.Errorf("the model was not told the person looks at #general (%d requests)", len(reqs))
	}
	b.noErrors()
}
