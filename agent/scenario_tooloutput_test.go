package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

// withToolOutput gives the harness's runner a store under a temporary
// directory and returns that directory; the run is closed at cleanup.
func withToolOutput(t *testing.T, h *harness) string {
	t.Helper()
	base := t.TempDir()
	run, err := tooloutput.OpenRun(base, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	h.runner.ToolOutput = run
	return run.Dir()
}

// sessionDirs lists the session directories left in a run directory.
func sessionDirs(t *testing.T, runDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(runDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// bigResult is a tool returning content of its own making.
func bigResult(content string) fn {
	return fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) {
		return tools.Result{Content: content}, nil
	}}
}

var (
	tooLargeRe = regexp.MustCompile(`^Tool output is too large \((\d+) bytes, (\d+) lines, (\d+) tokens\)\.\n` +
		`Call tool_output\(handle = "([0-9a-f-]{36})", extract = "what to extract"\)\.\n` +
		"Provide precise and detailed instructions in `extract` about what you are looking for\\.$")
	extractNonceRe = regexp.MustCompile(`<ai-agent-([A-Za-z0-9]+)-FINAL`)
)

// handleIn returns the handle of the too-large message among a request's
// tool results, failing the test when there is none.
func handleIn(t *testing.T, r *llmtest.Recorded) string {
	t.Helper()
	for _, m := range toolResults(r) {
		if g := tooLargeRe.FindStringSubmatch(m.Content); g != nil {
			return g[4]
		}
	}
	t.Fatalf("no too-large message among the tool results: %s", dump(toolResults(r)))
	return ""
}

// extractionKind tells an extraction request from the session's own by
// its system prompt: "map", "reduce", "read-grep", or "" for the session.
func extractionKind(r *llmtest.Recorded) string {
	switch {
	case strings.Contains(r.System, "You can only use Read and Grep tools"):
		return "read-grep"
	case strings.Contains(r.System, "synthesize multiple chunk extractions"):
		return "reduce"
	case strings.Contains(r.System, "You must extract information from a document chunk"):
		return "map"
	}
	return ""
}

// wrapped answers an extraction request in its nonce's wrapper, unclosed.
func wrapped(t *testing.T, r *llmtest.Recorded, text string) llmtest.Reply {
	t.Helper()
	m := extractNonceRe.FindStringSubmatch(r.System)
	if m == nil {
		t.Fatalf("the extraction prompt names no nonce:\n%s", r.System)
	}
	return llmtest.Reply{Text: fmt.Sprintf(`<ai-agent-%s-FINAL format="text">%s`, m[1], text)}
}

// counter counts extraction requests by kind.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[kind]++
}

func (c *counter) get(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[kind]
}

func TestAnOversizedResultIsStoredAndExtractedOnDemand(t *testing.T) {
	t.Parallel()
	doc := `{"items":[` + strings.Repeat(`{"id":1,"name":"widget","price":3.5},`, 1500) + `{"id":2,"name":"gadget","price":99}]}`
	h := newHarness(t, withTools(toolbox{"catalog": bigResult(doc)}), withAgent(func(a *config.Agent) {
		a.ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	runDir := withToolOutput(t, h)
	var kinds counter
	var handle string
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		kind := extractionKind(r)
		kinds.add(kind)
		switch {
		case kind == "map":
			if !strings.Contains(r.System, "Name: test__catalog") || !strings.Contains(r.System, "the most expensive item") {
				t.Errorf("the map prompt lacks the tool or the request:\n%s", r.System)
			}
			return wrapped(t, r, "gadget, 99")
		case kind != "":
			t.Errorf("unexpected %s request", kind)
			return llmtest.Reply{}
		}
		last := toolResults(r)
		switch {
		case len(last) == 0:
			return llmtest.Call("test__catalog", `{}`)
		case strings.HasPrefix(last[len(last)-1].Content, "Tool output is too large"):
			handle = handleIn(t, r)
			return llmtest.Call(ToolOutputTool, jsonArgs(map[string]any{"handle": handle, "extract": "the most expensive item"}))
		}
		return llmtest.Report(config.FormatMarkdown, "success", "The gadget, at 99.")
	})
	res := h.run("What is the most expensive item?")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.srv.Requests()

	// The model saw the exact message, and tool_output only once there was
	// something to ask about.
	var sawToolOutput []bool
	for _, r := range reqs {
		if extractionKind(r) == "" {
			sawToolOutput = append(sawToolOutput, strings.Contains(string(r.Body), `"name":"tool_output"`))
		}
	}
	if len(sawToolOutput) != 3 || sawToolOutput[0] || !sawToolOutput[1] {
		t.Errorf("tool_output offered per session request: %v, want not before the first result and offered after", sawToolOutput)
	}
	if kinds.get("map") != 1 || kinds.get("reduce") != 0 {
		t.Errorf("extraction calls: %d map, %d reduce; one chunk is a single pass", kinds.get("map"), kinds.get("reduce"))
	}
	got := lastToolResult(t, reqs[len(reqs)-1])
	want := "ABSTRACT FROM TOOL OUTPUT test__catalog WITH HANDLE " + handle + ", STRATEGY:full-chunked:\n\ngadget, 99"
	if got != want {
		t.Errorf("tool_output answered\n%q\nwant\n%q", got, want)
	}
	// Four model calls, all paid for by the session, the extraction shown
	// under the tool_output call.
	if res.Usage.InputTokens != 4*llmtest.DefaultUsage().Input {
		t.Errorf("input tokens %d, want 4 calls' worth", res.Usage.InputTokens)
	}
	var extraction []Event
	for _, e := range h.events.ofKind(EventLLMCall) {
		if e.LLM.Purpose == PurposeExtraction {
			extraction = append(extraction, e)
		}
	}
	if len(extraction) != 1 || extraction[0].Op.Snapshot().Kind != "llm" {
		t.Errorf("extraction events: %d", len(extraction))
	} else if p := parentName(extraction[0].Op); p != ToolOutputTool {
		t.Errorf("the extraction call hangs under %q, want the tool_output call", p)
	}
	if left := sessionDirs(t, runDir); len(left) != 0 {
		t.Errorf("stored results outlived the session: %v", left)
	}
}

func TestAHugeSingleLineGoesFullChunkedWithOneReduce(t *testing.T) {
	t.Parallel()
	doc := `{"rows":[` + strings.Repeat(`"lorem ipsum dolor sit amet consectetur",`, 3000) + `"end"]}`
	h := newHarness(t, withTools(toolbox{"dump": bigResult(doc)}), withAgent(func(a *config.Agent) {
		// A window the document needs several chunks of.
		a.ContextWindow, a.MaxOutputTokens = 12000, 1000
		a.ToolOutput = config.ToolOutput{MaxBytes: 4096, MaxChunksForFullMode: 8, OverlapPercent: 10}
	}))
	withToolOutput(t, h)
	var kinds counter
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		kind := extractionKind(r)
		kinds.add(kind)
		switch kind {
		case "map":
			return wrapped(t, r, "a chunk of lorem ipsum")
		case "reduce":
			if strings.Count(r.System, "a chunk of lorem ipsum") < 2 {
				t.Errorf("the reduce prompt lacks the chunk outputs:\n%.2000s", r.System)
			}
			return wrapped(t, r, "3001 rows of lorem ipsum, then end")
		case "":
		default:
			t.Errorf("unexpected %s request", kind)
			return llmtest.Reply{}
		}
		last := toolResults(r)
		switch {
		case len(last) == 0:
			return llmtest.Call("test__dump", `{}`)
		case strings.HasPrefix(last[len(last)-1].Content, "Tool output is too large"):
			return llmtest.Call(ToolOutputTool, jsonArgs(map[string]any{"handle": handleIn(t, r), "extract": "what rows are there"}))
		}
		return llmtest.Report(config.FormatMarkdown, "success", "done")
	})
	res := h.run("Summarise the dump.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	maps := kinds.get("map")
	if maps < 2 || kinds.get("reduce") != 1 {
		t.Fatalf("%d map calls and %d reduce calls; want several maps and one reduce", maps, kinds.get("reduce"))
	}
	got := lastToolResult(t, h.srv.Last())
	if !strings.Contains(got, "STRATEGY:full-chunked:\n\n3001 rows of lorem ipsum, then end") {
		t.Errorf("tool_output answered %q", got)
	}
	if want := (2 + maps + 1 + 1) * llmtest.DefaultUsage().Input; res.Usage.InputTokens != want {
		t.Errorf("input tokens %d, want %d (every call counted)", res.Usage.InputTokens, want)
	}
}

func TestMultiLineTextIsSearchedWithReadAndGrep(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&b, "2026-11-23T10:%02d:%02d INFO request %d served in 12ms\n", i/60%60, i%60, i)
	}
	b.WriteString("2026-11-23T11:40:00 ERROR disk full on /var/lib/data\n")
	logs := b.String()
	h := newHarness(t, withTools(toolbox{"logs": bigResult(logs)}), withAgent(func(a *config.Agent) {
		a.ContextWindow, a.MaxOutputTokens = 16000, 1000
		a.ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	runDir := withToolOutput(t, h)
	var grepResult string
	var mu sync.Mutex
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if extractionKind(r) == "read-grep" {
			if !strings.Contains(r.System, "IMPORTANT: The handle is the filename.") {
				t.Errorf("the read-grep prompt does not say the handle is the filename:\n%s", r.System)
			}
			res := toolResults(r)
			if len(res) == 0 {
				handle := regexp.MustCompile(`Handle/filename: (\S+)`).FindStringSubmatch(r.System)
				if handle == nil {
					t.Errorf("no handle in the read-grep prompt:\n%s", r.System)
					return llmtest.Reply{}
				}
				return llmtest.Call("Grep", jsonArgs(map[string]any{"pattern": "ERROR", "path": handle[1]}))
			}
			mu.Lock()
			grepResult = res[len(res)-1].Content
			mu.Unlock()
			return llmtest.Call(FinalReportTool, jsonArgs(map[string]any{"status": "success", "report_format": "text",
				"report_content": "One error: disk full on /var/lib/data at 11:40."}))
		}
		last := toolResults(r)
		switch {
		case len(last) == 0:
			return llmtest.Call("test__logs", `{}`)
		case strings.HasPrefix(last[len(last)-1].Content, "Tool output is too large"):
			return llmtest.Call(ToolOutputTool, jsonArgs(map[string]any{"handle": handleIn(t, r), "extract": "every ERROR line"}))
		}
		return llmtest.Report(config.FormatMarkdown, "success", "The disk is full.")
	})
	res := h.run("Any errors in the logs?")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(grepResult, "ERROR disk full on /var/lib/data") {
		t.Errorf("Grep answered %q", grepResult)
	}
	got := lastToolResult(t, h.srv.Last())
	if !strings.Contains(got, "STRATEGY:read-grep:\n\nOne error: disk full on /var/lib/data at 11:40.") {
		t.Errorf("tool_output answered %q", got)
	}
	if left := sessionDirs(t, runDir); len(left) != 0 {
		t.Errorf("stored results outlived the session: %v", left)
	}
}

func TestAFailedStrategyFallsBackToTruncateWithAWarning(t *testing.T) {
	t.Parallel()
	doc := "HEAD-MARKER " + strings.Repeat("x", 30000) + " TAIL-MARKER"
	h := newHarness(t, withTools(toolbox{"blob": bigResult(doc)}), withAgent(func(a *config.Agent) {
		a.ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	withToolOutput(t, h)
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if extractionKind(r) != "" {
			// An answer in a wrapper with another nonce is no answer.
			return llmtest.Reply{Text: `<ai-agent-0000-FINAL format="text">made up`}
		}
		last := toolResults(r)
		switch {
		case len(last) == 0:
			return llmtest.Call("test__blob", `{}`)
		case strings.HasPrefix(last[len(last)-1].Content, "Tool output is too large"):
			return llmtest.Call(ToolOutputTool, jsonArgs(map[string]any{"handle": handleIn(t, r), "extract": "the markers"}))
		}
		return llmtest.Report(config.FormatMarkdown, "partial", "Only the ends were readable.")
	})
	res := h.run("Read the blob.")
	wantReport(t, res, StatusPartial, SourceToolCall)
	got := lastToolResult(t, h.srv.Last())
	for _, want := range []string{"STRATEGY:truncate:", "WARNING", "HEAD-MARKER", "TAIL-MARKER"} {
		if !strings.Contains(got, want) {
			t.Errorf("the fallback answer lacks %q: %.400s", want, got)
		}
	}
	warned := false
	for _, e := range h.events.ofKind(EventNotice) {
		if e.Warn && strings.Contains(e.Notice, "tool_output") {
			warned = true
		}
	}
	if !warned {
		t.Error("no warning event for the fallback")
	}
}

func TestOneHandleAnswersSeveralExtractionsAndAnUnknownOneFails(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat(`{"k":"v"},`, 3000)
	h := newHarness(t, withTools(toolbox{"kv": bigResult(doc)}), withAgent(func(a *config.Agent) {
		a.Tools = []string{"test__*", BatchTool}
		a.ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	withToolOutput(t, h)
	step := 0
	var mu sync.Mutex
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if extractionKind(r) != "" {
			return wrapped(t, r, "NO RELEVANT DATA FOUND\nonly k/v pairs")
		}
		mu.Lock()
		defer mu.Unlock()
		step++
		switch step {
		case 1:
			return llmtest.Call("test__kv", `{}`)
		case 2:
			h := handleIn(t, r)
			// Twice the same handle in one batch, and a handle that was never given.
			return llmtest.Call(BatchTool, jsonArgs(map[string]any{"calls": []map[string]any{
				{"tool": ToolOutputTool, "parameters": map[string]any{"handle": h, "extract": "keys"}},
				{"tool": ToolOutputTool, "parameters": map[string]any{"handle": h, "extract": "values"}},
				{"tool": ToolOutputTool, "parameters": map[string]any{"handle": "00000000-0000-0000-0000-000000000000", "extract": "x"}},
			}}))
		}
		return llmtest.Report(config.FormatMarkdown, "success", "done")
	})
	res := h.run("Look.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	got := lastToolResult(t, h.srv.Last())
	if strings.Count(got, "STRATEGY:full-chunked:\n\nNO RELEVANT DATA FOUND") != 2 {
		t.Errorf("two extractions from one handle, both successes saying what was searched: %s", got)
	}
	if !strings.Contains(got, "TOOL_OUTPUT FAILED FOR") || !strings.Contains(got, "00000000-0000-0000-0000-000000000000") {
		t.Errorf("an unknown handle must answer in the failure format: %s", got)
	}
}

func TestAResultWithMoreTokensThanTheContextHasRoomForIsStored(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("word ", 4000) // 20 KB, under max_bytes, but about 4,000 tokens
	h := newHarness(t, withTools(toolbox{"words": bigResult(doc)}), withAgent(func(a *config.Agent) {
		a.ContextWindow, a.MaxOutputTokens, a.ContextBuffer = 6000, 1000, 0
		a.ToolOutput = config.ToolOutput{MaxBytes: 100000, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}), script(llmtest.Call("test__words", `{}`), llmtest.Report(config.FormatMarkdown, "success", "stored")))
	withToolOutput(t, h)
	res := h.run("Words?")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if !tooLargeRe.MatchString(lastToolResult(t, h.srv.Last())) {
		t.Fatalf("the model got %q", tools.Snippet(lastToolResult(t, h.srv.Last()), 200))
	}
}

func TestWithToolOutputOffResultsAreCutAsBefore(t *testing.T) {
	t.Parallel()
	off := false
	doc := "HEAD " + strings.Repeat("y", 40000) + " TAIL"
	h := newHarness(t, withTools(toolbox{"big": bigResult(doc)}), withAgent(func(a *config.Agent) {
		a.ToolOutput = config.ToolOutput{Enabled: &off, MaxBytes: 2000}
	}), script(llmtest.Call("test__big", `{}`), llmtest.Report(config.FormatMarkdown, "success", "cut")))
	runDir := withToolOutput(t, h)
	h.run("Big?")
	got := lastToolResult(t, h.srv.Last())
	if len(got) > 2000 || !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || strings.Contains(string(h.srv.Last().Body), `"name":"tool_output"`) {
		t.Fatalf("with tool_output off: %d bytes, tool_output offered=%v", len(got), strings.Contains(string(h.srv.Last().Body), `"name":"tool_output"`))
	}
	if left := sessionDirs(t, runDir); len(left) != 0 {
		t.Errorf("a session without a store wrote %v", left)
	}
}

func TestStoredResultsAreRemovedHoweverTheSessionEnds(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("z", 20000)
	cases := []struct {
		name string
		run  func(h *harness)
	}{
		{"after a failure: the model stops answering", func(h *harness) {
			h.srv.Push(llmtest.Call("test__big", `{}`), llmtest.Reply{Status: 500}, llmtest.Reply{Status: 500}, llmtest.Reply{Status: 500})
			h.run("Go.")
		}},
		{"after cancellation", func(h *harness) {
			ctx, cancel := context.WithCancel(context.Background())
			h.srv.Push(llmtest.Call("test__big", `{}`))
			h.srv.Respond(func(*llmtest.Recorded) llmtest.Reply { cancel(); return llmtest.Reply{Delay: 10e9} })
			h.runCtx(ctx, "Go.")
		}},
		{"after a tool panicked beside it", func(h *harness) {
			h.srv.Push(llmtest.Calls(tc("test__big", `{}`), tc("test__boom", `{}`)), llmtest.Report(config.FormatMarkdown, "success", "ok"))
			h.run("Go.")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"big": bigResult(doc), "boom": panicking("boom")}), withAgent(func(a *config.Agent) {
				a.MaxRetries = 0
				a.ToolOutput = config.ToolOutput{MaxBytes: 4096, MaxChunksForFullMode: 1, OverlapPercent: 10}
			}))
			runDir := withToolOutput(t, h)
			core, logs := observer.New(zapcore.InfoLevel)
			h.runner.Log = zap.New(core)
			c.run(h)
			if logs.FilterMessageSnippet("stored behind a handle").Len() == 0 {
				t.Fatal("the result was never stored, so its removal proves nothing")
			}
			if left := sessionDirs(t, runDir); len(left) != 0 {
				t.Errorf("stored results outlived the session: %v", left)
			}
			if _, err := os.Stat(filepath.Dir(runDir)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// parentName is the name of the operation o hangs under.
func parentName(o *Op) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.parent == nil {
		return ""
	}
	return o.parent.name
}

func TestToolOutputIsNotOfferedOnTheFinalTurn(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("q", 20000)
	h := newHarness(t, withTools(toolbox{"big": bigResult(doc)}), withAgent(func(a *config.Agent) {
		a.MaxTurns = 2
		a.ToolOutput = config.ToolOutput{MaxBytes: 4096, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	withToolOutput(t, h)
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if len(toolResults(r)) == 0 {
			return llmtest.Call("test__big", `{}`)
		}
		// On the final turn the model still tries: refused.
		return llmtest.Calls(tc(ToolOutputTool, jsonArgs(map[string]any{"handle": handleIn(t, r), "extract": "q"})),
			tc(FinalReportTool, reportArgs("partial", "Out of turns.")))
	})
	res := h.run("Go.")
	wantReport(t, res, StatusPartial, SourceToolCall)
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	wantFinalOnly(t, reqs[1])
	for _, e := range h.events.ofKind(EventLLMCall) {
		if e.LLM.Purpose == PurposeExtraction {
			t.Fatal("an extraction ran on the final turn")
		}
	}
}

func TestTheReadGrepAgentMayAnswerInTheExtractionsWrapper(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 8000 {
		fmt.Fprintf(&b, "row %d ok\n", i)
	}
	h := newHarness(t, withTools(toolbox{"rows": bigResult(b.String())}), withAgent(func(a *config.Agent) {
		a.ContextWindow, a.MaxOutputTokens = 16000, 1000
		a.ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	withToolOutput(t, h)
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if extractionKind(r) == "read-grep" {
			// The prompt asks for the wrapper with the extraction's nonce,
			// as plain text: the nested session must take it as its answer.
			return wrapped(t, r, "8000 rows, all ok")
		}
		last := toolResults(r)
		switch {
		case len(last) == 0:
			return llmtest.Call("test__rows", `{}`)
		case strings.HasPrefix(last[len(last)-1].Content, "Tool output is too large"):
			return llmtest.Call(ToolOutputTool, jsonArgs(map[string]any{"handle": handleIn(t, r), "extract": "any row not ok", "mode": "read-grep"}))
		}
		return llmtest.Report(config.FormatMarkdown, "success", "All rows are ok.")
	})
	res := h.run("Rows?")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if got := lastToolResult(t, h.srv.Last()); !strings.Contains(got, "STRATEGY:read-grep:\n\n8000 rows, all ok") {
		t.Fatalf("tool_output answered %q", got)
	}
}

func TestAFailedExtractionCallIsExplainedWithoutItsAddress(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("w", 30000)
	h := newHarness(t, withTools(toolbox{"blob": bigResult(doc)}), withAgent(func(a *config.Agent) {
		a.MaxRetries = 0
		a.ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}))
	withToolOutput(t, h)
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if extractionKind(r) != "" {
			return llmtest.Reply{Status: 500, ErrorType: "server_error"}
		}
		last := toolResults(r)
		switch {
		case len(last) == 0:
			return llmtest.Call("test__blob", `{}`)
		case strings.HasPrefix(last[len(last)-1].Content, "Tool output is too large"):
			return llmtest.Call(ToolOutputTool, jsonArgs(map[string]any{"handle": handleIn(t, r), "extract": "anything"}))
		}
		return llmtest.Report(config.FormatMarkdown, "partial", "The model service failed.")
	})
	h.run("Read.")
	got := lastToolResult(t, h.srv.Last())
	if !strings.Contains(got, "WARNING: extraction with full-chunked failed") {
		t.Fatalf("no fallback warning: %.300s", got)
	}
	for _, leak := range []string{"127.0.0.1", "http://", "localhost"} {
		if strings.Contains(got, leak) {
			t.Errorf("the model reads %q in %.400s", leak, got)
		}
	}
}
