package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
)

func TestCheckShowsNoTokenOrPasswordOfAnMCPServersURL(t *testing.T) {
	t.Parallel()
	// A careless server: its refusal repeats the address it was asked
	// for and the credentials it got.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		http.Error(w, fmt.Sprintf("no MCP here: %s %s (you are %s, %s)", r.Method, r.URL.String(), user, pass), http.StatusInternalServerError)
	}))
	t.Cleanup(echo.Close)
	closed := strings.TrimPrefix(closedURL(t), "http://")
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	slack := newFakeSlack(t, true, true)
	mcp := "mcp_servers:\n"
	for name, host := range map[string]string{"echoing": strings.TrimPrefix(echo.URL, "http://"), "gone": closed} {
		for _, typ := range []string{"http", "sse"} {
			mcp += fmt.Sprintf("  %s_%s:\n    type: %s\n    url: \"http://user:pa55word@%s/mcp?token=SECRET-TOKEN-123&team=core\"\n", name, typ, typ, host)
		}
	}
	cfg := checkConfig(t, srv.URL(), testModelKey, slackSection(slack.URL, testBotToken, testAppToken), mcp)
	out, stderr, err := runCheckCLI(t, "--config", cfg, "--verbose", "--timeout", "20s")
	wantExit1(t, err, out, stderr)
	for _, s := range []string{"SECRET-TOKEN-123", "pa55word"} {
		if strings.Contains(out+stderr+err.Error(), s) {
			t.Errorf("%s reached the check's output, logs or error:\n%s\n%s", s, out, stderr)
		}
	}
	for _, c := range []string{"mcp echoing_http", "mcp echoing_sse", "mcp gone_http", "mcp gone_sse"} {
		if status, _ := row(t, out, c); status != "FAIL" {
			t.Errorf("%s: %s, want FAIL:\n%s", c, status, out)
		}
	}
	if !strings.Contains(stderr, "MCP server failed to start") {
		t.Errorf("the verbose log does not show the failure:\n%s", stderr)
	}
}
