package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
)

// Scenarios of the model failing: retries and fallbacks through llm.Chain,
// and the synthetic report when no model answers.

func TestTransientModelFailuresAreRetriedAndTheSessionSucceeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		failure llmtest.Reply
		kind    string // in the retry event's error
	}{
		{"a 429 with retry-after-ms", llmtest.Reply{ErrorType: "rate_limit_exceeded", RetryAfterMs: "20"}, "rate_limit"},
		{"a 429 with retry-after", llmtest.Reply{Status: 429, RetryAfter: "0"}, "rate_limit"},
		{"a 500", llmtest.Reply{Status: 500}, "server"},
		{"a 503 with an OpenAI server_error", llmtest.Reply{Status: 503, ErrorType: "server_error"}, "server"},
		{"a body that is not JSON", llmtest.Reply{Raw: "<html><body>502 Bad Gateway</body></html>", ContentType: "text/html"}, ""},
		{"a JSON body that is garbage", llmtest.Reply{Raw: `{"oops":`}, ""},
		{"a stream that stops without finishing", llmtest.Reply{Text: "partial answer that never ends", EndAfter: 3}, ""},
		{"a stream that breaks with an error event", llmtest.Reply{Text: "partial", StreamError: "server_error"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, script(tt.failure, llmtest.Report(config.FormatMarkdown, StatusSuccess, "Answered on the second try.")))
			res := h.run("Answer.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			if res.Report.Content != "Answered on the second try." || res.Err != nil {
				t.Errorf("report %q, err %v", res.Report.Content, res.Err)
			}
			wantTurns(t, res, 1)
			h.wantRequests(2)
			retries := h.events.ofKind(EventLLMRetry)
			if len(retries) != 1 || !strings.Contains(retries[0].LLM.Err, tt.kind) {
				t.Errorf("retry events = %s, want one naming %q", dump(retries), tt.kind)
			}
			if calls := h.events.ofKind(EventLLMCall); len(calls) != 1 || calls[0].LLM.Err != "" {
				t.Errorf("llm_call events = %s, want one success", dump(calls))
			}
		})
	}
}

func TestAFailingModelFallsBackToTheNextOne(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		failure llmtest.Reply
	}{
		{"a model that keeps answering 500", llmtest.Reply{Status: 500}},
		{"a provider whose key is refused", llmtest.Reply{ErrorType: "invalid_api_key"}},
		{"a provider out of quota", llmtest.Reply{ErrorType: "insufficient_quota"}},
		{"a model the provider does not know", llmtest.Reply{ErrorType: "model_not_found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withAgent(func(a *config.Agent) {
				a.Models = []string{"primary/" + testModel, "backup/" + testModel}
				a.MaxRetries = 3
			}))
			primary := llmtest.NewServer(t)
			primary.Respond(func(*llmtest.Recorded) llmtest.Reply { return tt.failure })
			h.runner.Providers = map[string]llm.Provider{
				"primary": newProvider(t, wireOpenAI, "primary", primary),
				"backup":  newProvider(t, wireOpenAI, "backup", h.srv),
			}
			h.srv.Push(llmtest.Report(config.FormatMarkdown, StatusSuccess, "From the backup."))
			res := h.run("Answer.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			if n := len(primary.Requests()); n != 1 {
				t.Errorf("primary got %d requests, want 1 (the backup is ready at once)", n)
			}
			h.wantRequests(1)
			calls := h.events.ofKind(EventLLMCall)
			if len(calls) != 1 || calls[0].LLM.Provider != "backup" || calls[0].LLM.Model != testModel {
				t.Errorf("llm_call events = %s, want one from backup", dump(calls))
			}
			if llmOp := res.Tree.Children[0].Children[0]; llmOp.Kind != "llm" || llmOp.Name != "backup/"+testModel {
				t.Errorf("the llm node is %s %q", llmOp.Kind, llmOp.Name)
			}
		})
	}
}

func TestAModelThatCannotBeUsedEndsPromptlyWithASyntheticFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  llm.ErrorKind
	}{
		{"a refused key (no retries)", llmtest.Reply{ErrorType: "invalid_api_key", ErrorMessage: "Incorrect API key provided: " + testKey + "."}, llm.ErrAuth},
		{"a 403", llmtest.Reply{Status: 403}, llm.ErrAuth},
		{"an exhausted quota (no retries)", llmtest.Reply{ErrorType: "insufficient_quota"}, llm.ErrQuota},
		{"a request the model refuses (no retries)", llmtest.Reply{ErrorType: "context_length_exceeded"}, llm.ErrBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withAgent(func(a *config.Agent) { a.MaxRetries = 3 }))
			h.srv.Respond(func(*llmtest.Recorded) llmtest.Reply { return tt.reply })
			res := h.run("Answer.")
			wantReport(t, res, StatusFailure, SourceSynthetic)
			why := map[llm.ErrorKind]string{llm.ErrAuth: "rejected the configured credentials",
				llm.ErrQuota: "quota or credit is used up", llm.ErrBadRequest: "refused the request"}[tt.kind]
			if !strings.HasPrefix(res.Report.Reason, "There is no answer because the model service") || !strings.Contains(res.Report.Reason, why) {
				t.Errorf("reason = %q, want it to say that the service %s", res.Report.Reason, why)
			}
			if llm.KindOf(res.Err) != tt.kind {
				t.Errorf("Err = %v (kind %s), want kind %s", res.Err, llm.KindOf(res.Err), tt.kind)
			}
			if strings.Contains(res.Report.Reason, testKey) || strings.Contains(res.Err.Error(), testKey) {
				t.Errorf("the API key leaked into the reason or the error: %q", res.Report.Reason)
			}
			wantTurns(t, res, 1)
			if n := len(h.srv.Requests()); n != 1 {
				t.Errorf("model calls = %d, want 1: the failure is final", n)
			}
			if n := len(h.events.ofKind(EventLLMRetry)); n != 0 {
				t.Errorf("%d retries of a final failure", n)
			}
			calls := h.events.ofKind(EventLLMCall)
			if len(calls) != 1 || calls[0].LLM.Err == "" {
				t.Errorf("llm_call events = %s, want one failure", dump(calls))
			}
		})
	}
}

func TestRetriesStopAtMaxRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withAgent(func(a *config.Agent) { a.MaxRetries = 2 }))
	h.srv.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Status: 500} })
	res := h.run("Answer.")
	wantReport(t, res, StatusFailure, SourceSynthetic)
	if llm.KindOf(res.Err) != llm.ErrServer {
		t.Errorf("Err = %v", res.Err)
	}
	if n := len(h.srv.Requests()); n != 3 {
		t.Errorf("model calls = %d, want 3 (one and two retries)", n)
	}
	if n := len(h.events.ofKind(EventLLMRetry)); n != 2 {
		t.Errorf("%d retry events, want 2", n)
	}
}

func TestASlowModelIsCutOffAtTheLLMTimeoutAndRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		slow llmtest.Reply
	}{
		{"no answer at all", llmtest.Reply{Delay: time.Hour}},
		{"a stream that stalls", llmtest.Reply{Text: "I will answer this very slowly", StallAfter: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			t.Run("then fails", func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, withAgent(func(a *config.Agent) {
					a.LLMTimeout = config.Duration(100 * time.Millisecond)
					a.MaxRetries = 1
				}), script(tt.slow, tt.slow))
				res := h.run("Answer.")
				wantReport(t, res, StatusFailure, SourceSynthetic)
				if llm.KindOf(res.Err) != llm.ErrTimeout {
					t.Errorf("Err = %v (kind %s), want a timeout", res.Err, llm.KindOf(res.Err))
				}
				if errors.Is(res.Err, context.Canceled) {
					t.Errorf("a timeout reported as a cancellation: %v", res.Err)
				}
				h.wantRequests(2)
			})
			t.Run("then succeeds", func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, withAgent(func(a *config.Agent) {
					// Long enough for a prompt answer even on a loaded machine.
					a.LLMTimeout = config.Duration(time.Second)
					a.MaxRetries = 1
				}), script(tt.slow, llmtest.Report(config.FormatMarkdown, StatusSuccess, "Quick this time.")))
				res := h.run("Answer.")
				wantReport(t, res, StatusSuccess, SourceToolCall)
				h.wantRequests(2)
			})
		})
	}
}

func TestCancellingTheContextEndsTheSessionPromptly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup scripts the model and returns a channel that is closed
		// once the session is busy (a call or a tool in flight).
		setup func(t *testing.T) (option, func(h *harness) <-chan struct{})
	}{
		{"during a model call", func(t *testing.T) (option, func(h *harness) <-chan struct{}) {
			return script(llmtest.Reply{Delay: time.Hour}), func(h *harness) <-chan struct{} {
				busy := make(chan struct{})
				go func() {
					_, _ = h.srv.WaitContext(context.Background(), 1)
					close(busy)
				}()
				return busy
			}
		}},
		{"during a tool that ignores its context", func(t *testing.T) (option, func(h *harness) <-chan struct{}) {
			started := make(chan struct{})
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			box := toolbox{"slow": fn{anyArgs, func(context.Context, map[string]any) (tools.Result, error) {
				close(started)
				<-release
				return tools.Result{Content: "late"}, nil
			}}}
			return func(c *harnessConfig) {
					withTools(box)(c)
					script(llmtest.Call("test__slow", `{}`))(c)
				}, func(*harness) <-chan struct{} {
					return started
				}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt, busy := tt.setup(t)
			h := newHarness(t, opt, withAgent(func(a *config.Agent) { a.ToolTimeout = config.Duration(time.Hour) }))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b := busy(h)
			go func() {
				<-b
				cancel()
			}()
			res := h.runCtx(ctx, "Answer.")
			wantReport(t, res, StatusFailure, SourceSynthetic)
			if !errors.Is(res.Err, context.Canceled) {
				t.Errorf("Err = %v, want context.Canceled", res.Err)
			}
			if want := "The request was cancelled before an answer was ready."; res.Report.Reason != want {
				t.Errorf("reason = %q, want %q", res.Report.Reason, want)
			}
			if n := len(h.srv.Requests()); n != 1 {
				t.Errorf("model calls = %d, want 1", n)
			}
			if n := len(h.events.ofKind(EventSessionDone)); n != 1 {
				t.Errorf("%d session_done events", n)
			}
		})
	}
}

func TestASessionThatCannotStartStillReturnsAReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		agent func(a *config.Agent)
		want  string
	}{
		{"an unknown provider", func(a *config.Agent) { a.Models = []string{"nowhere/" + testModel} }, `provider "nowhere" is not configured`},
		{"no models", func(a *config.Agent) { a.Models = nil }, "has no models"},
		{"an output schema that does not compile", func(a *config.Agent) {
			a.Output = config.Output{Format: config.FormatJSON, Schema: map[string]any{"type": 5}}
		}, "output schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withAgent(tt.agent))
			res := h.run("Answer.")
			wantReport(t, res, StatusFailure, SourceSynthetic)
			if res.Err == nil || !strings.Contains(res.Err.Error(), tt.want) || !strings.Contains(res.Report.Reason, tt.want) {
				t.Errorf("Err = %v, reason %q, want both to say %q", res.Err, res.Report.Reason, tt.want)
			}
			if n := len(h.srv.Requests()); n != 0 {
				t.Errorf("the model was called %d times", n)
			}
		})
	}
	t.Run("no agent", func(t *testing.T) {
		t.Parallel()
		res := (&Runner{}).Run(context.Background(), Input{Prompt: "Hello."})
		if res.Report == nil || !res.Report.Synthetic() || res.Err == nil {
			t.Errorf("result = %+v", res)
		}
	})
}

func TestTheAnthropicWireCarriesTheSameSession(t *testing.T) {
	t.Parallel()
	t.Run("a tool call then the final report", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, overAnthropic(), withTools(toolbox{"echo": echo()}), script(
			llmtest.Reply{Text: "Let me check.", ToolCalls: []llmtest.ToolCall{tc("test__echo", `{"text":"ping"}`)}},
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "The echo said ping."),
		))
		res := h.run("Echo ping.")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		if res.Report.Content != "The echo said ping." {
			t.Errorf("content = %q", res.Report.Content)
		}
		wantTurns(t, res, 2)
		reqs := h.wantRequests(2)
		if reqs[0].Format != llmtest.FormatAnthropic || reqs[0].APIKey != testKey {
			t.Errorf("request format %s, key %q", reqs[0].Format, reqs[0].APIKey)
		}
		wantOpenTurn(t, reqs[0], FinalReportTool, "test__echo")
		if got := lastToolResult(t, reqs[1]); got != "echo: ping" {
			t.Errorf("tool result = %q", got)
		}
		if !strings.HasPrefix(reqs[0].System, h.agent.Prompt) {
			t.Errorf("system prompt = %q", reqs[0].System)
		}
		if calls := h.events.ofKind(EventLLMCall); len(calls) != 2 || calls[0].LLM.Usage.InputTokens != 120 || calls[0].LLM.Usage.CostUSD <= 0 {
			t.Errorf("llm_call events = %s", dump(calls))
		}
	})
	t.Run("an overloaded model is retried", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, overAnthropic(), script(llmtest.Reply{ErrorType: "overloaded_error"}, llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")))
		res := h.run("Answer.")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		h.wantRequests(2)
	})
	t.Run("a refused key ends with a synthetic failure", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, overAnthropic(), withAgent(func(a *config.Agent) { a.MaxRetries = 3 }),
			script(llmtest.Reply{ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key " + testKey}))
		res := h.run("Answer.")
		wantReport(t, res, StatusFailure, SourceSynthetic)
		if llm.KindOf(res.Err) != llm.ErrAuth || strings.Contains(res.Report.Reason, testKey) {
			t.Errorf("Err = %v, reason %q", res.Err, res.Report.Reason)
		}
		h.wantRequests(1)
	})
	t.Run("the final turn requires the final report", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, overAnthropic(), withTools(toolbox{"echo": echo()}), withAgent(func(a *config.Agent) { a.MaxTurns = 1 }), script(
			llmtest.Call("test__echo", `{"text":"x"}`),
			llmtest.Report(config.FormatMarkdown, StatusPartial, "Partial."),
		))
		res := h.run("Answer.")
		wantReport(t, res, StatusPartial, SourceToolCall)
		reqs := h.wantRequests(2)
		wantFinalOnly(t, reqs[0])
		wantFinalOnly(t, reqs[1])
		// Instructions injected after the conversation began travel as user
		// turns on the Anthropic wire, never in the system prompt.
		if !inUserTurns(reqs[1], maxTurnsFinalMessage) || !inUserTurns(reqs[1], finalRetryMessage) || strings.Contains(reqs[1].System, finalRetryMessage) {
			t.Errorf("the retry lacks the injected messages in user turns: %s", dump(reqs[1].Messages))
		}
	})
	t.Run("malformed arguments are explained and sent back whole", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, overAnthropic(), withTools(toolbox{"echo": echo()}), script(
			llmtest.Reply{ChunkSize: 4, ToolCalls: []llmtest.ToolCall{tc("test__echo", `{"text": "pi`)}},
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Recovered."),
		))
		res := h.run("Answer.")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		reqs := h.wantRequests(2)
		if got, want := lastToolResult(t, reqs[1]), modelMessage(t, "test__echo", `{"text": "pi`, ""); got != want {
			t.Errorf("the model was told %q, want %q", got, want)
		}
		if tr := toolResults(reqs[1]); len(tr) != 1 || !tr[0].IsError {
			t.Errorf("the tool result is not marked is_error: %s", dump(tr))
		}
	})
	t.Run("an empty reply is told and the session goes on", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, overAnthropic(), script(text(""), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")))
		res := h.run("Answer.")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		reqs := h.wantRequests(2)
		if !inUserTurns(reqs[1], emptyReplyMessage) {
			t.Errorf("the empty-reply message is missing: %s", dump(reqs[1].Messages))
		}
	})
}

func TestAModelUnknownToTheProviderFallsBackToTheNextModelThere(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withAgent(func(a *config.Agent) { a.Models = []string{"fake/retired-model", "fake/" + testModel} }))
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if r.Model == "retired-model" {
			return llmtest.Reply{ErrorType: "model_not_found"}
		}
		return llmtest.Report(config.FormatMarkdown, StatusSuccess, "From the second model.")
	})
	res := h.run("Answer.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	if reqs[0].Model != "retired-model" || reqs[1].Model != testModel {
		t.Errorf("models tried = %s, %s", reqs[0].Model, reqs[1].Model)
	}
}

func TestSessionsOfOneRunnerRunConcurrently(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"echo": echo()}))
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if len(toolResults(r)) == 0 {
			return llmtest.Call("test__echo", jsonArgs(map[string]string{"text": r.Messages[0].Content}))
		}
		return llmtest.Report(config.FormatMarkdown, StatusSuccess, "Answer to "+toolResults(r)[0].Content)
	})
	const n = 8
	results := make(chan *Result, n)
	for i := range n {
		go func() {
			results <- h.runner.Run(t.Context(), Input{Agent: h.agent, Prompt: fmt.Sprintf("q%d", i)})
		}()
	}
	seen := map[string]bool{}
	for range n {
		res := <-results
		if res.Report.Source != SourceToolCall {
			t.Errorf("report %s: %s", res.Report.Source, res.Report.Reason)
		}
		seen[res.Report.Content] = true
	}
	for i := range n {
		if want := fmt.Sprintf("Answer to echo: q%d", i); !seen[want] {
			t.Errorf("no report %q among %v", want, seen)
		}
	}
	h.wantRequests(2 * n)
}

func TestAToolCallWithoutAnIDStillGetsItsResult(t *testing.T) {
	t.Parallel()
	// Some OpenAI-compatible servers stream tool calls without ids.
	chunk := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-raw","object":"chat.completion.chunk","created":1,"model":"` + testModel +
			`","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	sse := chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"type":"function","function":{"name":"test__echo","arguments":""}}]}`, "null") +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"text\":\"no id\"}"}}]}`, "null") +
		chunk(`{}`, `"tool_calls"`) + "data: [DONE]\n\n"
	h := newHarness(t, withTools(toolbox{"echo": echo()}), script(
		llmtest.Reply{Raw: sse, ContentType: "text/event-stream"},
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."),
	))
	res := h.run("Go.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	reqs := h.wantRequests(2)
	tr := toolResults(reqs[1])
	if len(tr) != 1 || tr[0].Content != "echo: no id" || tr[0].ToolCallID == "" {
		t.Errorf("tool results = %s", dump(tr))
	}
}

func TestOverAnthropicAnInjectedMessageIsAnsweredNotContinued(t *testing.T) {
	t.Parallel()
	// The Messages API reads a conversation that ends with an assistant
	// turn as a prefill to continue (and newer models refuse it). After a
	// text reply the loop's instruction must therefore reach the model in a
	// turn of its own, not only in the system prompt.
	jsonFinal := llmtest.Call(FinalReportTool, `{"status":"success","report_format":"json","content_json":{"answer":"yes","confidence":1}}`)
	tests := []struct {
		name   string
		agent  func(*config.Agent)
		first  llmtest.Reply
		final  llmtest.Reply
		inject string
	}{
		{"a restriction reminder", restricted(3), text("The answer is 42."), llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."), config.DefaultRestrictionMessage},
		{"a refused json answer", jsonAgent, text("Yes."), jsonFinal, "Your answer was not accepted"},
		{"the final-turn retry", func(a *config.Agent) { a.RestrictOutput = true; a.MaxTurns = 1 }, text("Still no report."),
			llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done."), finalRetryMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, overAnthropic(), withAgent(tt.agent), script(tt.first, tt.final))
			res := h.run("Answer.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			reqs := h.wantRequests(2)
			if !inUserTurns(reqs[1], tt.inject) {
				t.Errorf("the instruction is missing altogether: %s", dump(reqs[1].Messages))
			}
			msgs := reqs[1].Messages
			if last := msgs[len(msgs)-1]; last.Role != "user" {
				t.Errorf("the request ends with a %s turn %q: the model is asked to continue its own text rather than to answer %q",
					last.Role, last.Content, tt.inject)
			}
		})
	}
}

func TestAConversationMovesToAnotherWireFormatWhenTheFirstProviderFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"echo": echo()}), withAgent(func(a *config.Agent) {
		a.Models = []string{"primary/" + testModel, "backup/" + testModel}
	}))
	primary := llmtest.NewServer(t, llmtest.Call("test__echo", `{"text":"ping"}`))
	primary.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Status: 500} })
	backup := llmtest.NewServer(t, llmtest.Report(config.FormatMarkdown, StatusSuccess, "Claude finished it."))
	h.runner.Providers = map[string]llm.Provider{
		"primary": newProvider(t, wireOpenAI, "primary", primary),
		"backup":  newProvider(t, wireAnthropic, "backup", backup),
	}
	res := h.run("Echo ping.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	wantTurns(t, res, 2)
	reqs := backup.Requests()
	if len(reqs) != 1 || reqs[0].Invalid != "" {
		t.Fatalf("backup requests = %d, invalid %q", len(reqs), reqs[0].Invalid)
	}
	first := primary.Requests()[0]
	var callID string
	for _, m := range res.Messages {
		if len(m.ToolCalls) > 0 && callID == "" {
			callID = m.ToolCalls[0].ID
		}
	}
	if tr := toolResults(reqs[0]); len(tr) != 1 || tr[0].Content != "echo: ping" || tr[0].ToolCallID != callID {
		t.Errorf("the backup received tool results %s, want the echo for %s", dump(tr), callID)
	}
	if reqs[0].System != first.System {
		t.Errorf("the system prompt changed with the provider")
	}
}

func TestASessionWhoseContextIsAlreadyDoneCallsNoModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := h.runCtx(ctx, "Answer.")
	wantReport(t, res, StatusFailure, SourceSynthetic)
	if !errors.Is(res.Err, context.Canceled) {
		t.Errorf("Err = %v", res.Err)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("%d model calls", n)
	}
	wantTurns(t, res, 0)
}

// inUserTurns reports whether text reached the model in a user turn.
func inUserTurns(rec *llmtest.Recorded, text string) bool {
	for _, m := range rec.Messages {
		if m.Role == llm.RoleUser && strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}
