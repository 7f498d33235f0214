package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/telemetry/telemetrytest"
)

// TestRunAnswersInSlackAndStopsCleanlyOnSIGTERM runs the real binary
// against the Slack emulator: a mention is answered in its thread; a second
// question still running when SIGTERM arrives gets an "interrupted" note,
// and the process exits.
func TestRunAnswersInSlackAndStopsCleanlyOnSIGTERM(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "slackbot")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.AddChannel("C0GEN", "general", true)
	model := llmtest.NewServer(t)
	model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "slow one") {
				return llmtest.Reply{Text: "late", Delay: time.Minute}
			}
		}
		return llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"slack-block-kit","report_content":"Hello from *the binary*."}`)
	})
	cfg := setup(t, model, "markdown", fmt.Sprintf("slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  agent: helper\n  shutdown_grace: 200ms\n",
		srv.BotToken(), srv.AppToken(), srv.APIURL()))
	cmd := exec.Command(bin, "run", "--config", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitFor(ctx, func() bool { return srv.Connections() > 0 }); err != nil {
		t.Fatalf("the bot never connected:\n%s", stderr.String())
	}
	ts := srv.Mention("C0GEN", "U0ADA", "hello?")
	if err := srv.WaitFor(ctx, func() bool { return threadHas(srv, "C0GEN", ts, "the binary") }); err != nil {
		t.Fatalf("no answer in the thread:\n%s", stderr.String())
	}
	slow := srv.Mention("C0GEN", "U0ADA", "the slow one")
	model.Wait(2)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("slackbot run did not exit on SIGTERM:\n%s", stderr.String())
	}
	if !threadHas(srv, "C0GEN", slow, "Interrupted") {
		t.Fatalf("the running question got no interrupted note: %+v\n%s", srv.Thread("C0GEN", slow), stderr.String())
	}
	if strings.Contains(stderr.String(), srv.BotToken()) || strings.Contains(stderr.String(), "sk-cli-SECRET999") {
		t.Fatal("a secret reached the log")
	}
	// Both sessions were recorded in the default store, SQLite beside the
	// configuration, and outlive the process.
	out, serr, err := runCLI("sessions", "--config", cfg)
	if err != nil {
		t.Fatalf("sessions: %v\n%s", err, serr)
	}
	if !strings.Contains(out, "success") || !strings.Contains(out, "interrupted") || !strings.Contains(out, "U0ADA") {
		t.Fatalf("the recorded sessions:\n%s", out)
	}
}

func threadHas(srv *emulator.Server, ch, ts, want string) bool {
	for _, m := range srv.Thread(ch, ts) {
		if m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), want) {
			return true
		}
	}
	return false
}

func TestSessionsListsWhatTheBotRecorded(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cfg := setup(t, srv, "markdown", "state:\n  backend: sqlite\n")
	loaded, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.Open(loaded.State)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, r := range []state.SessionRecord{
		{ID: "s1", User: "U0ADA", Channel: "C0GEN", Agent: "helper", Status: "success", Turns: 2, InputTokens: 100, OutputTokens: 20,
			CostUSD: 0.0012, Started: now.Add(-2 * time.Hour), Duration: 3 * time.Second, Report: "Paris is the capital.\nMore.",
			Approvals: []state.Approval{{Tool: "notes__delete_note", Decision: "approved", By: "U0ADA", Thread: true, At: now}}},
		{ID: "s2", User: "U0BOB", Channel: "C0GEN", Agent: "helper", Status: "failure", Started: now.Add(-48 * time.Hour), Report: "No model."},
	} {
		if err := store.PutSession(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []state.Feedback{
		{User: "U0ADA", Value: "positive", At: now.Add(-time.Hour)},
		{User: "U0BOB", Value: "positive", At: now.Add(-time.Hour)},
		{User: "U0CAT", Value: "negative", At: now.Add(-time.Hour)},
	} {
		if err := store.SetFeedback(context.Background(), "s1", f); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	out, stderr, err := runCLI("sessions", "--config", cfg, "--since", "24h")
	if err != nil {
		t.Fatalf("sessions: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "U0ADA") || !strings.Contains(out, "Paris is the capital.") || !strings.Contains(out, "+2 -1") ||
		!strings.Contains(out, "notes__delete_note approved by U0ADA (thread)") ||
		strings.Contains(out, "U0BOB") || !strings.Contains(stderr, "1 sessions") {
		t.Fatalf("sessions printed:\n%s%s", out, stderr)
	}
	out, _, _ = runCLI("sessions", "--config", cfg, "--user", "U0BOB")
	if !strings.Contains(out, "No model.") || strings.Contains(out, "U0ADA") {
		t.Fatalf("--user U0BOB printed:\n%s", out)
	}
}

// TestRunServesMetricsAndHealthAndSendsItsSpansOnExit runs the real binary
// with metrics.listen and a tracing endpoint: /readyz turns ready once the
// socket is up, /metrics counts the answered session, and the session's
// spans reach the OTLP receiver by the time the process has exited.
func TestRunServesMetricsAndHealthAndSendsItsSpansOnExit(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "slackbot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.AddChannel("C0GEN", "general", true)
	model := llmtest.NewServer(t, llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"slack-block-kit","report_content":"Measured."}`))
	receiver := telemetrytest.NewReceiver(t)
	addr := freeAddr(t)
	cfg := setup(t, model, "markdown", fmt.Sprintf("slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  agent: helper\n  shutdown_grace: 200ms\n"+
		"metrics:\n  listen: %s\ntracing:\n  endpoint: %s\n  service_name: slackbot-bin\n",
		srv.BotToken(), srv.AppToken(), srv.APIURL(), addr, receiver.URL()))
	cmd := exec.Command(bin, "run", "--config", cfg)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	base := "http://" + addr
	status := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	wait.Eventually(t, "/readyz to answer 200", func() bool { return status("/readyz") == http.StatusOK }, wait.Log(stderr.String))
	if got := status("/healthz"); got != http.StatusOK {
		t.Fatalf("/healthz = %d", got)
	}
	ts := srv.Mention("C0GEN", "U0ADA", "measure me")
	wait.Eventually(t, "the answer", func() bool { return threadHas(srv, "C0GEN", ts, "Measured.") }, wait.Log(stderr.String))
	wait.Eventually(t, "the session on /metrics", func() bool {
		n, _ := telemetrytest.Scrape(t, base+"/metrics").Value("slackbot_sessions_total", "agent", "helper", "status", "success")
		return n == 1
	}, wait.Log(stderr.String))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("slackbot run did not exit on SIGTERM:\n%s", stderr)
	}
	found := false
	for _, s := range receiver.Spans() {
		if s.Name == "session helper" && s.Service == "slackbot-bin" && s.Attrs["slackbot.session.status"] == "success" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the session's span was not sent before exit: %+v\n%s", receiver.Spans(), stderr)
	}
	if status("/healthz") != 0 {
		t.Error("the metrics endpoint still answers after exit")
	}
	if strings.Contains(stderr.String(), srv.BotToken()) || strings.Contains(stderr.String(), "sk-cli-SECRET999") {
		t.Fatal("a secret reached the log")
	}
}

// freeAddr is a loopback address nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
