package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// repoRoot is the directory holding go.mod, above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", dir)
	}
	return dir
}

// everything returns the config lines of server-everything over stdio,
// the pinned npm peer.
func everything(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run make peers")
	}
	script := filepath.Join(repoRoot(t), "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything is not installed (%v): run make peers", err)
	}
	return fmt.Sprintf("mcp_servers:\n  everything:\n    command: %s\n    args: [%q, stdio]\n    tools_allowed: [echo, get-sum]\n", node, script)
}

func TestAskCallsAnMCPServerAndARESTTool(t *testing.T) {
	t.Parallel()
	weather := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "wx-key" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"city":%q,"temp_c":21}`, strings.TrimPrefix(r.URL.Path, "/weather/"))
	}))
	t.Cleanup(weather.Close)
	srv := llmtest.NewServer(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "everything__echo", Arguments: `{"message":"hi there"}`},
			{Name: "rest__weather", Arguments: `{"city":"Paris"}`},
		}},
		llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"markdown","report_content":"Sunny, 21°C."}`),
	)
	rest := "rest_tools:\n  weather:\n    url: " + weather.URL + "/weather/{city}\n    headers: {X-Api-Key: wx-key}\n"
	cfg := setupAgent(t, srv, "---\ndescription: Test agent\nmodels: [fake/m1]\ntools: [\"everything__*\", \"rest__*\"]\n---\nYou answer.\n",
		everything(t), rest)
	out, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "Weather in Paris?")
	if err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != "Sunny, 21°C." {
		t.Fatalf("stdout = %q\n%s", out, stderr)
	}
	second := srv.Requests()[1]
	for _, want := range []string{"Echo: hi there", `\"city\":\"Paris\"`} {
		if !bytes.Contains(second.Body, []byte(want)) {
			t.Errorf("the model never saw %s; second request: %s", want, second.Body)
		}
	}
	for _, want := range []string{"  · everything__echo … ", "  · rest__weather … "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no progress line %q in:\n%s", want, stderr)
		}
	}

	listed, stderr, err := runCLI("tools", "--config", cfg, "--agent", "helper")
	if err != nil {
		t.Fatalf("tools: %v\n%s", err, stderr)
	}
	for _, want := range []string{"everything__echo", "everything__get-sum", "rest__weather"} {
		if !strings.Contains(listed, want) {
			t.Errorf("slackbot tools does not list %s:\n%s", want, listed)
		}
	}
	if strings.Contains(listed, "everything__get-tiny-image") {
		t.Errorf("tools_allowed did not filter:\n%s", listed)
	}
}

// TestSIGTERMLeavesNoMCPProcessBehind runs the real binary with an MCP
// server that starts a grandchild, stops the binary with SIGTERM while a
// session waits on the model, and checks by pid that both are gone.
func TestSIGTERMLeavesNoMCPProcessBehind(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	bin := t.TempDir()
	for _, b := range [][2]string{{"slackbot", "./cmd/slackbot"}, {"testserver", "./tools/mcp/internal/testserver"}} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, b[0]), b[1])
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	pids := filepath.Join(t.TempDir(), "pids")
	srv := llmtest.NewServer(t, llmtest.Reply{Text: "too late", Delay: time.Minute})
	cfg := setup(t, srv, "markdown", fmt.Sprintf("mcp_servers:\n  f:\n    command: %s\n    args: [-grandchild, %s]\n", filepath.Join(bin, "testserver"), pids))
	cmd := exec.Command(filepath.Join(bin, "slackbot"), "ask", "--config", cfg, "--agent", "helper", "question")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	srv.Wait(1) // the session is waiting on the model: the MCP server is up
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatalf("the MCP server never started: %v\n%s", err, stderr.String())
	}
	var server, grandchild int
	if _, err := fmt.Sscan(string(b), &server, &grandchild); err != nil {
		t.Fatalf("pids file %q: %v", b, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("slackbot did not stop on SIGTERM:\n%s", stderr.String())
	}
	for _, pid := range []int{server, grandchild} {
		wait.Eventually(t, fmt.Sprintf("process %d to end with slackbot", pid), func() bool { return gone(pid) },
			wait.Within(10*time.Second), wait.Log(stderr.String))
	}
}

// gone reports whether pid no longer runs (absent, or a zombie whose
// parent is not us and will be reaped by init).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// TestABigFileFromTheFilesystemServerIsExtractedNotCut reads a large file
// through the real server-filesystem: the model gets a handle, asks
// tool_output about it, and the answer comes from the whole file — the
// line it needs is in the middle, which cutting would have lost.
func TestABigFileFromTheFilesystemServerIsExtractedNotCut(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run make peers")
	}
	script := filepath.Join(repoRoot(t), "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-filesystem is not installed (%v): run make peers", err)
	}
	data := t.TempDir()
	var b strings.Builder
	for i := range 4000 {
		if i == 2000 {
			b.WriteString("config: the secret ingredient is cardamom\n")
		}
		fmt.Fprintf(&b, "line %d: nothing to see here, just filler text\n", i)
	}
	if err := os.WriteFile(filepath.Join(data, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	srv := llmtest.NewServer(t)
	handleRe := regexp.MustCompile(`tool_output\(handle = \\"([0-9a-f-]{36})\\"`) // as it stands in a JSON body
	var sawMiddle bool
	var mu sync.Mutex
	srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(r.System, "You can only use Read and Grep tools") {
			body := string(r.Body)
			if !strings.Contains(body, "cardamom") {
				h := regexp.MustCompile(`Handle/filename: (\S+)`).FindStringSubmatch(r.System)
				if h == nil {
					t.Errorf("no handle in the read-grep prompt")
					return llmtest.Reply{}
				}
				return llmtest.Call("Grep", fmt.Sprintf(`{"pattern":"secret","path":%q}`, h[1]))
			}
			mu.Lock()
			sawMiddle = true
			mu.Unlock()
			return llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"text","report_content":"The secret ingredient is cardamom."}`)
		}
		body := string(r.Body)
		switch {
		case strings.Contains(body, "ABSTRACT FROM TOOL OUTPUT"):
			return llmtest.Call(llmtest.FinalReportTool, `{"status":"success","report_format":"markdown","report_content":"Cardamom."}`)
		case handleRe.MatchString(body):
			h := handleRe.FindStringSubmatch(body)[1]
			return llmtest.Call("tool_output", fmt.Sprintf(`{"handle":%q,"extract":"the secret ingredient"}`, h))
		}
		return llmtest.Call("fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(data, "big.txt")))
	})
	cfg := setupAgent(t, srv, "---\ndescription: Test agent\nmodels: [fake/m1]\ntools: [\"fs__read_text_file\"]\ncontext_window: 16000\nmax_output_tokens: 1000\n---\nYou answer.\n",
		fmt.Sprintf("mcp_servers:\n  fs:\n    command: %s\n    args: [%q, %q]\n", node, script, data),
		fmt.Sprintf("tool_output:\n  dir: %s\n", store))
	out, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "What is the secret ingredient?")
	if err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != "Cardamom." {
		t.Fatalf("stdout = %q\n%s", out, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if !sawMiddle {
		t.Fatal("the read-grep extraction never found the line in the middle of the file")
	}
	if !strings.Contains(stderr, `"handle"`) || !strings.Contains(stderr, `"reason":"bytes"`) {
		t.Errorf("no log line with the handle and the reason:\n%s", stderr)
	}
	runs, _ := os.ReadDir(store)
	for _, r := range runs {
		if left, _ := os.ReadDir(filepath.Join(store, r.Name())); len(left) != 0 {
			t.Errorf("stored results outlived the command: %s/%v", r.Name(), left)
		}
	}
}

func TestTheBotRefusesToStartWithoutAPlaceForLargeResults(t *testing.T) {
	t.Parallel()
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	cfg := setup(t, srv, "markdown", fmt.Sprintf("tool_output:\n  dir: %s\n", filepath.Join(blocker, "store")))
	_, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "question")
	if err == nil || !strings.Contains(err.Error(), "tool_output.dir") {
		t.Fatalf("err = %v (stderr %s), want a refusal naming tool_output.dir", err, stderr)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a session ran anyway")
	}
}
