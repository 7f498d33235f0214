package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/rest"
)

// restPeer serves two REST endpoints over loopback, GET /read and POST
// /write, and counts the writes that reached it.
type restPeer struct {
	mu     sync.Mutex
	writes int
	reads  int
}

func (p *restPeer) Writes() int { p.mu.Lock(); defer p.mu.Unlock(); return p.writes }

// approvalTools are rest__read (GET) and rest__write (POST) under
// approval: writes.
func approvalTools(t *testing.T, peer *restPeer) tools.Provider {
	t.Helper()
	return approvalToolsWith(t, peer, 0)
}

// approvalToolsWith is approvalTools with results cached for cache.
func approvalToolsWith(t *testing.T, peer *restPeer, cache config.Duration) tools.Provider {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer.mu.Lock()
		if r.Method == http.MethodPost {
			peer.writes++
		} else {
			peer.reads++
		}
		peer.mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"method":"`+r.Method+`"}`)
	}))
	t.Cleanup(srv.Close)
	params := map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}}
	policy := config.ApprovalPolicy{Approval: config.ApprovalWrites}
	p, err := rest.New(map[string]config.RestTool{
		"read":  {Description: "Reads things.", Method: "GET", URL: srv.URL + "/read", Parameters: params, ApprovalPolicy: policy},
		"write": {Description: "Writes things.\nMore detail.", Method: "POST", URL: srv.URL + "/write", Parameters: params, ApprovalPolicy: policy, Cache: cache},
	}, nil, rest.Options{Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// terminal is a TerminalApprover whose person types answers into a pipe.
func terminal(t *testing.T) (*TerminalApprover, *io.PipeWriter, *syncBuffer) {
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	out := &syncBuffer{}
	return &TerminalApprover{Lines: Lines(r), Out: out}, w, out
}

func approvalHarness(t *testing.T, peer *restPeer, replies ...llmtest.Reply) *harness {
	h := newHarness(t, withTools(approvalTools(t, peer)), withAgent(func(a *config.Agent) { a.Tools = []string{"rest__*"} }), script(replies...))
	return h
}

// answerOnWait types line at the terminal each time a call waits.
func answerOnWait(h *harness, w io.Writer, lines ...string) {
	var mu sync.Mutex
	h.watch = func(e Event) {
		if e.Kind != EventWaiting {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if len(lines) == 0 {
			return
		}
		line := lines[0]
		lines = lines[1:]
		go func() { _, _ = io.WriteString(w, line+"\n") }()
	}
}

func TestApprovals(t *testing.T) {
	t.Parallel()
	done := llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")

	t.Run("a GET runs at once and a POST runs once the person says yes", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Call("rest__read", `{}`), llmtest.Call("rest__write", `{"title":"x"}`), done)
		ap, w, out := terminal(t)
		h.approver = ap
		answerOnWait(h, w, "y")
		res := h.run("go")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		if peer.Writes() != 1 {
			t.Fatalf("writes %d, want 1", peer.Writes())
		}
		if waits := h.events.ofKind(EventWaiting); len(waits) != 1 || waits[0].Wait.What != "approval of rest write" {
			t.Fatalf("waits %s", dump(waits))
		}
		resumed := h.events.ofKind(EventResumed)
		if len(resumed) != 1 || resumed[0].Wait.Outcome != OutcomeApproved {
			t.Fatalf("resumed %s", dump(resumed))
		}
		if !strings.Contains(out.String(), "rest__write (rest write): Writes things.") || strings.Contains(out.String(), "More detail") {
			t.Fatalf("the terminal showed:\n%s", out.String())
		}
	})

	t.Run("a denied call is not run, the model is told, and the same call is refused without asking", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Call("rest__write", `{"title":"x"}`), llmtest.Call("rest__write", `{ "title" : "x" }`), done)
		ap, w, _ := terminal(t)
		h.approver = ap
		answerOnWait(h, w, "n")
		res := h.run("go")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		reqs := h.wantRequests(3)
		if got := lastToolResult(t, reqs[1]); got != deniedMessage {
			t.Fatalf("after the denial the model read %q", got)
		}
		if got := lastToolResult(t, reqs[2]); got != deniedAgainMsg {
			t.Fatalf("after the retry the model read %q", got)
		}
		if peer.Writes() != 0 || len(h.events.ofKind(EventWaiting)) != 1 {
			t.Fatalf("writes %d, waits %d", peer.Writes(), len(h.events.ofKind(EventWaiting)))
		}
	})

	t.Run("without an approver a call that needs approval is denied with the reason", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Call("rest__write", `{}`), done)
		h.run("go")
		if got := lastToolResult(t, h.wantRequests(2)[1]); got != noApproverMsg || peer.Writes() != 0 {
			t.Fatalf("model read %q, writes %d", got, peer.Writes())
		}
	})

	t.Run("without a terminal --approve's globs run and the rest are denied, saying why", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Calls(tc("rest__write", `{"title":"a"}`)), done)
		h.approver = &TerminalApprover{}
		h.run("go")
		if got := lastToolResult(t, h.wantRequests(2)[1]); !strings.Contains(got, "there is no terminal to ask on") || peer.Writes() != 0 {
			t.Fatalf("model read %q, writes %d", got, peer.Writes())
		}
		peer2 := &restPeer{}
		h2 := approvalHarness(t, peer2, llmtest.Call("rest__write", `{}`), done)
		h2.approver = &TerminalApprover{Allow: []string{"rest__w*"}}
		h2.run("go")
		if peer2.Writes() != 1 || len(h2.events.ofKind(EventWaiting)) != 0 {
			t.Fatalf("an --approve'd tool: writes %d, waits %d", peer2.Writes(), len(h2.events.ofKind(EventWaiting)))
		}
	})

	t.Run("no answer within approval_timeout is a denial", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Call("rest__write", `{}`), done)
		ap, _, _ := terminal(t)
		h.approver = ap
		h.runner.ApprovalTimeout = 50 * time.Millisecond
		h.run("go")
		if got := lastToolResult(t, h.wantRequests(2)[1]); got != timedOutMessage || peer.Writes() != 0 {
			t.Fatalf("model read %q, writes %d", got, peer.Writes())
		}
		if r := h.events.ofKind(EventResumed); len(r) != 1 || r[0].Wait.Outcome != OutcomeTimedOut {
			t.Fatalf("resumed %s", dump(r))
		}
	})

	t.Run("two calls of one turn are asked together and decided one by one", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Calls(tc("rest__write", `{"title":"a"}`), tc("rest__write", `{"title":"b"}`), tc("rest__read", `{}`)), done)
		ap, w, _ := terminal(t)
		h.approver = ap
		var mu sync.Mutex
		var kinds []EventKind
		h.watch = func(e Event) {
			if e.Kind == EventWaiting || e.Kind == EventResumed {
				mu.Lock()
				kinds = append(kinds, e.Kind)
				if len(kinds) == 2 {
					go func() { _, _ = io.WriteString(w, "y\nn\n") }()
				}
				mu.Unlock()
			}
		}
		h.run("go")
		if peer.Writes() != 1 {
			t.Fatalf("writes %d, want 1", peer.Writes())
		}
		mu.Lock()
		defer mu.Unlock()
		if len(kinds) != 4 || kinds[0] != EventWaiting || kinds[1] != EventWaiting {
			t.Fatalf("events %v: both calls should wait before either is decided", kinds)
		}
		res := toolResults(h.wantRequests(2)[1])
		if len(res) != 3 || res[1].Content != deniedMessage || res[0].IsError || res[2].IsError {
			t.Fatalf("results %s", dump(res))
		}
	})

	t.Run("a, for the rest of the run, approves later calls of the tool without asking", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Call("rest__write", `{"title":"a"}`), llmtest.Call("rest__write", `{"title":"b"}`), done)
		ap, w, _ := terminal(t)
		h.approver = ap
		answerOnWait(h, w, "a")
		h.run("go")
		if peer.Writes() != 2 || len(h.events.ofKind(EventWaiting)) != 1 {
			t.Fatalf("writes %d, waits %d", peer.Writes(), len(h.events.ofKind(EventWaiting)))
		}
	})

	t.Run("the time waited does not count against max_session_duration", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer, llmtest.Call("rest__write", `{}`), done)
		limit := 400 * time.Millisecond
		h.agent.MaxSessionDuration = config.Duration(limit)
		ap, w, _ := terminal(t)
		h.approver = ap
		h.watch = func(e Event) {
			if e.Kind == EventWaiting {
				go func() {
					time.Sleep(2 * limit) // the person takes longer than the whole session may
					_, _ = io.WriteString(w, "y\n")
				}()
			}
		}
		res := h.run("go")
		wantReport(t, res, StatusSuccess, SourceToolCall)
		if peer.Writes() != 1 {
			t.Fatalf("writes %d: the wait ran out the session's clock", peer.Writes())
		}
	})

	t.Run("a sub-agent's calls are asked through the same approver", func(t *testing.T) {
		t.Parallel()
		peer := &restPeer{}
		h := approvalHarness(t, peer,
			llmtest.Call("agent__helper", `{"prompt":"write it"}`),
			llmtest.Call("rest__write", `{}`),
			llmtest.Report(config.FormatSubAgent, StatusSuccess, "written"),
			done)
		helper := testAgent()
		helper.Name, helper.Tools = "helper", []string{"rest__*"}
		h.agent.Agents = []string{"helper"}
		h.runner.Agents = map[string]*config.Agent{"helper": helper}
		ap, w, _ := terminal(t)
		h.approver = ap
		answerOnWait(h, w, "n")
		h.run("go")
		if peer.Writes() != 0 || len(h.events.ofKind(EventWaiting)) != 1 {
			t.Fatalf("writes %d, waits %d", peer.Writes(), len(h.events.ofKind(EventWaiting)))
		}
	})
}

func TestShowArgumentsKeepsArgumentsInert(t *testing.T) {
	t.Parallel()
	got := ShowArguments(`{"title":"<!channel> see https://evil.example","token":"abc","auth":{"password":"p"},"body":"`+strings.Repeat("x", 50)+`","key":"xoxb-1234567890-abcdefghij"}`, 20)
	for _, bad := range []string{`"abc"`, `"p"`, "xoxb-1234567890", strings.Repeat("x", 21)} {
		if strings.Contains(got, bad) {
			t.Errorf("shown arguments hold %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "(30 more characters)") || !strings.Contains(got, "\n  ") {
		t.Errorf("not indented or not shortened:\n%s", got)
	}
}

// A tool that waits on a person while it runs (as an MCP elicitation
// does) stops the session's clock through the call's tools.Waiter, and
// the wait is shown as waiting and resumed events.
func TestAWaitInsideACallStopsTheSessionsClock(t *testing.T) {
	t.Parallel()
	limit := 400 * time.Millisecond
	asking := fn{anyArgs, func(ctx context.Context, _ map[string]any) (tools.Result, error) {
		w := tools.WaiterFrom(ctx)
		if w == nil {
			return tools.Result{Content: "no waiter", IsError: true}, nil
		}
		done := w.Waiting("input for test ask", []string{"U1"})
		select {
		case <-time.After(2 * limit): // the person takes longer than the whole session may
		case <-ctx.Done():
			done("cancelled")
			return tools.Result{}, ctx.Err()
		}
		done("answered")
		return tools.Result{Content: "the person said yes"}, nil
	}}
	h := newHarness(t, withTools(toolbox{"ask": asking}), script(llmtest.Call("test__ask", `{}`),
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "Done.")))
	h.agent.MaxSessionDuration = config.Duration(limit)
	res := h.run("go")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if got := lastToolResult(t, h.wantRequests(2)[1]); got != "the person said yes" {
		t.Fatalf("the model read %q", got)
	}
	w, r := h.events.ofKind(EventWaiting), h.events.ofKind(EventResumed)
	if len(w) != 1 || len(r) != 1 || w[0].Wait.ID != r[0].Wait.ID || r[0].Wait.Outcome != "answered" || w[0].Wait.What != "input for test ask" {
		t.Fatalf("waits %s, resumed %s", dump(w), dump(r))
	}
}
