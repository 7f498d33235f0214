package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// testProvider is a real Provider whose tools do what their names say.
type testProvider struct {
	Base
	ns      string
	tools   []Tool
	release chan struct{} // "hang" waits on it, ignoring its context
}

func (p *testProvider) Namespace() string                     { return p.ns }
func (p *testProvider) Tools(context.Context) ([]Tool, error) { return p.tools, nil }

func (p *testProvider) Call(ctx context.Context, c Call) (Result, error) {
	switch strings.TrimPrefix(c.Name, p.ns+Separator) {
	case "echo":
		var a struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c.Arguments, &a); err != nil {
			return Result{}, err
		}
		return Result{Content: a.Text}, nil
	case "hang":
		<-p.release
		return Result{Content: "late"}, nil
	case "wait":
		<-ctx.Done()
		return Result{}, ctx.Err()
	case "panic":
		panic("boom")
	case "fail":
		return Result{}, errors.New("backend unavailable")
	case "big":
		return Result{Content: "HEAD" + strings.Repeat("x", 5000) + "TAIL"}, nil
	case "stop":
		return Result{Content: "all done", Terminate: true}, nil
	}
	return Result{}, errors.New("no such behaviour")
}

var echoSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","minimum":1}},"required":["text"],"additionalProperties":false}`)

func newTestProvider(ns string, names ...string) *testProvider {
	p := &testProvider{ns: ns, release: make(chan struct{})}
	for _, n := range names {
		t := Tool{Name: Name(ns, n), Description: n}
		if n == "echo" {
			t.Schema = echoSchema
		}
		p.tools = append(p.tools, t)
	}
	return p
}

func newOrch(t *testing.T, opts Options, ps ...Provider) *Orchestrator {
	t.Helper()
	return New(context.Background(), opts, ps...)
}

// executeWatchdog bounds how long a test waits for Execute: should the
// timeout ever fail to cut off a tool that ignores its context, the test
// fails in seconds instead of hanging the suite.
const executeWatchdog = 10 * time.Second

// execute runs o.Execute and fails the test if it does not return in time.
func execute(t *testing.T, o *Orchestrator, ctx context.Context, tool, args string) Outcome {
	t.Helper()
	done := make(chan Outcome, 1)
	go func() { done <- o.Execute(ctx, "id1", tool, args, 0) }()
	select {
	case out := <-done:
		return out
	case <-time.After(executeWatchdog):
		t.Fatalf("Execute(%s) did not return within %s: a tool outlived its timeout", tool, executeWatchdog)
		return Outcome{}
	}
}

func TestExecuteReportsEveryFailureToTheModel(t *testing.T) {
	t.Parallel()
	p := newTestProvider("t", "echo", "hang", "wait", "panic", "fail", "stop")
	t.Cleanup(func() { close(p.release) })
	o := newOrch(t, Options{Timeout: 50 * time.Millisecond}, p)
	cases := []struct {
		name, tool, args string
		failure          Failure
		isError          bool
		want             []string
	}{
		{"valid arguments reach the tool", "t__echo", `{"text":"hello"}`, "", false, []string{"hello"}},
		{"empty arguments count as an empty object", "t__echo", ``, FailInvalidArgs, true, []string{"missing property", "text"}},
		{"malformed JSON is explained with what was sent", "t__echo", `{"text": "hi"`, FailBadJSON, true, []string{"not valid JSON", `{"text": "hi"`}},
		{"trailing data is malformed", "t__echo", `{"text":"a"} {"text":"b"}`, FailBadJSON, true, []string{"not valid JSON"}},
		{"an array is not an object", "t__echo", `["hi"]`, FailBadJSON, true, []string{"must be a JSON object, not an array"}},
		{"schema violations are listed by path", "t__echo", `{"text":1,"n":0,"x":true}`, FailInvalidArgs, true, []string{"at /text", "at /n", "additional properties"}},
		{"an unknown tool lists the tools", "t__nope", `{}`, FailUnknownTool, true, []string{`no tool named "t__nope"`, "t__echo", "t__fail"}},
		{"a tool ignoring its context is stopped at the timeout", "t__hang", `{}`, FailTimeout, true, []string{"did not answer within 50ms"}},
		{"a tool honouring its context is stopped at the timeout", "t__wait", `{}`, FailTimeout, true, []string{"did not answer within"}},
		{"a panic becomes a crash message", "t__panic", `{}`, FailPanic, true, []string{"crashed: boom"}},
		{"a provider error is passed on", "t__fail", `{}`, FailError, true, []string{"failed: backend unavailable"}},
		{"a terminate result is kept", "t__stop", `{}`, "", false, []string{"all done"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := execute(t, o, context.Background(), tc.tool, tc.args)
			if out.Failure != tc.failure || out.IsError != tc.isError {
				t.Fatalf("failure=%q isError=%v, want %q %v; content: %s", out.Failure, out.IsError, tc.failure, tc.isError, out.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.Content, w) {
					t.Errorf("content %q lacks %q", out.Content, w)
				}
			}
			if tc.failure == FailPanic && (out.Err == nil || !strings.Contains(out.Err.Error(), "goroutine")) {
				t.Errorf("a panic's stack should reach Err for the log, got %v", out.Err)
			}
			if tc.tool == "t__stop" && !out.Terminate {
				t.Error("Terminate was lost")
			}
		})
	}
}

func TestExecuteStopsWhenTheCallerCancels(t *testing.T) {
	t.Parallel()
	p := newTestProvider("t", "wait")
	o := newOrch(t, Options{}, p)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome)
	go func() { done <- o.Execute(ctx, "1", "t__wait", "{}", 0) }()
	cancel()
	out := <-done
	if out.Failure != FailCanceled || !strings.Contains(out.Content, "cancelled") {
		t.Fatalf("got %q: %s", out.Failure, out.Content)
	}
}

func TestOversizedResultsGoThroughTheHook(t *testing.T) {
	t.Parallel()
	t.Run("the default keeps head and tail within the cap", func(t *testing.T) {
		o := newOrch(t, Options{MaxResultBytes: 1000}, newTestProvider("t", "big"))
		out := o.Execute(context.Background(), "1", "t__big", "{}", 0)
		if !out.Oversize || out.OriginalBytes != 5008 {
			t.Fatalf("oversize=%v original=%d", out.Oversize, out.OriginalBytes)
		}
		if len(out.Content) > 1000 || !strings.HasPrefix(out.Content, "HEAD") || !strings.HasSuffix(out.Content, "TAIL") ||
			!strings.Contains(out.Content, "returned 5008 bytes") {
			t.Fatalf("bad truncation (%d bytes): %.200s", len(out.Content), out.Content)
		}
	})
	t.Run("a custom hook replaces the result", func(t *testing.T) {
		var got Call
		o := newOrch(t, Options{MaxResultBytes: 100, Oversize: func(_ context.Context, c Call, r Result) Result {
			got = c
			return Result{Content: "stored behind a handle"}
		}}, newTestProvider("t", "big"))
		out := o.Execute(context.Background(), "7", "t__big", "{}", 0)
		if out.Content != "stored behind a handle" || got.ID != "7" || got.Name != "t__big" {
			t.Fatalf("hook not used: %q %+v", out.Content, got)
		}
	})
	t.Run("small results are untouched", func(t *testing.T) {
		o := newOrch(t, Options{MaxResultBytes: 100}, newTestProvider("t", "echo"))
		out := o.Execute(context.Background(), "1", "t__echo", `{"text":"short"}`, 0)
		if out.Oversize || out.Content != "short" {
			t.Fatalf("got %+v", out)
		}
	})
}

func TestTruncateNeverSplitsARune(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("é", 3000) // 6000 bytes of 2-byte runes
	for max := 300; max < 320; max++ {
		r := Truncate(max)(context.Background(), Call{Name: "x"}, Result{Content: text})
		if !json.Valid([]byte(`"`+strings.ReplaceAll(r.Content, "\n", `\n`)+`"`)) || len(r.Content) > max {
			t.Fatalf("max %d: invalid UTF-8 or too long (%d)", max, len(r.Content))
		}
	}
}

func TestRegistration(t *testing.T) {
	t.Parallel()
	t.Run("a name taken by an earlier provider gets a numeric suffix", func(t *testing.T) {
		log, logs := observedLog()
		o := New(context.Background(), Options{Log: log}, newTestProvider("a", "echo"), &testProvider{ns: "b", tools: []Tool{{Name: "a__echo", Schema: echoSchema}}})
		names := toolNames(o)
		if strings.Join(names, ",") != "a__echo,a__echo_2" {
			t.Fatalf("tools = %v", names)
		}
		// The renamed tool still reaches its own provider under its own name.
		b := o.cat.Load().entries["a__echo_2"]
		if b.provider.Namespace() != "b" || b.call != "a__echo" {
			t.Fatalf("a__echo_2 routes to %s as %s", b.provider.Namespace(), b.call)
		}
		if n := logs.FilterMessage("tool renamed: its name is taken by another tool").Len(); n != 1 {
			t.Fatalf("%d rename warnings", n)
		}
	})
	t.Run("a schema that does not compile leaves the tool out with a warning", func(t *testing.T) {
		log, logs := observedLog()
		o := New(context.Background(), Options{Log: log}, &testProvider{ns: "a", tools: []Tool{
			{Name: "a__x", Schema: json.RawMessage(`{"type":"nonsense"}`)}, {Name: "a__echo", Schema: echoSchema}}})
		if strings.Join(toolNames(o), ",") != "a__echo" {
			t.Fatalf("tools = %v", toolNames(o))
		}
		w := logs.FilterMessage("tool skipped: its input schema does not compile").All()
		if len(w) != 1 || w[0].ContextMap()["tool"] != "a__x" {
			t.Fatalf("warnings = %v", w)
		}
	})
	t.Run("suffixes stay within the longest name a model API accepts", func(t *testing.T) {
		long := strings.Repeat("n", maxNameLen)
		got := Disambiguate(long, func(n string) bool { return n == long })
		if len(got) != maxNameLen || !strings.HasSuffix(got, "_2") {
			t.Fatalf("got %q (%d)", got, len(got))
		}
	})
}

func TestNameSanitisesAndTruncates(t *testing.T) {
	t.Parallel()
	cases := map[[2]string]string{
		{"github", "search_code"}:       "github__search_code",
		{"my server", "get.file"}:       "my_server__get_file",
		{"fs", "read-file"}:             "fs__read-file",
		{"ns", strings.Repeat("a", 80)}: "ns__" + strings.Repeat("a", 60),
	}
	for in, want := range cases {
		if got := Name(in[0], in[1]); got != want {
			t.Errorf("Name(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

func TestSnippetCutsOnRuneBoundaries(t *testing.T) {
	t.Parallel()
	if got := Snippet("héllo", 2); got != "h… [5 more bytes]" {
		t.Fatalf("got %q", got)
	}
	if got := Snippet("short", 10); got != "short" {
		t.Fatalf("got %q", got)
	}
}

func toolNames(o *Orchestrator) []string {
	var names []string
	for _, t := range o.Tools() {
		names = append(names, t.Name)
	}
	return names
}

// observedLog is a debug-level logger whose lines a test can read back.
func observedLog() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

func TestACallersResultPolicyReplacesTheSizeCap(t *testing.T) {
	t.Parallel()
	o := newOrch(t, Options{MaxResultBytes: 100}, newTestProvider("t", "big", "echo"))
	var reasons []string
	policy := &ResultPolicy{
		MaxBytes:      10000,
		TooManyTokens: func(content string) bool { return strings.Contains(content, "many tokens") },
		Oversize: func(_ context.Context, c Call, r Result, reason string) Result {
			reasons = append(reasons, reason+":"+c.Name)
			return Result{Content: "stored"}
		},
	}
	ctx := WithResultPolicy(context.Background(), policy)
	if out := o.Execute(ctx, "1", "t__big", "{}", 0); out.Oversize || len(out.Content) != 5008 {
		t.Fatalf("5008 bytes are within the caller's 10000: oversize=%v len=%d", out.Oversize, len(out.Content))
	}
	policy.MaxBytes = 1000
	if out := o.Execute(ctx, "2", "t__big", "{}", 0); !out.Oversize || out.OversizeReason != "bytes" || out.Content != "stored" || out.OriginalBytes != 5008 {
		t.Fatalf("over the caller's cap: %+v", out)
	}
	if out := o.Execute(ctx, "3", "t__echo", `{"text":"so many tokens"}`, 0); !out.Oversize || out.OversizeReason != "tokens" {
		t.Fatalf("too many tokens for the caller: %+v", out)
	}
	if strings.Join(reasons, ",") != "bytes:t__big,tokens:t__echo" {
		t.Fatalf("reasons = %v", reasons)
	}
}
