package playground_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/slack/bottest"
)

func TestInTheBrowserAPictureAndALogAttachedReachTheModelAndShowInTheThread(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	sees := true
	pc := config.Provider{Type: "openai", BaseURL: model.URL() + "/v1/", APIKey: "sk-test-key",
		Models: map[string]config.Model{"m1": {Vision: &sees}}}
	provider, err := openai.New("fake", pc)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, bottest.WithConfig(func(c *config.Config) { c.LLM.Providers = map[string]config.Provider{"fake": pc} }),
		bottest.WithRunner(func(r *agent.Runner) { r.Providers["fake"] = provider }))
	// The model says what it received: how many pictures, and the log's
	// ERROR line.
	model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		var user llm.Message
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser {
				user = m
			}
		}
		errLine := "no log"
		for line := range strings.Lines(user.Content) {
			if strings.Contains(line, "ERROR") {
				errLine = strings.TrimSpace(line)
			}
		}
		return llmtest.SlackReport([]any{map[string]any{"blocks": []any{
			llmtest.Section(fmt.Sprintf("I see %d picture(s); the log says %s", len(user.Images), errLine)),
		}}})
	})

	dir := t.TempDir()
	img := image.NewGray(image.Rect(0, 0, 40, 30))
	var pic bytes.Buffer
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	picPath, logPath := filepath.Join(dir, "screen.png"), filepath.Join(dir, "build.log")
	if err := os.WriteFile(picPath, pic.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath, []byte("step 1 ok\nERROR disk full on runner-7\nstep 3 skipped\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, w.page.URL)
	b.run("attach a picture and a log", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="attach-input"]`), []string{picPath, logPath}))
	b.waitText("the attachments waiting in the composer", `[data-testid="attachments"]`, "build.log")
	b.say("composer", "@slackbot what went wrong?")
	b.waitText("the answer using both", `[data-testid="thread-messages"]`, "I see 1 picture(s); the log says ERROR disk full on runner-7")
	b.waitFor("the picture in the thread", `[data-testid="thread-messages"] img[data-testid="file-image"]`)
	b.waitFor("the log in the thread", `[data-testid="thread-messages"] a[data-testid="file"]`)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`document.querySelector('[data-testid="thread-messages"] img[data-testid="file-image"]').naturalWidth === 40`)); err != nil {
		t.Errorf("the picture did not load: %v", err)
	}
	if got := b.text(`[data-testid="attachments"]`); strings.TrimSpace(got) != "" {
		t.Errorf("the composer still holds %q after sending", got)
	}
	b.noErrors()
}
