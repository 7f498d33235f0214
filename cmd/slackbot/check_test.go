package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
)

// Secrets the check tests configure; none may reach the terminal.
const (
	testBotToken = "xoxb-1111-SECRETBOT-aaaa"
	testAppToken = "xapp-1-A111-SECRETAPP-bbbb"
	testModelKey = "sk-cli-SECRET999"
)

// fakeSlack is a peer of Slack's Web API for the two methods the check
// calls, answering as Slack does: HTTP 200 with {"ok":false,"error":…}
// when a token is refused.
type fakeSlack struct {
	*httptest.Server
	botOK, appOK bool

	mu    sync.Mutex
	calls []string // "method token"
}

func newFakeSlack(t *testing.T, botOK, appOK bool) *fakeSlack {
	t.Helper()
	f := &fakeSlack{botOK: botOK, appOK: appOK}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSlack) serve(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = r.FormValue("token")
	}
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	f.mu.Lock()
	f.calls = append(f.calls, method+" "+token)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case method == "auth.test" && f.botOK && token == testBotToken:
		fmt.Fprint(w, `{"ok":true,"url":"https://acme.slack.com/","team":"Acme","user":"slackbot","team_id":"T0001","user_id":"U0BOT","bot_id":"B0001"}`)
	case method == "apps.connections.open" && f.appOK && token == testAppToken:
		fmt.Fprint(w, `{"ok":true,"url":"wss://wss-primary.slack.com/link/?ticket=t-1&app_id=A111"}`)
	case method == "auth.test" || method == "apps.connections.open":
		fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
	default:
		fmt.Fprint(w, `{"ok":false,"error":"unknown_method"}`)
	}
}

func (f *fakeSlack) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// slackSection is the configuration's slack section for a Slack at url.
func slackSection(url, bot, app string) string {
	return fmt.Sprintf("slack:\n  api_url: %s/api/\n  bot_token: %q\n  app_token: %q\n", url, bot, app)
}

// checkConfig writes a configuration whose only provider, fake, is at
// modelURL with api_key key, and one agent using fake/m1.
func checkConfig(t *testing.T, modelURL, key string, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := "llm:\n  providers:\n    fake:\n      type: openai\n      base_url: " + modelURL + "/v1/\n      api_key: " + fmt.Sprintf("%q", key) + "\n" +
		"agents_dir: agents\n" + strings.Join(extra, "")
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slackbot.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "helper.md"), []byte("---\nmodels: [fake/m1]\n---\nYou answer.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "slackbot.yaml")
}

// runCheckCLI runs `slackbot check` and fails the test if a configured
// secret reached stdout or stderr.
func runCheckCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"check"}, args...), strings.NewReader(""), &out, &errb)
	for _, secret := range []string{testBotToken, testAppToken, testModelKey, "SECRETBOT", "SECRETAPP", "SECRET999"} {
		if strings.Contains(out.String()+errb.String(), secret) {
			t.Errorf("%s leaked to the terminal:\n%s\n%s", secret, out.String(), errb.String())
		}
	}
	return out.String(), errb.String(), err
}

// row returns the status and detail of component's row in the table.
func row(t *testing.T, table, component string) (status, detail string) {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if rest, ok := strings.CutPrefix(l, component+" "); ok {
			status, detail, _ = strings.Cut(strings.TrimSpace(rest), " ")
			return status, strings.TrimSpace(detail)
		}
	}
	t.Fatalf("no row for %s:\n%s", component, table)
	return "", ""
}

func wantExit1(t *testing.T, err error, stdout, stderr string) {
	t.Helper()
	var ec exitCode
	if !errors.As(err, &ec) || ec != 1 {
		t.Fatalf("err = %v, want exit status 1\n%s\n%s", err, stdout, stderr)
	}
}

// closedURL is the address of a server that is gone: connections to it
// are refused.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	_ = l.Close()
	return url
}

func TestCheckPassesWhenEverythingAnswers(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	slack := newFakeSlack(t, true, true)
	cfg := checkConfig(t, srv.URL(), testModelKey, slackSection(slack.URL, testBotToken, testAppToken), everything(t))
	out, stderr, err := runCheckCLI(t, "--config", cfg)
	if err != nil {
		t.Fatalf("check failed: %v\n%s\n%s", err, out, stderr)
	}
	for component, want := range map[string]string{
		"config":          "1 agents",
		"slack bot token": "team Acme (T0001), bot user @slackbot (U0BOT)",
		"slack app token": "Socket Mode",
		"llm fake":        "fake/m1 answered in ",
		"mcp everything":  "2 tools",
	} {
		if status, detail := row(t, out, component); status != "ok" || !strings.Contains(detail, want) {
			t.Errorf("%s: %s %q, want ok with %q", component, status, detail, want)
		}
	}
	if !strings.Contains(stderr, "all checks passed") {
		t.Errorf("stderr = %q", stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m1" {
		t.Fatalf("model requests: %+v", reqs)
	}
	calls := slack.Calls()
	if len(calls) != 2 {
		t.Fatalf("Slack calls: %q", calls)
	}
	for _, want := range []string{"auth.test " + testBotToken, "apps.connections.open " + testAppToken} {
		found := false
		for _, c := range calls {
			found = found || c == want
		}
		if !found {
			t.Errorf("Slack was not called as %q (only with the token each method wants): %q", strings.Fields(want)[0], calls)
		}
	}
}

func TestCheckFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		config    func(t *testing.T) string
		component string
		want      []string
	}{
		{"on a bot token Slack refuses", func(t *testing.T) string {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			return checkConfig(t, srv.URL(), testModelKey, slackSection(newFakeSlack(t, false, true).URL, testBotToken, testAppToken))
		}, "slack bot token", []string{"auth.test: invalid_auth"}},
		{"on an app token Slack refuses", func(t *testing.T) string {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			return checkConfig(t, srv.URL(), testModelKey, slackSection(newFakeSlack(t, true, false).URL, testBotToken, testAppToken))
		}, "slack app token", []string{"apps.connections.open: invalid_auth"}},
		{"on a missing bot token", func(t *testing.T) string {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			return checkConfig(t, srv.URL(), testModelKey, slackSection(newFakeSlack(t, true, true).URL, "", testAppToken))
		}, "slack bot token", []string{"slack.bot_token is not set"}},
		{"on an app token that is not one", func(t *testing.T) string {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			return checkConfig(t, srv.URL(), testModelKey, slackSection(newFakeSlack(t, true, true).URL, testBotToken, "xoxb-2222-SECRETAPP-cccc"))
		}, "slack app token", []string{"xapp-"}},
		{"on a Slack that cannot be reached", func(t *testing.T) string {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			return checkConfig(t, srv.URL(), testModelKey, slackSection(closedURL(t), testBotToken, testAppToken))
		}, "slack bot token", []string{"auth.test: ", "connection refused"}},
		{"on an unreachable model", func(t *testing.T) string {
			return checkConfig(t, closedURL(t), testModelKey)
		}, "llm fake", []string{"fake/m1", "network"}},
		{"on a model that refuses the key, echoing it", func(t *testing.T) string {
			srv := llmtest.NewServer(t, llmtest.Reply{Status: 401, ErrorType: "invalid_api_key",
				ErrorMessage: "Incorrect API key provided: " + testModelKey + "."})
			return checkConfig(t, srv.URL(), testModelKey)
		}, "llm fake", []string{"fake/m1", "401", "[redacted]"}},
		{"on an empty key for a hosted API", func(t *testing.T) string {
			cfg := checkConfig(t, closedURL(t), "")
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// No base_url: the provider's own API, which always wants a key.
			return rewrite(t, cfg, strings.Replace(string(b), "      base_url: ", "      #", 1))
		}, "llm fake", []string{"api_key is empty"}},
		{"on an MCP server whose command does not exist", func(t *testing.T) string {
			srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
			return checkConfig(t, srv.URL(), testModelKey,
				"mcp_servers:\n  ghost:\n    command: /nonexistent/slackbot-no-such-mcp-server\n    env: {API_TOKEN: \"xoxp-SECRETENV-9\"}\n")
		}, "mcp ghost", []string{"did not start", "slackbot-no-such-mcp-server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, stderr, err := runCheckCLI(t, "--config", tt.config(t))
			wantExit1(t, err, out, stderr)
			status, detail := row(t, out, tt.component)
			if status != "FAIL" {
				t.Errorf("%s: %s %q, want FAIL", tt.component, status, detail)
			}
			for _, w := range tt.want {
				if !strings.Contains(detail, w) {
					t.Errorf("%s: %q lacks %q", tt.component, detail, w)
				}
			}
			if strings.Contains(out+stderr, "SECRETENV") {
				t.Errorf("an MCP server's env leaked:\n%s", out)
			}
			if !strings.Contains(stderr, "checks failed") {
				t.Errorf("stderr = %q", stderr)
			}
		})
	}
}

func rewrite(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckSkipsWhatIsNotConfigured(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	cfg := checkConfig(t, srv.URL(), testModelKey,
		"mcp_servers:\n  later:\n    command: /nonexistent/never-started\n    enabled: false\n")
	out, stderr, err := runCheckCLI(t, "--config", cfg)
	if err != nil {
		t.Fatalf("check failed: %v\n%s\n%s", err, out, stderr)
	}
	if status, detail := row(t, out, "slack"); status != "skipped" || !strings.Contains(detail, "no Slack tokens") || !strings.Contains(detail, "make run") {
		t.Errorf("slack: %s %q", status, detail)
	}
	if status, detail := row(t, out, "mcp later"); status != "skipped" || detail != "enabled: false" {
		t.Errorf("mcp later: %s %q", status, detail)
	}
}

func TestCheckWarnsOfAModelServerThatTakesNoKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	out, stderr, err := runCheckCLI(t, "--config", checkConfig(t, srv.URL(), ""))
	if err != nil {
		t.Fatalf("a warning failed the check: %v\n%s\n%s", err, out, stderr)
	}
	if status, detail := row(t, out, "llm fake"); status != "warn" || !strings.Contains(detail, "api_key empty") {
		t.Errorf("llm fake: %s %q", status, detail)
	}
}

func TestCheckWithoutAConfigurationSaysWhereToStart(t *testing.T) {
	t.Parallel()
	out, stderr, err := runCheckCLI(t, "--config", filepath.Join(t.TempDir(), "slackbot.yaml"))
	wantExit1(t, err, out, stderr)
	if status, detail := row(t, out, "config"); status != "FAIL" || !strings.Contains(detail, "slackbot.example.yaml") {
		t.Errorf("config: %s %q", status, detail)
	}
}

func TestCheckModelIsTheOneAgentsUse(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"}, llmtest.Reply{Text: "ok"}, llmtest.Reply{Text: "ok"})
	cfg := checkConfig(t, srv.URL(), testModelKey)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// spare: no agent uses it, so its first listed model is asked;
	// idle: no agent uses it and it lists none; claude speaks the other
	// wire format.
	second := "    claude:\n      type: anthropic\n      base_url: " + srv.URL() + "\n      api_key: sk-ant-SECRET999\n      models: {c1: {}}\n" +
		"    spare:\n      type: openai\n      base_url: " + srv.URL() + "/v1/\n      api_key: sk-spare-SECRET999\n      models:\n        zeta: {}\n        alpha: {}\n    idle:\n      type: openai\n      base_url: " + srv.URL() + "/v1/\n"
	rewrite(t, cfg, strings.Replace(string(b), "agents_dir:", second+"agents_dir:", 1))
	out, stderr, err := runCheckCLI(t, "--config", cfg)
	if err != nil {
		t.Fatalf("check failed: %v\n%s\n%s", err, out, stderr)
	}
	if status, detail := row(t, out, "llm spare"); status != "ok" || !strings.HasPrefix(detail, "spare/alpha answered") {
		t.Errorf("llm spare: %s %q", status, detail)
	}
	if status, detail := row(t, out, "llm claude"); status != "ok" || !strings.HasPrefix(detail, "claude/c1 answered") {
		t.Errorf("llm claude: %s %q", status, detail)
	}
	if status, detail := row(t, out, "llm idle"); status != "skipped" || !strings.Contains(detail, "no agent uses") {
		t.Errorf("llm idle: %s %q", status, detail)
	}
	models := map[string]bool{}
	for _, r := range srv.Requests() {
		models[r.Model] = true
	}
	if !models["m1"] || !models["alpha"] || !models["c1"] || len(models) != 3 {
		t.Errorf("models asked: %v", models)
	}
}

func TestCheckUsageErrors(t *testing.T) {
	t.Parallel()
	if _, stderr, err := runCheckCLI(t, "stray"); !errors.Is(err, errUsage) || !strings.Contains(stderr, "usage: slackbot check") {
		t.Errorf("err = %v, stderr = %q", err, stderr)
	}
}

func TestCheckLeavesNoMCPServerRunning(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "ok"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	// A server that starts and never answers the handshake. "$$$$" is the
	// shell's $$ once the configuration has read "$$" as "$".
	mute := fmt.Sprintf("mcp_servers:\n  mute:\n    command: /bin/sh\n    args: [-c, \"echo $$$$ > %s; exec sleep 300\"]\n", pidFile)
	out, stderr, err := runCheckCLI(t, "--config", checkConfig(t, srv.URL(), testModelKey, mute), "--timeout", "1s")
	wantExit1(t, err, out, stderr)
	if status, detail := row(t, out, "mcp mute"); status != "FAIL" || !strings.Contains(detail, "not ready after 1s") {
		t.Errorf("mcp mute: %s %q", status, detail)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the server never started: %v", err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatal(err)
	}
	// The registry reaps what it stops, so a pid still there is a live
	// process, not a zombie.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the MCP server (pid %d) is still running after check returned: %v", pid, err)
	}
}
