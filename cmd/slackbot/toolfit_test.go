package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
)

// manyOperations writes an OpenAPI document of n GET operations and
// returns the configuration section importing it as "big".
func manyOperations(t *testing.T, n int) string {
	t.Helper()
	paths := map[string]any{}
	for i := range n {
		paths[fmt.Sprintf("/things/%d", i)] = map[string]any{"get": map[string]any{
			"operationId": fmt.Sprintf("get-thing-%d", i), "summary": fmt.Sprintf("Get thing number %d", i),
			"responses": map[string]any{"200": map[string]any{"description": "ok"}}}}
	}
	doc, _ := json.Marshal(map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "big", "version": "1"}, "paths": paths})
	file := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return "openapi:\n  big:\n    spec: " + file + "\n    base_url: http://127.0.0.1:9\n"
}

func TestAgentsReportsToolsBeyondTheModelsLimitWithTheNumbers(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cfg := setupAgent(t, srv, "---\nmodels: [fake/m1]\ntools: [\"rest__*\"]\n---\nYou answer.\n", manyOperations(t, 200))
	out, _, err := runCLI("agents", "--config", cfg)
	if err != nil {
		t.Fatalf("agents: %v\n%s", err, out)
	}
	for _, want := range []string{"201 tools", "over the limit of 128 tools of fake/m1", "tool search (auto)", "1 agents, all valid"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout does not say %q:\n%s", want, out)
		}
	}
}

func TestAgentsRefusesAnAgentOverTheLimitThatNeverSearches(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cfg := setupAgent(t, srv, "---\nmodels: [fake/m1]\ntools: [\"rest__*\"]\ntool_search: never\n---\nYou answer.\n", manyOperations(t, 200))
	out, stderr, err := runCLI("agents", "--config", cfg)
	wantExit1(t, err, out, stderr)
	for _, want := range []string{"REFUSED", "201 tools", "over the limit of 128 tools of fake/m1", "1 refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout does not say %q:\n%s", want, out)
		}
	}
}

func TestCheckWarnsOfAnAgentWhoseToolsAreSearchedAndFailsOneRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode, status, detail string
	}{
		{"auto", checkWarn, "tool search (auto)"},
		{"never", checkFail, "set tool_search: auto"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			cfg := setupAgent(t, srv, "---\nmodels: [fake/m1]\ntools: [\"rest__*\"]\ntool_search: "+tt.mode+"\n---\nYou answer.\n", manyOperations(t, 200))
			out, _, _ := runCheckCLI(t, "--config", cfg, "--timeout", "5s")
			status, detail := row(t, out, "agent helper")
			if status != tt.status || !strings.Contains(detail, tt.detail) || !strings.Contains(detail, "201 tools") {
				t.Errorf("row = %s %q, want %s with %q and the numbers", status, detail, tt.status, tt.detail)
			}
		})
	}
}

func TestAskLogsARefusedAgentAtStartAndAnswersWithTheNumbers(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cfg := setupAgent(t, srv, "---\nmodels: [fake/m1]\ntools: [\"rest__*\"]\ntool_search: never\n---\nYou answer.\n", manyOperations(t, 200))
	out, stderr, err := runCLI("ask", "--config", cfg, "--agent", "helper", "--quiet", "Anything?")
	wantExit1(t, err, out, stderr)
	if !strings.Contains(stderr, "agent refused: its tools do not fit its models") || !strings.Contains(stderr, "201 tools") {
		t.Errorf("stderr does not log the refusal with the numbers:\n%s", stderr)
	}
	if !strings.Contains(out, "201 tools") {
		t.Errorf("the answer does not give the numbers:\n%s", out)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model was called %d times for a refused agent", n)
	}
}
