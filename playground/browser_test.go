package playground_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slackbot/slackbot/llm/llmtest"
)

// browser is a headless Chromium tab on the playground, recording every
// error its console or its scripts report.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu     sync.Mutex
	errors []string
}

// chromium finds Debian's Chromium; the tests need it and fail without it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	t.Fatal("chromium is not installed: run make chromium")
	return ""
}

// newBrowser opens a tab at the page, 1440×900 like a laptop.
func newBrowser(t *testing.T, url string) *browser {
	t.Helper()
	b := newTab(t)
	b.run("open the page", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`[data-testid="composer"]`)))
	return b
}

// newTab opens a blank tab, 1440×900 like a laptop.
func newTab(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.WindowSize(1440, 900))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	// The console is read from the tab's start, so nothing it says is lost.
	console := chromedp.Console(tab)
	ctx, cancelTime := context.WithTimeout(tab, 90*time.Second)
	b := &browser{t: t, ctx: ctx}
	var reading sync.WaitGroup
	reading.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.report(m.String() + " (" + m.URL + ")")
			}
		}
	})
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
		reading.Wait()
	})
	return b
}

func (b *browser) report(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, s)
}

// run performs actions, failing the test with what it was doing.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text is the visible text of the first node sel matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}

// say types text in a composer and sends it.
func (b *browser) say(composer, text string) {
	b.t.Helper()
	sel := fmt.Sprintf(`[data-testid=%q]`, composer)
	b.run("type "+text, chromedp.SendKeys(chromedp.CSS(sel), text), chromedp.Click(chromedp.CSS(sel+` ~ button`)))
}

// waitFor waits until sel matches a node, within a while.
func (b *browser) waitFor(what, sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("body")))
		b.t.Fatalf("waiting for %s (%s): %v\n%s", what, sel, err, html)
	}
}

// waitText waits until the text of the first node sel matches contains want.
func (b *browser) waitText(what, sel, want string) {
	b.t.Helper()
	js := fmt.Sprintf(`(document.querySelector(%q)?.innerText ?? "").includes(%q)`, sel, want)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js)); err != nil {
		b.t.Fatalf("waiting for %s (%q in %s): %v\n%s", what, want, sel, err, b.text("body"))
	}
}

// noErrors fails the test for anything the console reported.
func (b *browser) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		b.t.Errorf("the browser reported %s", e)
	}
}

// thread is the selector of the bot's messages in the thread pane.
const thread = `[data-testid="thread-pane"] [data-testid="message"][data-bot="true"]`

func TestInTheBrowserAMentionIsAnsweredLiveAndAFollowUpInTheThread(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	hold := make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(hold) }) }) // before the world stops
	var calls atomic.Int32
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if calls.Add(1) == 1 {
			<-hold // long enough for the progress message to be seen
			return answerWithTable()
		}
		return llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("A follow-up answer: *still green*.")}}})
	})
	b := newBrowser(t, w.page.URL)
	b.say("composer", "@slackbot is the build green?")
	b.waitFor("the thread pane", `[data-testid="thread-pane"]:not([hidden])`)
	b.waitFor("the question in the channel", `[data-testid="messages"] [data-testid="message"][data-bot="false"]`)
	b.waitFor("the progress message with its Stop button", thread+` [data-action-id="slackbot_stop"]`)
	release.Do(func() { close(hold) })
	answer := thread + `:not(:has([data-action-id="slackbot_stop"]))`
	b.waitFor("the answer", answer)
	b.waitFor("a bold word", answer+` :is(b, strong)`)
	b.waitFor("a link", answer+` a[href="https://example.com/ci"]`)
	b.waitFor("a table", answer+` table`)
	text := b.text(answer + ` .pg-content`)
	for _, want := range []string{"green", "the CI run", "passed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer shows %q, without %q", text, want)
		}
	}
	b.waitFor("the session's operation tree", `[data-testid="session-panel"] [data-testid="session"] [data-kind="llm"]`)
	b.run("view the answer's JSON", chromedp.Click(chromedp.CSS(answer+` [data-view-json]`)),
		chromedp.WaitVisible(chromedp.CSS(answer+` [data-testid="message-json"]`)))
	link, err := chromedp.Run(b.ctx, chromedp.AttributeValue(chromedp.CSS(answer+` [data-testid="builder-link"]`), "href"))
	if builder := link.Value; err != nil || !strings.HasPrefix(builder, "https://app.slack.com/block-kit-builder/#%7B%22blocks%22") {
		t.Errorf("Block Kit Builder link %q (%v)", builder, err)
	}

	// The answer ends with the feedback buttons; a click reaches the bot,
	// which thanks the person in the thread, for their eyes only.
	thumbUp := answer + ` .bk-feedback-positive[data-action-id="slackbot_feedback"]`
	b.waitFor("the feedback buttons under the answer", thumbUp)
	b.run("press the thumb up", chromedp.Click(chromedp.CSS(thumbUp)))
	b.waitFor("the thanks, shown only to the person", `[data-testid="thread-messages"] [data-testid="message"]:has([data-testid="ephemeral"])`)
	b.waitText("the thanks", `[data-testid="thread-messages"]`, "Thanks for the feedback.")

	b.say("thread-composer", "and the follow-up?")
	b.waitFor("the follow-up answer", thread+`:not(:has([data-action-id="slackbot_stop"])) ~ [data-bot="true"]:has([data-action-id="slackbot_feedback"])`)
	all := b.text(`[data-testid="thread-messages"]`)
	if !strings.Contains(all, "still green") || !strings.Contains(all, "and the follow-up?") {
		t.Errorf("the thread lacks the follow-up and its answer:\n%s", all)
	}
	if os.Getenv("UPDATE_SCREENSHOT") != "" {
		// The viewport as a person sees it; a full-page capture resizes
		// the page's 100vh panes and draws them scrolled.
		b.run("close the JSON view", chromedp.Click(chromedp.CSS(answer+` [data-view-json]`)))
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "playground.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.noErrors()
}

func TestInTheBrowserStopEndsASlowSessionWithItsReport(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.Model.Respond(slow)
	b := newBrowser(t, w.page.URL)
	b.say("composer", "@slackbot take your time")
	stop := thread + ` [data-action-id="slackbot_stop"]`
	b.waitFor("the Stop button", stop)
	if _, err := w.Model.WaitContext(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	b.run("press Stop", chromedp.Click(chromedp.CSS(stop)))
	b.waitFor("the report in place of the progress", thread+`:not(:has([data-action-id="slackbot_stop"]))`)
	b.waitText("the stopped report", `[data-testid="thread-messages"]`, "Stopped by @you")
	b.noErrors()
}
