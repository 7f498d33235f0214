package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// setup writes a configuration whose only provider is the fake server, and
// one agent file, and returns the configuration's path. extra is appended
// to the configuration file.
func setup(t *testing.T, srv *llmtest.Server, format string, extra ...string) string {
	t.Helper()
	return setupAgent(t, srv, "---\ndescription: Test agent\nmodels: [fake/m1]\nmax_turns: 3\noutput:\n  format: "+format+"\n---\nYou answer questions.\n", extra...)
}

func setupAgent(t *testing.T, srv *llmtest.Server, agent string, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := "llm:\n  providers:\n    fake:\n      type: openai\n      base_url: " + srv.URL() + "/v1/\n      api_key: sk-cli-SECRET999\n" +
		"agents_dir: agents\ndefaults:\n  max_retries: 0\n" + strings.Join(extra, "")
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slackbot.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "helper.md"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "slackbot.yaml")
}

func runCLI(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

func TestAskPrintsTheFinalReport(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"markdown","report_content":"Paris is the capital."}`))
	cfg := setup(t, srv, "markdown")
	out, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "Capital of France?")
	if err != nil {
		t.Fatalf("ask failed: %v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != "Paris is the capital." {
		t.Fatalf("stdout = %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m1" || reqs[0].Messages[len(reqs[0].Messages)-1].Content != "Capital of France?" {
		t.Fatalf("unexpected requests: %+v", reqs)
	}
}

func TestAskInSlackFormatPrintsRepairedBlockKit(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"slack-block-kit","messages":[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"**Paris** is the capital."}}]}]}`))
	cfg := setup(t, srv, "markdown")
	out, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "--format", "slack-block-kit", "--quiet", "Capital?")
	if err != nil {
		t.Fatalf("ask failed: %v\n%s", err, stderr)
	}
	var msgs []struct {
		Text   string            `json:"text"`
		Blocks []json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(out), &msgs); err != nil {
		t.Fatalf("stdout is not a JSON array of messages: %v\n%s", err, out)
	}
	if len(msgs) != 1 || len(msgs[0].Blocks) != 1 || !strings.Contains(string(msgs[0].Blocks[0]), "*Paris* is the capital.") {
		t.Fatalf("Markdown bold was not repaired to mrkdwn: %s", out)
	}
	if msgs[0].Text == "" {
		t.Fatal("message has no notification text")
	}
	if got := srv.Requests()[0].ToolNames; len(got) == 0 || got[0] != "agent__final_report" {
		t.Fatalf("tools offered: %v", got)
	}
}

func TestAskWithAnUnreachableModelExitsWithTheReason(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 401, ErrorType: "invalid_api_key"})
	cfg := setup(t, srv, "markdown")
	out, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "Hello?")
	var ec exitCode
	if !errors.As(err, &ec) || ec != 1 {
		t.Fatalf("err = %v, want exit status 1", err)
	}
	if !strings.Contains(out, "rejected the configured credentials") {
		t.Fatalf("stdout does not say why: %q", out)
	}
	// The person reading the answer gets words; the technical error is for
	// whoever runs the bot, in the log (warn level).
	if strings.Contains(out, "HTTP 401") || strings.Contains(out, "127.0.0.1") {
		t.Fatalf("stdout shows the raw error: %q", out)
	}
	if !strings.Contains(stderr, "HTTP 401") || !strings.Contains(stderr, `"level":"warn"`) {
		t.Fatalf("the log does not carry the error at warn level: %q", stderr)
	}
	if strings.Contains(out+stderr, "SECRET999") {
		t.Fatal("the API key leaked to the terminal")
	}
}

func TestCommandLineMistakesAreUsageErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cfg := setup(t, srv, "markdown")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "Usage:"},
		{"an unknown command", []string{"fly"}, `unknown command "fly"`},
		{"ask without an agent", []string{"ask", "--config", cfg, "question"}, "usage: slackbot ask"},
		{"ask without a question", []string{"ask", "--config", cfg, "--agent", "helper"}, "usage: slackbot ask"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runCLI(tc.args...)
			if !errors.Is(err, errUsage) || !strings.Contains(stderr, tc.want) {
				t.Fatalf("err = %v, stderr = %q", err, stderr)
			}
		})
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a usage error reached the model")
	}
}

func TestAskNamesWhatIsWrong(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cfg := setup(t, srv, "markdown")
	if _, _, err := runCLI("ask", "--config", cfg, "--agent", "helper", "--format", "html", "q"); err == nil || !strings.Contains(err.Error(), "slack-block-kit") {
		t.Fatalf("a bad format should list the formats: %v", err)
	}
	if _, _, err := runCLI("ask", "--config", cfg, "--agent", "nobody", "q"); err == nil || !strings.Contains(err.Error(), `no agent named "nobody"`) || !strings.Contains(err.Error(), "helper") {
		t.Fatalf("an unknown agent should list the agents: %v", err)
	}
	if _, _, err := runCLI("ask", "--config", filepath.Join(t.TempDir(), "missing.yaml"), "--agent", "helper", "q"); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("a missing config should be named: %v", err)
	}
}

func TestAgentsListsAndValidates(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cfg := setup(t, srv, "json")
	out, _, err := runCLI("agents", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "helper") || !strings.Contains(out, "json") || !strings.Contains(out, "fake/m1") || !strings.Contains(out, "1 agents, all valid") {
		t.Fatalf("stdout = %q", out)
	}
}

func TestEveryCommandThatRunsSessionsHonoursLogLevel(t *testing.T) {
	t.Parallel()
	report := llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"markdown","report_content":"Yes."}`)
	for _, tt := range []struct {
		level      string
		want, none []string
	}{
		{"debug", []string{`"msg":"llm_call"`, `"msg":"session_done"`}, nil},
		{"info", []string{`"msg":"session_done"`}, []string{`"msg":"llm_call"`}},
		{"warn", nil, []string{`"msg":"session_done"`, `"msg":"llm_call"`}},
	} {
		for _, cmd := range []string{"ask", "chat"} {
			t.Run(cmd+" at "+tt.level, func(t *testing.T) {
				t.Parallel()
				srv := llmtest.NewServer(t, report)
				cfg := setup(t, srv, "markdown", "log:\n  level: "+tt.level+"\n")
				args := []string{"ask", "--config", cfg, "--agent", "helper", "--quiet", "Well?"}
				if cmd == "chat" {
					args = []string{"chat", "--config", cfg, "--agent", "helper"}
				}
				var out, errb bytes.Buffer
				if err := run(context.Background(), args, strings.NewReader("Well?\n"), &out, &errb); err != nil {
					t.Fatalf("%v\n%s", err, errb.String())
				}
				for _, w := range tt.want {
					if !strings.Contains(errb.String(), w) {
						t.Errorf("stderr lacks %s at level %s: %s", w, tt.level, errb.String())
					}
				}
				for _, n := range tt.none {
					if strings.Contains(errb.String(), n) {
						t.Errorf("stderr has %s at level %s: %s", n, tt.level, errb.String())
					}
				}
			})
		}
	}
}

func TestChatForgetsTheOldestExchangesRatherThanOverflowTheWindow(t *testing.T) {
	t.Parallel()
	// A window of 3000 tokens: the history may take ~1,400 of them, and each
	// question here is ~500 tokens, so the fourth session sees only the
	// latest exchanges, never more than fit.
	agent := "---\nmodels: [fake/m1]\nmax_turns: 3\ncontext_window: 3000\nmax_output_tokens: 200\n---\nYou answer.\n"
	var replies []llmtest.Reply
	for range 4 {
		replies = append(replies, llmtest.Reply{Text: "Noted."})
	}
	srv := llmtest.NewServer(t, replies...)
	cfg := setupAgent(t, srv, agent)
	var in strings.Builder
	for i := range 4 {
		fmt.Fprintf(&in, "question %d %s\n", i+1, strings.Repeat("lorem ipsum dolor sit amet ", 80))
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"chat", "--config", cfg, "--agent", "helper"}, strings.NewReader(in.String()), &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if got := strings.Count(out.String(), "Noted."); got != 4 {
		t.Fatalf("answers = %d, want 4 (stdout %q, stderr %s)", got, out.String(), errb.String())
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	if len(last) >= 7 || last[0].Role != "user" || !strings.HasPrefix(last[len(last)-1].Content, "question 4") {
		t.Errorf("the last session was sent %d messages starting with %s; want fewer than all 7, whole exchanges, ending with question 4", len(last), last[0].Role)
	}
	if !strings.Contains(errb.String(), "oldest messages are forgotten") {
		t.Errorf("the user is not told that history was dropped: %s", errb.String())
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, _, err := runCLI("version")
	if err != nil || out != "slackbot dev\n" {
		t.Fatalf("out = %q, err = %v", out, err)
	}
}

func TestTheExampleConfigurationLoads(t *testing.T) {
	t.Parallel()
	out, _, err := runCLI("agents", "--config", "../../slackbot.example.yaml")
	if err != nil || !strings.Contains(out, "assistant") {
		t.Fatalf("the shipped example does not load: %v\n%s", err, out)
	}
}

func TestChatKeepsTheConversation(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Text: "Hello, Ada."},
		llmtest.Reply{Text: "You are Ada."},
	)
	cfg := setup(t, srv, "markdown")
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"chat", "--config", cfg, "--agent", "helper"}, strings.NewReader("I am Ada.\nWho am I?\n"), &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if out.String() != "Hello, Ada.\nYou are Ada.\n" {
		t.Fatalf("stdout = %q", out.String())
	}
	second := srv.Requests()[1].Messages
	var texts []string
	for _, m := range second { // the system prompt is in Recorded.System
		texts = append(texts, string(m.Role)+":"+m.Content)
	}
	if strings.Join(texts, "|") != "user:I am Ada.|assistant:Hello, Ada.|user:Who am I?" {
		t.Fatalf("the second session did not see the first: %v", texts)
	}
}

func TestAskShowsTheProgressOfSubAgents(t *testing.T) {
	t.Parallel()
	call := llmtest.Call
	srv := llmtest.NewServer(t,
		call("agent__researcher", `{"prompt":"Find the capital of France."}`),
		call("agent__task_status", `{"status":"in-progress","done":"","pending":"answer","now":"Reading the atlas","ready_for_final_report":false,"need_to_run_more_tools":false}`),
		call("agent__final_report", `{"status":"success","report_format":"sub-agent","report_content":"Paris."}`),
		call("agent__final_report", `{"status":"success","report_format":"markdown","report_content":"Paris is the capital."}`),
	)
	cfg := setupAgent(t, srv, "---\ndescription: Test agent\nmodels: [fake/m1]\nagents: [researcher]\n---\nYou answer questions.\n",
		"max_agent_depth: 2\n")
	researcher := "---\ndescription: Looks things up\nmodels: [fake/m1]\ntools: [agent__task_status]\n---\nYou look things up.\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(cfg), "agents", "researcher.md"), []byte(researcher), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "Capital of France?")
	if err != nil {
		t.Fatalf("ask failed: %v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != "Paris is the capital." {
		t.Fatalf("stdout = %q", out)
	}
	var lines []string // the progress lines, between the log's
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "  · ") {
			lines = append(lines, l)
		}
	}
	want := []string{
		"  · researcher › started",
		"  · researcher › Reading the atlas",
		"  · researcher › agent__task_status … ",
		"  · researcher › agent__final_report … ",
		"  · agent__researcher … ",
		"  · agent__final_report … ",
	}
	if len(lines) != len(want) {
		t.Fatalf("progress lines:\n%s", stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || strings.HasSuffix(w, "… ") && !strings.HasSuffix(lines[i], " ok") {
			t.Errorf("line %d = %q, want %q…", i+1, lines[i], w)
		}
	}
}

func TestProgressLinesNameTheAgentTheQueueAndTheCache(t *testing.T) {
	t.Parallel()
	tool := func(ti agent.ToolInfo, path ...string) agent.Event {
		return agent.Event{Kind: agent.EventToolFinished, Agent: path[len(path)-1], Path: path, Tool: &ti}
	}
	tests := []struct {
		name string
		e    agent.Event
		want string
	}{
		{"a top-level call", tool(agent.ToolInfo{Name: "github__search_code", Latency: 1234 * time.Millisecond, OK: true}, "helper"),
			"  · github__search_code … 1.2s ok\n"},
		{"a sub-agent's call names the sub-agent", tool(agent.ToolInfo{Name: "github__search_code", Latency: 80 * time.Millisecond, OK: true}, "helper", "researcher"),
			"  · researcher › github__search_code … 80ms ok\n"},
		{"two levels down", tool(agent.ToolInfo{Name: "rest__weather", Latency: time.Second, OK: true}, "a", "b", "c"),
			"  · b › c › rest__weather … 1s ok\n"},
		{"a wait in a queue", tool(agent.ToolInfo{Name: "github__search_code", Latency: 2 * time.Second, OK: true, Queue: "github", QueueWait: 300 * time.Millisecond}, "helper"),
			"  · github__search_code … 2s ok, queued 300ms\n"},
		{"a cached result", tool(agent.ToolInfo{Name: "github__search_code", OK: true, Cached: true}, "helper", "researcher"),
			"  · researcher › github__search_code … 0s ok, cached\n"},
		{"a failure", tool(agent.ToolInfo{Name: "github__search_code", Latency: 5 * time.Second, Failure: "timeout"}, "helper"),
			"  · github__search_code … 5s timeout\n"},
		{"a handoff", agent.Event{Kind: agent.EventSessionDone, Agent: "triage", Path: []string{"triage"}, Notice: "handed off to billing",
			Result: &agent.SessionSummary{Status: agent.HandedOff}}, "  · handed off to billing\n"},
		{"the top-level session starting is not news", agent.Event{Kind: agent.EventSessionStarted, Agent: "helper", Path: []string{"helper"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			progress(&b)(tt.e)
			if b.String() != tt.want {
				t.Errorf("progress line = %q, want %q", b.String(), tt.want)
			}
		})
	}
}
