package playground_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
)

func TestAnotherPageCannotAttachOrReadFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	body := `{"name":"x.txt","type":"text/plain","data":"` + base64.StdEncoding.EncodeToString([]byte("planted")) + `"}`
	for _, a := range postAttacks {
		h := fromThePage(t, w)
		a.change(h)
		if status, answer := do(t, "POST", w.page.URL+"/attach", body, h); status != a.status {
			t.Errorf("%s: %d %q, want %d", a.name, status, answer, a.status)
		}
	}
	noToken := fromThePage(t, w)
	delete(noToken, "X-Playground-Token")
	if status, _ := do(t, "POST", w.page.URL+"/attach", body, noToken); status != http.StatusForbidden {
		t.Errorf("an attach without the page's token: %d, want 403", status)
	}

	// The page's own file, then read without the token.
	status, answer := do(t, "POST", w.page.URL+"/attach", body, fromThePage(t, w))
	var got struct{ ID string }
	if status != http.StatusOK || json.Unmarshal([]byte(answer), &got) != nil || got.ID == "" {
		t.Fatalf("the page's own attach: %d %q", status, answer)
	}
	read := fromThePage(t, w)
	delete(read, "X-Playground-Token")
	read["Query"] = "id=" + got.ID
	if status, answer := do(t, "GET", w.page.URL+"/file", "", read); status != http.StatusForbidden || strings.Contains(answer, "planted") {
		t.Errorf("a file read without the token: %d %q, want 403", status, answer)
	}
	read["Query"] = "id=" + got.ID + "&token=" + tokenOf(t, w.page.URL)
	if status, answer := do(t, "GET", w.page.URL+"/file", "", read); status != http.StatusOK || answer != "planted" {
		t.Errorf("the page's own read: %d %q", status, answer)
	}
	w.untouched("attaching a file")
}

func TestAnAttachedFileIsShownInertWhateverItsNameAndContent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	page := "<html><script>alert(1)</script></html>"
	name := `"><img src=x onerror=alert(1)>.html`
	body, _ := json.Marshal(map[string]any{"name": name, "type": "image/png", "data": []byte(page)})
	status, answer := do(t, "POST", w.page.URL+"/attach", string(body), fromThePage(t, w))
	var got struct{ ID string }
	if status != http.StatusOK || json.Unmarshal([]byte(answer), &got) != nil {
		t.Fatalf("attach: %d %q", status, answer)
	}
	// Served as a download, never as a page or a picture, whatever type it
	// claims.
	res, err := http.Get(w.page.URL + "/file?id=" + got.ID + "&token=" + tokenOf(t, w.page.URL))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/octet-stream" || res.Header.Get("Content-Disposition") != "attachment" ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("the file is served as %q, %q, CSP %q", ct, res.Header.Get("Content-Disposition"), res.Header.Get("Content-Security-Policy"))
	}
	// Shared in a message, its name is text in the thread.
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("ok")}}}))
	post(t, w.page.URL+"/send", `{"channel":"C0GENERAL","text":"@slackbot look","files":["`+got.ID+`"]}`, http.StatusOK)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	drawn := ""
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL") {
		if ev.name == "fragment" && strings.Contains(ev.data["html"], `data-testid="file"`) {
			drawn = ev.data["html"]
			break
		}
	}
	if drawn == "" {
		t.Fatal("the stream ended without the message and its file")
	}
	if strings.Contains(drawn, "<img src=x") || strings.Contains(drawn, `"><img`) || strings.Contains(drawn, "<script") {
		t.Errorf("the file's name or content is live in the page: %s", drawn)
	}
	if !strings.Contains(drawn, "&lt;img src=x onerror=alert(1)&gt;.html") {
		t.Errorf("the file's name is not shown as text: %s", drawn)
	}
	if status, _ := do(t, "POST", w.page.URL+"/send", `{"channel":"C0GENERAL","text":"x","files":["F999"]}`, fromThePage(t, w)); status != http.StatusBadRequest {
		t.Errorf("a message with a file never attached here: %d, want 400", status)
	}
}

func TestTheBotsAnswerGoneAsAFileIsShownInTheThreadLikeAnyFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, bottest.WithConfig(func(c *config.Config) { c.Slack.MaxAnswerMessages = config.DefaultMaxAnswerMessages }))
	var answer strings.Builder
	for i := range 20 {
		fmt.Fprintf(&answer, "¶%d %s\n\n", i, strings.Repeat("A paragraph of the answer that goes on for a while. ", 40))
	}
	w.Model.Push(llmtest.TextReport(answer.String()))
	var sent struct{ Thread string }
	if err := json.Unmarshal([]byte(post(t, w.page.URL+"/send", `{"channel":"C0GENERAL","text":"@slackbot summarise the deployment"}`, http.StatusOK)), &sent); err != nil || sent.Thread == "" {
		t.Fatalf("send: %+v, %v", sent, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	drawn := ""
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL&thread="+sent.Thread) {
		if ev.name == "fragment" && strings.Contains(ev.data["html"], `data-testid="file"`) && strings.Contains(ev.data["html"], "answer.md") {
			drawn = ev.data["html"]
			break
		}
	}
	if drawn == "" {
		t.Fatal("the stream ended without the bot's message and its answer.md")
	}
	link := regexp.MustCompile(`href="(/file\?id=F[A-Z0-9]+)&amp;token=`).FindStringSubmatch(drawn)
	if link == nil {
		t.Fatalf("answer.md is drawn without a link to its bytes: %s", drawn)
	}
	res, err := http.Get(w.page.URL + link[1] + "&token=" + tokenOf(t, w.page.URL))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "¶19 ") || res.Header.Get("Content-Disposition") != "attachment" {
		t.Fatalf("answer.md from the page: %d %s, %d bytes; want the whole answer as a download", res.StatusCode, res.Header.Get("Content-Disposition"), len(body))
	}
}
