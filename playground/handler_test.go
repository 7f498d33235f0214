package playground_test

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	bkhtml "github.com/slackbot/slackbot/blockkit/html"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

func TestThePageShowsTheWorkspaceAndTheComposer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, path := range []string{"/", "/?c=DU0YOU"} {
		body := get(t, w.page.URL+path)
		for _, want := range []string{`data-testid="composer"`, `data-testid="send"`, `data-channel="C0GENERAL"`,
			`data-channel="DU0YOU"`, `data-testid="thread-pane"`, `data-testid="thread-composer"`, `data-testid="session-panel"`,
			`/static/app.js`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %s", path, want)
			}
		}
	}
	for _, asset := range []string{"/static/app.js", "/static/app.css"} {
		if body := get(t, w.page.URL+asset); len(body) < 100 {
			t.Errorf("%s is empty", asset)
		}
	}
}

func TestTheEventStreamDeliversTheBotsAnswerAfterAMention(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("Hello from *the bot*")}}}))
	sent := post(t, w.page.URL+"/send", `{"channel":"C0GENERAL","text":"@slackbot hello"}`, http.StatusOK)
	var resp struct{ TS, Thread string }
	if err := json.Unmarshal([]byte(sent), &resp); err != nil || resp.Thread == "" {
		t.Fatalf("send answered %q", sent)
	}
	if got := w.Slack.Thread(playground.General, resp.TS); len(got) == 0 || !strings.Contains(got[0].Text, "<@"+w.Slack.BotUserID()+">") {
		t.Fatalf("the message did not reach the emulator as a mention: %+v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events := stream(ctx, t, w.page.URL+"/events?c=C0GENERAL&thread="+resp.Thread)
	for ev := range events {
		if ev.name == "fragment" && ev.data["pane"] == "thread" && strings.Contains(ev.data["html"], `data-bot="true"`) &&
			strings.Contains(ev.data["html"], "the bot") && !strings.Contains(ev.data["html"], "slackbot_stop") {
			return
		}
	}
	t.Fatal("the stream ended without the answer")
}

func TestAClickOnStopReachesTheEmulatorAndStopsTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.Model.Respond(slow)
	ts := w.Slack.Mention(playground.General, playground.User, "take your time")
	progress := w.progressOf(ts)
	post(t, w.page.URL+"/click", `{"channel":"C0GENERAL","ts":"`+progress.TS+`","action_id":"no_such_button"}`, http.StatusNotFound)
	post(t, w.page.URL+"/click", `{"channel":"C0GENERAL","ts":"`+progress.TS+`","action_id":"slackbot_stop"}`, http.StatusNoContent)
	w.stoppedIn(ts)
}

func TestAClickOnAFeedbackButtonIsRecordedAndThanked(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("an answer to rate")}}}))
	ts := w.Slack.Mention(playground.General, playground.User, "rate this")
	var answer emulator.Message
	w.Eventually("the answer with its feedback buttons", func() bool {
		for _, m := range w.Slack.Thread(playground.General, ts) {
			if m.BotID != "" && strings.Contains(string(m.Blocks), `"feedback_buttons"`) {
				answer = m
				return true
			}
		}
		return false
	})
	// The value the page's button carries, as the page's script sends it.
	value := attrAfter(t, string(bkhtml.Options{}.Message(answer.Blocks, answer.Text)), `bk-feedback-negative`, `data-value="`)
	post(t, w.page.URL+"/click", `{"channel":"C0GENERAL","ts":"`+answer.TS+`","action_id":"slackbot_feedback","value":"`+value+`"}`, http.StatusNoContent)
	w.Eventually("the thanks", func() bool {
		for _, e := range w.Slack.Ephemerals() {
			if e.User == playground.User && e.ThreadTS == ts && strings.Contains(e.Text, "Thanks for the feedback") {
				return true
			}
		}
		return false
	})
	_, id, _ := strings.Cut(value, ":")
	rec, found, err := w.Store.Session(context.Background(), id)
	if err != nil || !found || len(rec.Feedback) != 1 || rec.Feedback[0].User != playground.User || rec.Feedback[0].Value != "negative" {
		t.Fatalf("session %q holds %+v (found %v, %v)", id, rec.Feedback, found, err)
	}
}

func TestTheSlashCommandOpensTheThreadTheBotStarts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("an answer")}}}))
	sent := post(t, w.page.URL+"/send", `{"channel":"C0GENERAL","text":"/ask what is up"}`, http.StatusOK)
	var resp struct{ Thread string }
	_ = json.Unmarshal([]byte(sent), &resp)
	if resp.Thread == "" {
		t.Fatalf("no thread to open after the slash command: %s", sent)
	}
	root := w.Slack.Thread(playground.General, resp.Thread)
	if len(root) == 0 || root[0].BotID == "" || !strings.Contains(root[0].Text+string(root[0].Blocks), "what is up") {
		t.Fatalf("the thread is not the bot's post of the question: %+v", root)
	}
}

func TestSendRefusesUnknownChannelsAndEmptyText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	post(t, w.page.URL+"/send", `{"channel":"C0ELSEWHERE","text":"hi"}`, http.StatusBadRequest)
	post(t, w.page.URL+"/send", `{"channel":"C0GENERAL","text":"   "}`, http.StatusBadRequest)
	post(t, w.page.URL+"/send", `not json`, http.StatusBadRequest)
}

func TestTheSetupNoticeSaysWhatToSet(t *testing.T) {
	t.Parallel()
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pg, err := playground.New(playground.Options{Server: srv, Setup: []string{"set OPENAI_API_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "127.0.0.1:3000"
	pg.Handler().ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `data-testid="setup-notice"`) || !strings.Contains(rec.Body.String(), "set OPENAI_API_KEY") {
		t.Fatalf("no setup notice in the page:\n%s", rec.Body.String())
	}
}

func TestListeningBeyondLoopbackLogsAWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		warn bool
	}{{"127.0.0.1:0", false}, {"[::1]:0", false}, {"0.0.0.0:0", true}} {
		core, logs := observer.New(zap.WarnLevel)
		ln, err := playground.Listen(tc.addr, zap.New(core))
		if err != nil {
			if strings.HasPrefix(tc.addr, "[::1]") {
				continue // a machine without IPv6 loopback
			}
			t.Fatal(err)
		}
		_ = ln.Close()
		if got := logs.Len() > 0; got != tc.warn {
			t.Errorf("Listen(%s): warned %v, want %v", tc.addr, got, tc.warn)
		}
	}
}

// ---- helpers ----

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	return string(b)
}

// post sends body as the page's script does: JSON, with the page's token.
func post(t *testing.T, url, body string, want int) string {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Playground-Token", tokenOf(t, url))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("POST %s %s: %s %s, want %d", url, body, res.Status, b, want)
	}
	return string(b)
}

// sse is one server-sent event with its JSON data.
type sse struct {
	name string
	data map[string]string
}

// tokenOf is the token the page at any address of the playground carries,
// as the page's script reads it.
func tokenOf(t *testing.T, address string) string {
	t.Helper()
	u, err := url.Parse(address)
	if err != nil {
		t.Fatal(err)
	}
	return attrAfter(t, get(t, u.Scheme+"://"+u.Host+"/"), `name="playground-token"`, `content="`)
}

// stream reads the events of address until ctx ends, with the page's
// token, as the page's script opens them.
func stream(ctx context.Context, t *testing.T, address string) <-chan sse {
	t.Helper()
	u, err := url.Parse(address)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("token", tokenOf(t, address))
	u.RawQuery = q.Encode()
	req, _ := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	out := make(chan sse)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "" && ev.name != "":
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
				ev = sse{}
			}
		}
	}()
	return out
}

func TestARefusalShowsAsAMessageOnlyThePersonSees(t *testing.T) {
	t.Parallel()
	w := newWorld(t, bottest.WithConfig(func(c *config.Config) { c.Slack.Allow.Users = []string{"U0SOMEONEELSE"} }))
	post(t, w.page.URL+"/send", `{"channel":"C0GENERAL","text":"@slackbot hello"}`, http.StatusOK)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL") {
		if ev.name == "fragment" && strings.Contains(ev.data["html"], "Only visible to you") &&
			strings.Contains(ev.data["html"], html.EscapeString(config.DefaultRejectionMessage)) {
			return
		}
	}
	t.Fatal("the refusal never showed")
}

// attrAfter is the value of the attribute (given as `name="`) that follows
// marker in page, unescaped.
func attrAfter(t *testing.T, page, marker, attr string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, marker)
	if !ok {
		t.Fatalf("no %s in %s", marker, page)
	}
	_, rest, ok = strings.Cut(rest, attr)
	if !ok {
		t.Fatalf("no %s after %s in %s", attr, marker, page)
	}
	v, _, _ := strings.Cut(rest, `"`)
	return html.UnescapeString(v)
}
