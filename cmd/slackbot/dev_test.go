package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// TestDevServesThePageAndTheBotAnswersThroughIt runs `slackbot dev` with a
// configuration that has no Slack tokens: it prints the page's address, a
// mention posted through the page is answered by the bot over the
// emulator, and the command returns when its context ends.
func TestDevServesThePageAndTheBotAnswersThroughIt(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t, llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"slack-block-kit","report_content":"Hello from *dev*."}`))
	cfg := setup(t, model, "markdown", "slack:\n  agent: helper\n  progress_interval: 20ms\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev", "--config", cfg, "--listen", "127.0.0.1:0"}, strings.NewReader(""), outW, lockedWriter(&stderr))
		_ = outW.Close()
	}()
	line := make([]byte, 200)
	n, err := outR.Read(line)
	if err != nil {
		t.Fatalf("no address printed: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(string(line[:n]))
	if url == "" {
		t.Fatalf("printed %q, no loopback address", line[:n])
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), `data-testid="composer"`) || strings.Contains(string(page), "setup-notice") {
		t.Fatalf("the page is not the playground, or asks for a key it has:\n%s", page)
	}
	// The token lives in the page alone: not in the address printed, not
	// in a log line.
	token := regexp.MustCompile(`name="playground-token" content="([^"]+)"`).FindStringSubmatch(string(page))
	if token == nil {
		t.Fatalf("the page carries no token:\n%s", page)
	}
	req, _ := http.NewRequest("POST", url+"send", strings.NewReader(`{"channel":"C0GENERAL","text":"@slackbot hi"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Playground-Token", token[1])
	res, err = http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("send: %v %v", err, res)
	}
	var sent struct{ Thread string }
	_ = json.NewDecoder(res.Body).Decode(&sent)
	res.Body.Close()
	if _, err := model.WaitContext(ctxTimeout(t, 20*time.Second), 1); err != nil {
		t.Fatalf("the bot never asked the model: %v\n%s", err, stderr.String())
	}
	// The configuration leaves slack.display at its default, auto: the
	// session shows as Slack shows it, a streamed message.
	if !answeredAsStream(t, url+"events?c=C0GENERAL&thread="+sent.Thread+"&token="+token[1]) {
		t.Errorf("the page never drew the answer as a streamed message\n%s", stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("dev did not stop")
	}
	if strings.Contains(string(line[:n]), token[1]) || strings.Contains(stderr.String(), token[1]) {
		t.Errorf("the page's token was printed or logged:\n%s\n%s", line[:n], stderr.String())
	}
}

// answeredAsStream reads the page's event stream at address until it
// draws a streamed message that has ended with the answer.
func answeredAsStream(t *testing.T, address string) bool {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxTimeout(t, 20*time.Second), "GET", address, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `data-testid=\"stream\"`) &&
			strings.Contains(line, `data-open=\"false\"`) && strings.Contains(line, "Hello from") {
			return true
		}
	}
	return false
}

func TestDevSaysWhatToSetWhenNoModelHasAKey(t *testing.T) {
	t.Parallel()
	none := &config.Config{LLM: config.LLM{Providers: map[string]config.Provider{
		"openai": {Type: "openai"}, "anthropic": {Type: "anthropic"},
	}}}
	got := strings.Join(modelSetup(none), "\n")
	for _, want := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "base_url: http://localhost:11434/v1"} {
		if !strings.Contains(got, want) {
			t.Errorf("the setup notice lacks %s:\n%s", want, got)
		}
	}
	for name, p := range map[string]config.Provider{
		"a key":           {Type: "openai", APIKey: "sk-x"},
		"a local server":  {Type: "openai", BaseURL: "http://localhost:11434/v1"},
		"anthropic's key": {Type: "anthropic", APIKey: "sk-ant"},
	} {
		cfg := &config.Config{LLM: config.LLM{Providers: map[string]config.Provider{"openai": {Type: "openai"}, "x": p}}}
		if got := modelSetup(cfg); got != nil {
			t.Errorf("with %s the page still asks: %v", name, got)
		}
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
