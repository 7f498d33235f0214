package playground_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
)

// TestModelAndToolErrorTextInTheSessionTreeIsEscaped has the model call a
// tool whose name is markup, then fail with an error whose message is
// markup: the session panel shows both as text, never as elements.
func TestModelAndToolErrorTextInTheSessionTreeIsEscaped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const toolName = `<img src=x onerror=alert(1)>`
	const modelError = `<script>alert(2)</script>`
	w.Model.Push(
		llmtest.Call(toolName, `{}`),
		llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: modelError},
	)
	ts := w.Slack.Mention(playground.General, playground.User, "break things")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var last string
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL&thread="+ts) {
		if ev.name != "session" {
			continue
		}
		last = ev.data["html"]
		for _, raw := range []string{"<img", "<script", "onerror=alert(1)>", "</script>"} {
			if strings.Contains(last, raw) {
				t.Fatalf("the session panel draws %q as markup:\n%s", raw, last)
			}
		}
		if strings.Contains(last, "&lt;img src=x onerror=alert(1)&gt;") && strings.Contains(last, "&lt;script&gt;alert(2)&lt;/script&gt;") {
			return
		}
	}
	t.Fatalf("the session panel never showed the tool's name and the model's error as text; last drawn:\n%s", last)
}
