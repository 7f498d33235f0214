package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/tools"
)

// Scenarios of a session's bounds and of what its users see: the operation
// tree read while tools run, the session's time limit, retry waits, the
// agent cache, failure reasons, log lines, finish and terminate, and the
// context guard's inputs.

// walk visits every node of a snapshot.
func walk(s *OpSnapshot, f func(*OpSnapshot)) {
	f(s)
	for _, c := range s.Children {
		walk(c, f)
	}
}

func TestAnObserverMayWalkTheWholeTreeOnEveryEventWhileToolsRunInParallel(t *testing.T) {
	t.Parallel()
	const parallel = 4
	b := newBarrier(parallel)
	var calls []llmtest.ToolCall
	for i := range parallel {
		calls = append(calls, tc("test__meet", fmt.Sprintf(`{"who":"p%d"}`, i)))
	}
	calls = append(calls, tc(BatchTool, `{"calls":[{"tool":"test__echo","parameters":{"text":"a"}},{"tool":"test__echo","parameters":{"text":"b"}}]}`))
	h := newHarness(t, withTools(toolbox{"meet": b.meet(), "echo": echo()}),
		withAgent(func(a *config.Agent) { a.Tools = []string{"test__*", BatchTool}; a.MaxToolCallsPerTurn = 10 }),
		script(llmtest.Calls(calls...), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Met everyone.")))

	var mu sync.Mutex
	var kept []*OpSnapshot
	walked := 0
	watcher := func(e Event) {
		snap := e.Op.Root().Snapshot() // what a progress view does on every event
		n := 0
		walk(snap, func(s *OpSnapshot) {
			n++
			_ = s.Kind + s.Name
			_ = s.Duration()
			_ = s.OK
		})
		node := e.Op.Snapshot()
		_ = node.Name
		mu.Lock()
		walked += n
		kept = append(kept, snap)
		mu.Unlock()
	}
	res := h.runner.Run(context.Background(), Input{Agent: h.agent, Prompt: "Meet.", Observer: watcher})
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if walked == 0 {
		t.Fatal("the observer never walked the tree")
	}
	// A snapshot never changes after it was taken: the first one still
	// shows a session that has not ended, while the last shows it ended.
	if first := kept[0]; !first.End.IsZero() || len(first.Children) != 0 {
		t.Errorf("the first snapshot changed after it was taken: %s", dump(first))
	}
	nodes := 0
	walk(res.Tree, func(*OpSnapshot) { nodes++ })
	// session, 2 turns, 2 model calls, 4 meets, the batch and its 2 calls,
	// the final report.
	if nodes != 13 {
		t.Errorf("the final tree has %d nodes, want 13: %s", nodes, dump(res.Tree))
	}
	ids := map[int]bool{}
	walk(res.Tree, func(s *OpSnapshot) { ids[s.ID] = true })
	if len(ids) != nodes {
		t.Errorf("node ids are not unique: %d ids for %d nodes", len(ids), nodes)
	}
}

func TestASlowObserverNeverHoldsTheSessionsLock(t *testing.T) {
	t.Parallel()
	// A tool runs in parallel with a final report whose notes make the loop
	// emit a notice. The observer blocks on that notice until it has seen
	// the tool finish: if the notice were emitted with the session's lock
	// held, the tool could not finish and the observer would give up.
	release := make(chan struct{})
	toolDone := make(chan struct{})
	h := newHarness(t, withTools(toolbox{"slow": fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) {
		<-release
		return tools.Result{Content: "slow done"}, nil
	}}}), script(llmtest.Calls(
		tc("test__slow", `{}`),
		tc(FinalReportTool, `{"status":"success","format":"markdown","content":"Aliases used."}`),
	)))
	var once sync.Once
	var stalled bool
	observer := func(e Event) {
		switch {
		case e.Kind == EventToolFinished && e.Tool.Name == "test__slow":
			once.Do(func() { close(toolDone) })
		case e.Kind == EventNotice && strings.HasPrefix(e.Notice, "final report:"):
			close(release)
			select {
			case <-toolDone:
			case <-time.After(10 * time.Second):
				stalled = true
			}
		}
	}
	res := h.runner.Run(context.Background(), Input{Agent: h.agent, Prompt: "Go.", Observer: observer})
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if stalled {
		t.Fatal("the tool could not finish while the observer handled an event: the observer was called under the session's lock")
	}
}

func TestNearItsTimeLimitASessionAsksForTheReport(t *testing.T) {
	t.Parallel()
	// One second in all: tools may run for the first 800 ms, the rest is
	// kept for the report.
	waiting := fn{anyArgs, func(ctx context.Context, _ map[string]any) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}}
	h := newHarness(t, withTools(toolbox{"wait": waiting}),
		withAgent(func(a *config.Agent) { a.MaxSessionDuration = config.Duration(time.Second) }),
		script(llmtest.Call("test__wait", `{}`), llmtest.Report(config.FormatMarkdown, StatusPartial, "Ran out of time; here is what I know.")))
	res := h.run("Wait for it.")
	wantReport(t, res, StatusPartial, SourceToolCall)
	reqs := h.wantRequests(2)
	wantFinalOnly(t, reqs[1])
	if got := injected(t, reqs[1]); !slices.Equal(got, []string{timeFinalMessage}) {
		t.Errorf("injected %q, want the time message", got)
	}
	if got := lastToolResult(t, reqs[1]); got != "tool test__wait was stopped: the time for this request ran out." {
		t.Errorf("the model was told %q", got)
	}
}

func TestASessionPastItsTimeLimitEndsWithAReportThatSaysSo(t *testing.T) {
	t.Parallel()
	slow := llmtest.Reply{Delay: time.Minute, Text: "never sent"}
	h := newHarness(t, withAgent(func(a *config.Agent) { a.MaxSessionDuration = config.Duration(time.Second) }),
		script(slow, slow))
	res := h.run("Think hard.")
	wantReport(t, res, StatusFailure, SourceSynthetic)
	if !errors.Is(res.Err, errTimeLimit) {
		t.Errorf("Err = %v, want the time limit", res.Err)
	}
	if want := "reached its time limit of 1 second"; !strings.Contains(res.Report.Reason, want) {
		t.Errorf("reason %q does not say %q", res.Report.Reason, want)
	}
	// The first call ran out of working time; the second was the final turn.
	reqs := h.requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d, want 2", len(reqs))
	}
	wantFinalOnly(t, reqs[1])
}

func TestARetryAfterLongerThanTheSessionCanWaitEndsItWithAClearReason(t *testing.T) {
	t.Parallel()
	t.Run("alone, the session gives up at once and says why", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, script(llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "3600"}))
		res := h.run("Hello.") // without the cap this would sleep an hour
		wantReport(t, res, StatusFailure, SourceSynthetic)
		if want := "asked to wait 1 hour before trying again"; !strings.Contains(res.Report.Reason, want) {
			t.Errorf("reason %q does not say %q", res.Report.Reason, want)
		}
		h.wantRequests(1)
	})
	t.Run("with a fallback model, the fallback answers", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, withAgent(func(a *config.Agent) { a.Models = []string{"fake/" + testModel, "fake/backup-model"} }),
			script(llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfter: "3600"}, llmtest.Report(config.FormatMarkdown, StatusSuccess, "From the backup.")))
		res := h.run("Hello.")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		if reqs := h.wantRequests(2); reqs[1].Model != "backup-model" {
			t.Errorf("the second call went to %s", reqs[1].Model)
		}
	})
}

func TestTheAgentCacheHoldsOneEntryPerAgentAcrossReloads(t *testing.T) {
	t.Parallel()
	var replies []llmtest.Reply
	for range 10 {
		replies = append(replies, llmtest.Report(config.FormatMarkdown, StatusSuccess, "ok"))
	}
	h := newHarness(t, script(replies...))
	for i := range 10 {
		a := testAgent() // a reload: a new *config.Agent with the same name
		a.Prompt = fmt.Sprintf("Prompt of reload %d.", i)
		h.agent = a
		wantReport(t, h.run("Hi."), StatusSuccess, SourceToolCall)
		if sys := h.srv.Last().System; !strings.Contains(sys, a.Prompt) {
			t.Fatalf("reload %d: the session used a stale prompt: %q", i, sys)
		}
	}
	entries := 0
	h.runner.toolSets.Range(func(any, any) bool { entries++; return true })
	if entries != 1 {
		t.Errorf("the cache holds %d entries after 10 reloads of one agent, want 1", entries)
	}
}

func TestAFailureReportNamesNoHostAndTheLogKeepsTheError(t *testing.T) {
	t.Parallel()
	for base, how := range map[string]string{
		"http://127.0.0.1:1/v1/":                       "(connection refused)",
		"http://llm-gateway.internal.example:8443/v1/": "(its host name does not resolve)",
	} {
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withAgent(func(a *config.Agent) { a.MaxRetries = 0 }))
			p, err := openai.New("fake", config.Provider{Type: "openai", BaseURL: base, APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			h.runner.Providers = map[string]llm.Provider{"fake": p}
			log, buf := bufferLogger()
			h.runner.Log = log
			res := h.run("Hello.")
			wantReport(t, res, StatusFailure, SourceSynthetic)
			for _, leak := range []string{"127.0.0.1", "gateway", "internal", "dial", "http", ":1", "lookup", "tcp"} {
				if strings.Contains(res.Report.Content, leak) {
					t.Errorf("the user's report shows %q: %s", leak, res.Report.Content)
				}
			}
			if !strings.Contains(res.Report.Content, "could not be reached "+how) {
				t.Errorf("the report does not say why in words: %s", res.Report.Content)
			}
			var warned bool
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, `"level":"warn"`) && strings.Contains(l, `"msg":"session_done"`) && strings.Contains(l, `"error":"llm: gave up`) {
					warned = true
				}
			}
			if !warned {
				t.Errorf("no warn line carries the technical error:\n%s", buf.String())
			}
			if strings.Contains(buf.String(), testKey) {
				t.Error("the log shows the API key")
			}
		})
	}
}

// infoLogger logs at info level, as a deployed bot does.
func infoLogger() (*zap.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(buf), zapcore.InfoLevel)), buf
}

func TestRefusedReportsAreWarnedWithWhyAndEachToolCallHasOneInfoLine(t *testing.T) {
	t.Parallel()
	const secretArg = "password-hunter2"
	h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(func(a *config.Agent) { a.Output.Format = config.FormatJSON }), script(
		llmtest.Call(FinalReportTool, `{"status":"done","report_format":"json","content_json":{"a":1}}`),
		llmtest.Call("test__echo", `{"text":"`+secretArg+`"}`),
		text("Not JSON at all."),
		llmtest.Call(FinalReportTool, `{"status":"success","report_format":"markdown","content_json":{"answer":"yes"}}`),
	))
	log, buf := infoLogger()
	h.runner.Log = log
	wantReport(t, h.run("Go."), StatusSuccess, SourceToolCall)
	lines := strings.Split(buf.String(), "\n")
	find := func(level, msg string, parts ...string) bool {
		return slices.ContainsFunc(lines, func(l string) bool {
			if !strings.Contains(l, `"level":"`+level+`"`) || !strings.Contains(l, `"msg":"`+msg+`"`) {
				return false
			}
			for _, p := range parts {
				if !strings.Contains(l, p) {
					return false
				}
			}
			return true
		})
	}
	if !find("warn", string(EventReportRejected), `"why":"tool_call: status must be one of`) {
		t.Errorf("no warn line says why the report was refused:\n%s", buf)
	}
	if !find("warn", string(EventReportRejected), `"why":"text: a json answer must be a JSON object`) {
		t.Errorf("no warn line says why the text answer was refused:\n%s", buf)
	}
	if !find("warn", string(EventNotice), `report_format \"markdown\" does not match the session's \"json\"`) {
		t.Errorf("no warn line for the report in the wrong format:\n%s", buf)
	}
	// The orchestrator writes the info line of a call it ran, with the
	// session's fields; the session's own tool_finished line is for debugging.
	if !find("info", "tool response", `"session":"`, `"agent":"tester"`, `"tool":"test__echo"`, `"remote":"test:test__echo"`, `"latency"`,
		`"bytes_in":`, `"bytes_out":`, `"ok":true`) {
		t.Errorf("no info line for the tool call with session, name, latency, bytes and outcome:\n%s", buf)
	}
	if find("info", string(EventToolFinished), `"tool":"test__echo"`) {
		t.Errorf("the call has a second info line, tool_finished:\n%s", buf)
	}
	if !find("info", string(EventToolFinished), `"tool":"`+FinalReportTool+`"`) {
		t.Errorf("a built-in's call has no tool_finished info line:\n%s", buf)
	}
	if strings.Contains(buf.String(), secretArg) {
		t.Errorf("the log shows a tool's arguments:\n%s", buf)
	}
}

func TestRestrictedOutputOffersFinishAndItsReminderNamesIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(restricted(1)), script(
		text("Here is my answer without tools."),
		llmtest.Call(FinishTool, `{}`),
	))
	res := h.run("Answer.")
	wantReport(t, res, StatusSuccess, SourceFinish)
	reqs := h.wantRequests(2)
	wantOpenTurn(t, reqs[0], FinalReportTool, FinishTool, "test__echo")
	if got := injected(t, reqs[1]); len(got) != 1 || !strings.Contains(got[0], "'"+FinishTool+"'") {
		t.Errorf("the reminder %q does not name %s", got, FinishTool)
	}
	// finish without a note: the last text the model wrote is the answer.
	if res.Report.Content != "Here is my answer without tools." {
		t.Errorf("content = %q, want the model's last text", res.Report.Content)
	}
}

func TestFinishWithoutANoteEndsWithTheLastTextTheModelWrote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		replies []llmtest.Reply
		want    string
	}{
		{"the text beside the call", []llmtest.Reply{{Text: "All three tickets are closed.", ToolCalls: []llmtest.ToolCall{{Name: FinishTool, Arguments: `{}`}}}},
			"All three tickets are closed."},
		{"the latest non-empty text of the session", []llmtest.Reply{
			{Text: "First look.", ToolCalls: []llmtest.ToolCall{{Name: "test__echo", Arguments: `{"text":"a"}`}}},
			{Text: "Checked: nothing to change.", ToolCalls: []llmtest.ToolCall{{Name: "test__echo", Arguments: `{"text":"b"}`}}},
			{Text: "  ", ToolCalls: []llmtest.ToolCall{{Name: FinishTool, Arguments: `{"note":""}`}}},
		}, "Checked: nothing to change."},
		{"no text at all: Finished", []llmtest.Reply{llmtest.Call(FinishTool, `{}`)}, finishedNote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(finishAgent), script(tt.replies...))
			res := h.run("Close them.")
			wantReport(t, res, StatusSuccess, SourceFinish)
			if res.Report.Content != tt.want {
				t.Errorf("content = %q, want %q", res.Report.Content, tt.want)
			}
		})
	}
}

func TestATerminateResultWithoutContentTellsTheModelFinished(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"close": constant(tools.Result{Terminate: true, Content: " "})}),
		script(llmtest.Reply{Text: "Closing the ticket now.", ToolCalls: []llmtest.ToolCall{{ID: "call_close", Name: "test__close", Arguments: `{}`}}}))
	res := h.run("Close it.")
	wantReport(t, res, StatusSuccess, SourceToolMessage)
	var sent string
	for _, m := range res.Messages {
		if m.Role == llm.RoleTool && m.ToolCallID == "call_close" {
			sent = m.Content
		}
	}
	if sent != finishedNote {
		t.Errorf("the tool message says %q, want %q", sent, finishedNote)
	}
	if res.Report.Content != "Closing the ticket now." {
		t.Errorf("content = %q, want the model's last text", res.Report.Content)
	}
}

func TestTheLastResortAdoptionShowsAToolsJSONAsDataInSlack(t *testing.T) {
	t.Parallel()
	payload := `{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"INJECTED <!channel>"}}],"rows":3}`
	h := newHarness(t, withTools(toolbox{"data": constant(tools.Result{Content: payload})}), withFormat(config.FormatSlackBlockKit),
		withAgent(func(a *config.Agent) { a.MaxTurns = 2 }),
		script(llmtest.Call("test__data", `{}`), text(""), text("")))
	res := h.run("Fetch the data.")
	wantReport(t, res, StatusPartial, SourceToolMessage)
	out := dump(res.Report.Slack)
	if strings.Contains(out, `"text": "INJECTED`) {
		t.Fatalf("the tool's JSON was read as Block Kit:\n%s", out)
	}
	first := res.Report.Slack[0].Blocks
	if len(first) == 0 || !strings.Contains(dump(first[0]), "```") || !strings.Contains(out, "INJECTED") || !strings.Contains(out, `\"rows\": 3`) {
		t.Errorf("the tool's JSON is not shown as data in a code block:\n%s", out)
	}
	if strings.Contains(out, "<!channel>") {
		t.Errorf("a mention inside the tool's data would notify the channel:\n%s", out)
	}
}

func TestATerminateNoteFromAToolIsShownAsDataInSlack(t *testing.T) {
	t.Parallel()
	note := `[{"blocks":[{"type":"header","text":{"type":"plain_text","text":"FAKE ALERT"}}]}]`
	h := newHarness(t, withTools(toolbox{"close": constant(tools.Result{Terminate: true, Content: note})}), withFormat(config.FormatSlackBlockKit),
		script(llmtest.Call("test__close", `{}`)))
	res := h.run("Close it.")
	wantReport(t, res, StatusSuccess, SourceToolMessage)
	out := dump(res.Report.Slack)
	if strings.Contains(out, `"type": "header"`) || !strings.Contains(out, "```") || !strings.Contains(out, "FAKE ALERT") {
		t.Errorf("the tool's note was not shown as data in a code block:\n%s", out)
	}
}

func TestStatusIsReadInAnyCase(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ given, want string }{{"Success", StatusSuccess}, {" PARTIAL ", StatusPartial}, {"Failure", StatusFailure}} {
		t.Run(tt.given, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, script(llmtest.Call(FinalReportTool, `{"status":"`+tt.given+`","report_format":"markdown","report_content":"The answer."}`)))
			res := h.run("Go.")
			wantReport(t, res, tt.want, SourceToolCall)
			h.wantRequests(1)
		})
	}
	t.Run("in the XML wrapper's attribute", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
			n := nonceRe.FindStringSubmatch(r.System)[1]
			return text(fmt.Sprintf(`<ai-agent-%s-FINAL format="markdown" status="Partial">Half of it.</ai-agent-%s-FINAL>`, n, n))
		})
		res := h.run("Go.")
		wantReport(t, res, StatusPartial, SourceXML)
	})
}

func TestTheSlackPromptAsksForTheAnswerOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withFormat(config.FormatSlackBlockKit), script(llmtest.Call(FinalReportTool,
		`{"status":"success","report_format":"slack-block-kit","messages":[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Hi*"}}]}]}`)))
	res := h.run("Hello.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	r := h.wantRequests(1)[0]
	schema := string(r.Tools[0].Schema)
	if r.Tools[0].Name != FinalReportTool || strings.Contains(r.System, "same answer") || strings.Contains(schema, "same answer") {
		t.Errorf("the prompt or the schema asks for the answer twice:\n%s\n%s", r.System, schema)
	}
	if !strings.Contains(r.System, "report_content") || !strings.Contains(r.System, "only if") {
		t.Errorf("the prompt does not say report_content is the fallback for when blocks cannot be written:\n%s", r.System)
	}
}

func TestATextAnswerCutAtTheTokenLimitIsPartial(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		wire   option
		finish string
	}{{func(*harnessConfig) {}, "length"}, {overAnthropic(), "max_tokens"}} {
		t.Run(tt.finish, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tt.wire, script(llmtest.Reply{Text: "The first half of a long answ", Finish: tt.finish}))
			res := h.run("Explain everything.")
			wantReport(t, res, StatusPartial, SourceText)
		})
	}
}

func TestToolDefinitionsTooHeavyForTheWindowNeverMakeTheFirstTurnFinal(t *testing.T) {
	t.Parallel()
	// The prompt alone fits the 2,800-token budget; the tools' definitions
	// (about 3,000 tokens of description) do not. They are found by search
	// instead, so the session starts on an open turn.
	big := fn{`{"type":"object"}`, func(context.Context, map[string]any) (tools.Result, error) { return tools.Result{}, nil }}
	heavy := describedToolbox{toolbox{"big": big}, strings.Repeat("Searches the archive by keyword and date. ", 430)}
	h := newHarness(t, withTools(heavy), withAgent(smallWindow), script(llmtest.Report(config.FormatMarkdown, StatusPartial, "Could not use the tools.")))
	res := h.run("Hi.")
	wantReport(t, res, StatusPartial, SourceToolCall)
	reqs := h.wantRequests(1)
	wantOpenTurn(t, reqs[0], FinalReportTool, SearchTool)
	if got := injected(t, reqs[0]); len(got) != 0 {
		t.Errorf("injected %q, want nothing", got)
	}

	// With tool_search: never they cannot be offered at all: the agent is
	// refused, with the numbers, before any model call.
	h = newHarness(t, withTools(heavy), withAgent(smallWindow), withAgent(func(a *config.Agent) { a.ToolSearch = config.ToolSearchNever }))
	res = h.run("Hi.")
	if res.Report.Status != StatusFailure || !strings.Contains(res.Report.Text(), "tokens of schemas") {
		t.Errorf("report = %s %q, want a refusal with the numbers", res.Report.Status, res.Report.Text())
	}
	h.wantRequests(0)
}

// describedToolbox gives every tool of a toolbox the same long description.
type describedToolbox struct {
	toolbox
	desc string
}

func (d describedToolbox) Tools(ctx context.Context) ([]tools.Tool, error) {
	list, err := d.toolbox.Tools(ctx)
	for i := range list {
		list[i].Description = d.desc
	}
	return list, err
}

func TestThePromptSizeTheProviderReportsIsAFloorForTheGuard(t *testing.T) {
	t.Parallel()
	// Our estimate of this short conversation is small, but the provider
	// (a model whose tokenizer is less efficient) counted 3,000 tokens: the
	// next request cannot fit the 2,800-token budget.
	h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(smallWindow), script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "test__echo", Arguments: `{"text":"x"}`}}, Usage: &llmtest.Usage{Input: 1000, CacheRead: 2000, Output: 10}},
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."),
	))
	res := h.run("Echo x.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	wantFinalOnly(t, reqs[1])
}

func TestTheEstimateStaysWithinItsMargin(t *testing.T) {
	t.Parallel()
	for name, text := range estimateCorpus(t) {
		exact := llm.CountTokens(text)
		est := llm.EstimateTokens(text)
		if float64(exact) > float64(est)*llm.EstimateMargin {
			t.Errorf("%s: o200k counts %d tokens, the estimate %d: more than the margin %.2f allows", name, exact, est, llm.EstimateMargin)
		}
		if float64(est) > 2*float64(exact) {
			t.Errorf("%s: the estimate %d is more than twice the count %d: the guard would stop sessions early", name, est, exact)
		}
	}
}

func TestTrimHistoryKeepsTheLatestWholeExchangesWithinHalfTheBudget(t *testing.T) {
	t.Parallel()
	a := testAgent()
	smallWindow(a) // budget 2,800: history may take 1,400
	var history []llm.Message
	for i := range 8 {
		history = append(history,
			llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("q%d %s", i, strings.Repeat("word ", 100))},
			llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("a%d %s", i, strings.Repeat("word ", 100))})
	}
	kept, dropped := TrimHistory(a, history, "new question")
	if dropped == 0 || dropped+len(kept) != len(history) || dropped%2 != 0 {
		t.Fatalf("dropped %d, kept %d of %d: want whole exchanges dropped", dropped, len(kept), len(history))
	}
	if kept[0].Role != llm.RoleUser || kept[len(kept)-1].Content != history[len(history)-1].Content {
		t.Errorf("kept does not run from a question to the latest answer")
	}
	total := 0
	for i := range kept {
		total += messageTokens(&kept[i])
	}
	if total > 1400 {
		t.Errorf("the kept history holds %d tokens, more than half the budget", total)
	}
	if k, d := TrimHistory(a, history[:2], "q"); d != 0 || len(k) != 2 {
		t.Errorf("a short history was trimmed: kept %d, dropped %d", len(k), d)
	}
}

func TestAnOutputSchemaThatRefersToSiblingFilesValidatesReports(t *testing.T) {
	t.Parallel()
	// The schema is compiled once, where the configuration is loaded, so
	// its $ref to a sibling file resolves; compiling it again without the
	// file's location would fail the session.
	cfg, err := config.Load("../config/testdata/schemaref/slackbot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	report := func(severity string) llmtest.Reply {
		return llmtest.Call(FinalReportTool, jsonArgs(map[string]any{"status": "success", "report_format": "json",
			"content_json": map[string]any{"title": "db down", "severity": severity}}))
	}
	h := newHarness(t, script(report("apocalyptic"), report("high")))
	a := *cfg.Agents["reporter"]
	a.Models = []string{"fake/" + testModel}
	h.agent = &a
	res := h.run("Report it.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if res.Report.ContentJSON["severity"] != "high" {
		t.Errorf("content_json = %v", res.Report.ContentJSON)
	}
	reqs := h.wantRequests(2)
	if got := lastToolResult(t, reqs[1]); !strings.Contains(got, "/severity") {
		t.Errorf("the model was not told the severity breaks the schema: %q", got)
	}
}
