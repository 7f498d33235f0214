package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/form"
)

// conformanceClientEnv makes the test binary the client the official MCP
// conformance suite runs: our registry and handle, with an elicitor that
// submits the form as it is shown — a person pressing Submit on the
// prefilled form.
const conformanceClientEnv = "SLACKBOT_MCP_CONFORMANCE_CLIENT"

// conformanceClient connects to the server URL the suite passes as the
// last argument, lists its tools, calls each and answers its
// elicitations. It returns the process's exit code.
func conformanceClient() int {
	url := os.Args[len(os.Args)-1]
	reg, err := NewRegistry(map[string]config.MCPServer{
		"conformance": {URL: url},
	}, Options{Elicitation: os.Getenv(conformanceClientEnv) != "no-elicitation", Backoff: []time.Duration{time.Hour}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer reg.Close()
	p, err := reg.Acquire("conformance")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Warmup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	list, err := p.Tools(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx = tools.WithElicitor(ctx, submitAsShown{})
	for _, t := range list {
		res, err := p.Call(ctx, tools.Call{ID: "1", Name: t.Name, Arguments: json.RawMessage(`{}`)})
		if err != nil {
			fmt.Fprintln(os.Stderr, t.Name, err)
			return 1
		}
		fmt.Println(t.Name, res.Content)
	}
	return 0
}

// submitAsShown answers every form with its defaults, through the same
// form model Slack's modal and the terminal use.
type submitAsShown struct{}

func (submitAsShown) Elicit(_ context.Context, req tools.ElicitRequest) (tools.ElicitAnswer, error) {
	f, err := form.Parse(req.Schema)
	if err != nil {
		return tools.ElicitAnswer{Action: tools.ElicitDecline, Reason: err.Error()}, nil
	}
	content, problems := f.Answer(f.Initial())
	if problems != nil {
		return tools.ElicitAnswer{Action: tools.ElicitDecline, Reason: problems.Error()}, nil
	}
	return tools.ElicitAnswer{Action: tools.ElicitAccept, Content: content}, nil
}

// conformanceSuite returns node and the suite's entry point, failing the
// test when they are missing.
func conformanceSuite(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run make peers")
	}
	script = filepath.Join(repoRoot(t), "testdata", "npm", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the MCP conformance suite is not installed (%v): run make peers", err)
	}
	return node, script
}

// runScenario runs one client scenario of the suite against this test
// binary and returns the checks it reported.
func runScenario(t *testing.T, scenario, mode string) []conformanceCheck {
	t.Helper()
	node, script := conformanceSuite(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command(node, script, "client", "--command", self, "--scenario", scenario, "--output-dir", out)
	cmd.Env = append(os.Environ(), conformanceClientEnv+"="+mode)
	combined, err := cmd.CombinedOutput()
	t.Logf("conformance %s:\n%s", scenario, combined)
	var checks []conformanceCheck
	files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("the suite wrote %d checks files (exit: %v)", len(files), err)
	}
	b, rerr := os.ReadFile(files[0])
	if rerr != nil {
		t.Fatal(rerr)
	}
	if jerr := json.Unmarshal(b, &checks); jerr != nil {
		t.Fatal(jerr)
	}
	return checks
}

type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

func TestTheMCPConformanceSuitesElicitationDefaultsScenarioPasses(t *testing.T) {
	checks := runScenario(t, "elicitation-sep1034-client-defaults", "on")
	var failed []string
	passed := 0
	for _, c := range checks {
		switch c.Status {
		case "FAILURE", "WARNING":
			failed = append(failed, c.ID+": "+c.ErrorMessage)
		case "SUCCESS":
			passed++
		}
	}
	if len(failed) > 0 {
		t.Fatalf("failed checks:\n%s", strings.Join(failed, "\n"))
	}
	// The five defaults (string, integer, number, enum, boolean) at least.
	if passed < 5 {
		t.Fatalf("only %d checks passed: %+v", passed, checks)
	}
}

func TestWithoutAFormToShowTheElicitationIsNotAccepted(t *testing.T) {
	// The same client without the capability: the server's request is
	// refused, so the suite must see failures — proof the suite judges.
	checks := runScenario(t, "elicitation-sep1034-client-defaults", "no-elicitation")
	for _, c := range checks {
		if c.Status == "SUCCESS" && strings.HasPrefix(c.ID, "client-elicitation") {
			t.Fatalf("check %s passed without elicitation", c.ID)
		}
	}
}
