package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

func TestASessionToolIsOfferedToItsSessionItsArgumentsCheckedAndAStoredResultBecomesAHandle(t *testing.T) {
	t.Parallel()
	h := newHarness(t, script(
		llmtest.Call("headend__read", `{}`),
		llmtest.Call("headend__read", `{"id":"F1"}`),
		llmtest.Report(config.FormatMarkdown, "success", "Read it."),
	))
	withToolOutput(t, h)
	var mu sync.Mutex
	var calls []string
	tool := SessionTool{
		Def: llm.ToolDef{Name: "headend__read", Description: "Read a file of this thread.",
			Schema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string"}}}`)},
		Run: func(_ context.Context, args json.RawMessage) SessionResult {
			var a struct{ ID string }
			_ = json.Unmarshal(args, &a)
			mu.Lock()
			calls = append(calls, a.ID)
			mu.Unlock()
			return SessionResult{Content: strings.Repeat("a line of the file\n", 10), Store: true, Name: "notes.txt"}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := h.runner.Run(ctx, Input{Agent: h.agent, Prompt: "read F1", Tools: []SessionTool{tool}})
	wantReport(t, res, StatusSuccess, SourceToolCall)

	reqs := h.requests()
	if !slices.Contains(reqs[0].ToolNames, "headend__read") {
		t.Fatalf("the session tool is not offered: %v", reqs[0].ToolNames)
	}
	results := toolResults(reqs[2])
	if len(results) != 2 || !strings.Contains(results[0].Content, "id") {
		t.Fatalf("tool results %+v, want the arguments' error first", results)
	}
	if !strings.Contains(results[1].Content, "tool_output(handle") {
		t.Errorf("a result to store came back as %q, want a handle", results[1].Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(calls, []string{"F1"}) {
		t.Errorf("the tool ran with %v, want once with F1 (never with arguments its schema refuses)", calls)
	}
}
