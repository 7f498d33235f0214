package playground_test

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

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

// TestAStreamsTasksPlanAndMarkdownAreShownAsText streams, as the bot
// would, a plan title, a task's title, details and output and markdown
// that carry HTML and script: the page shows each as text, and no element,
// handler or javascript: link comes of them.
func TestAStreamsTasksPlanAndMarkdownAreShownAsText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	api := slackapi.New(w.Slack.BotToken(), slackapi.OptionAPIURL(w.Slack.APIURL()))
	auth, err := api.AuthTest()
	if err != nil {
		t.Fatal(err)
	}
	root := w.Slack.Reply(playground.General, "", playground.User, "a thread to stream in")
	const (
		plan     = `<img src=x onerror=alert(1)>`
		title    = `<script>alert(2)</script>`
		details  = `&lt;img src=x onerror=alert(3)&gt;` // as Slack text: the markup once read
		output   = `<a href="javascript:alert(4)">click</a>`
		markdown = "Look: <img src=x onerror=alert(5)> and [click](javascript:alert(6)) <script>alert(7)</script>"
	)
	task := slackapi.NewTaskUpdateChunk("t1", title)
	task.Status, task.Details, task.Output = "in_progress", details, output
	_, _, err = api.StartStreamContext(context.Background(), playground.General,
		slackapi.MsgOptionTS(root), slackapi.MsgOptionTaskDisplayMode("plan"),
		slackapi.MsgOptionRecipientUserID(playground.User), slackapi.MsgOptionRecipientTeamID(auth.TeamID),
		slackapi.MsgOptionChunks(slackapi.NewPlanUpdateChunk(plan), task, slackapi.NewMarkdownTextChunk(markdown)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	markup := regexp.MustCompile(`(?i)<(img|script|a)\b|(href|src)\s*=\s*["']?\s*javascript:`)
	var last string
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL&thread="+root) {
		if ev.name != "fragment" || !strings.Contains(ev.data["html"], `data-testid="stream"`) {
			continue
		}
		last = ev.data["html"]
		if m := markup.FindString(last); m != "" {
			t.Fatalf("the stream draws %q as markup:\n%s", m, last)
		}
		tasks := tasksIn(last)
		shown := len(tasks) == 1 && tasks[0].title == title && tasks[0].details == `<img src=x onerror=alert(3)>` && tasks[0].output == output
		if shown && strings.Contains(last, `<div class="pg-plan-title" data-testid="plan-title">`+html.EscapeString(plan)+`</div>`) &&
			strings.Contains(last, "&lt;script&gt;alert(7)&lt;/script&gt;") && strings.Contains(last, "&lt;img src=x onerror=alert(5)&gt;") {
			return
		}
	}
	t.Fatalf("the stream never showed its plan, task and markdown as text; last drawn:\n%s", last)
}

// TestAModalsTitleLabelsOptionsAndValuesAreShownAsText opens a modal whose
// every text is markup — the title, a section, a label, a hint, a
// placeholder, an initial value that closes its attribute, an option — and
// submits it with a value the bot would quote back in an error: the
// dialog shows each as text, and no element or handler comes of them.
func TestAModalsTitleLabelsOptionsAndValuesAreShownAsText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const (
		title   = `<img src=x onerror=1>` // a title holds 24 characters at most
		section = `<script>alert(2)</script>`
		label   = `<img src=x onerror=alert(3)>`
		hint    = `</label><script>alert(4)</script>`
		holder  = `"><img src=x onerror=alert(5)>`
		initial = `" autofocus onfocus="alert(6)`
		option  = `<b onmouseover=alert(7)>pick</b>`
	)
	in := slackapi.NewPlainTextInputBlockElement(plain(holder), "name")
	in.InitialValue = initial
	sel := slackapi.NewOptionsSelectBlockElement(slackapi.OptTypeStatic, plain("Choose"), "pick",
		slackapi.NewOptionBlockObject(`"><script>alert(8)</script>`, plain(option), nil))
	id := openModal(t, w, playground.User, slackapi.ModalViewRequest{
		Type: slackapi.VTModal, Title: plain(title), Submit: plain(`<i>go</i>`), CallbackID: "pg_test",
		Blocks: slackapi.Blocks{BlockSet: []slackapi.Block{
			slackapi.NewSectionBlock(plain(section), nil, nil),
			slackapi.NewInputBlock("name", plain(label), plain(hint), in),
			slackapi.NewInputBlock("pick", plain("Pick"), nil, sel),
		}},
	})
	drawn := modalEvents(t, w, "the modal", func(h string) bool { return strings.Contains(h, id) })
	// An element the texts made, or an attribute they added to a tag.
	markup := regexp.MustCompile(`(?i)<(img|script|b|i)\b|<[a-z](?:[^<>"']|"[^"]*"|'[^']*')*\s(on\w+\s*=|autofocus\b)`)
	if m := markup.FindString(drawn); m != "" {
		t.Fatalf("the modal draws %q as markup:\n%s", m, drawn)
	}
	for _, text := range []string{title, section, label, hint, option, `<i>go</i>`} {
		if !strings.Contains(drawn, html.EscapeString(text)) {
			t.Errorf("the modal does not show %s as text:\n%s", text, drawn)
		}
	}
	if !strings.Contains(drawn, `value="&#34; autofocus onfocus=&#34;alert(6)"`) || !strings.Contains(drawn, `placeholder="&#34;&gt;&lt;img src=x onerror=alert(5)&gt;"`) {
		t.Errorf("the initial value and placeholder leave their attributes:\n%s", drawn)
	}
}
