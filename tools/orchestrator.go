package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Options tune an Orchestrator.
type Options struct {
	// Timeout bounds a call when the caller gives none (0: no bound).
	Timeout time.Duration
	// MaxResultBytes is the size above which a result is handed to
	// Oversize (0: no cap).
	MaxResultBytes int
	// Oversize replaces an oversized result. The tool_output store plugs in
	// here; the default keeps the head and tail of the text (Truncate).
	Oversize OversizeFunc
}

// OversizeFunc decides what the model sees instead of an oversized result.
type OversizeFunc func(ctx context.Context, call Call, res Result) Result

// Failure says why a call did not produce a tool's own result.
type Failure string

// Failures. The empty Failure means the tool ran (its Result may still be
// an IsError result of the tool's own making).
const (
	FailUnknownTool Failure = "unknown_tool"
	FailBadJSON     Failure = "malformed_arguments"
	FailInvalidArgs Failure = "invalid_arguments"
	FailTimeout     Failure = "timeout"
	FailCanceled    Failure = "canceled"
	FailError       Failure = "error" // the provider returned an error
	FailPanic       Failure = "panic"
)

// Outcome is the full story of one Execute.
type Outcome struct {
	Result
	Namespace string
	Failure   Failure
	Latency   time.Duration
	// Oversize is set when the result went through the Oversize hook;
	// OriginalBytes is then the size the tool produced.
	Oversize      bool
	OriginalBytes int
	// Err is the underlying error of a failed call, for logs only: the
	// model sees Content.
	Err error
}

// OK reports whether the tool ran and did not report an error.
func (o *Outcome) OK() bool { return o.Failure == "" && !o.IsError }

type entry struct {
	tool     Tool
	provider Provider
	schema   *Schema
}

// Orchestrator routes calls to providers. It is immutable once built and
// safe for concurrent use; With derives one with more providers, which is
// how a session adds its own built-in tools to the shared ones.
type Orchestrator struct {
	opts    Options
	entries map[string]*entry
	tools   []Tool // sorted by name
}

// New lists the tools of every provider and compiles their schemas. Two
// providers offering the same name is an error: the model could not tell
// them apart.
func New(ctx context.Context, opts Options, providers ...Provider) (*Orchestrator, error) {
	if opts.Oversize == nil {
		opts.Oversize = Truncate(opts.MaxResultBytes)
	}
	o := &Orchestrator{opts: opts, entries: map[string]*entry{}}
	return o, o.add(ctx, providers)
}

// With returns an Orchestrator with the tools of o plus those of providers.
// Schemas already compiled in o are shared, not recompiled.
func (o *Orchestrator) With(ctx context.Context, providers ...Provider) (*Orchestrator, error) {
	n := &Orchestrator{opts: o.opts, entries: make(map[string]*entry, len(o.entries)+8)}
	for k, v := range o.entries {
		n.entries[k] = v
	}
	n.tools = append(make([]Tool, 0, len(o.tools)+8), o.tools...)
	return n, n.add(ctx, providers)
}

func (o *Orchestrator) add(ctx context.Context, providers []Provider) error {
	var errs []error
	for _, p := range providers {
		list, err := p.Tools(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("tools of %s: %w", p.Namespace(), err))
			continue
		}
		for _, t := range list {
			if prev, dup := o.entries[t.Name]; dup {
				errs = append(errs, fmt.Errorf("tool %q is offered by both %s and %s", t.Name, prev.provider.Namespace(), p.Namespace()))
				continue
			}
			s, err := CompileSchema(t.Schema)
			if err != nil {
				errs = append(errs, fmt.Errorf("tool %q: %w", t.Name, err))
				continue
			}
			o.entries[t.Name] = &entry{tool: t, provider: p, schema: s}
			o.tools = append(o.tools, t)
		}
	}
	sort.Slice(o.tools, func(i, j int) bool { return o.tools[i].Name < o.tools[j].Name })
	return errors.Join(errs...)
}

// Tools lists every tool, sorted by name. The slice must not be modified.
func (o *Orchestrator) Tools() []Tool { return o.tools }

// Tool returns the tool called name.
func (o *Orchestrator) Tool(name string) (Tool, bool) {
	e, ok := o.entries[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Execute runs one call: it checks that the tool exists, that args is a
// JSON object matching the tool's schema, runs the provider within timeout
// (or Options.Timeout when 0), and applies the size cap. Every failure
// becomes an Outcome whose Content tells the model what went wrong and how
// to fix it; Execute itself never fails and never panics.
func (o *Orchestrator) Execute(ctx context.Context, id, name, args string, timeout time.Duration) Outcome {
	start := time.Now()
	out := o.execute(ctx, id, name, args, timeout)
	out.Latency = time.Since(start)
	return out
}

func (o *Orchestrator) execute(ctx context.Context, id, name, args string, timeout time.Duration) Outcome {
	e, ok := o.entries[name]
	if !ok {
		return failed(FailUnknownTool, "", UnknownToolMessage(name, o.tools, nil))
	}
	ns := e.provider.Namespace()
	raw, msg := ParseArguments(name, args, e.schema)
	if msg != "" {
		f := FailInvalidArgs
		if raw == nil {
			f = FailBadJSON
		}
		return failed(f, ns, msg)
	}
	if timeout <= 0 {
		timeout = o.opts.Timeout
	}
	call := Call{ID: id, Name: name, Arguments: raw}
	r := run(ctx, e.provider, call, timeout)
	out := Outcome{Result: r.res, Namespace: ns, Failure: r.f, Err: r.err}
	if max := o.opts.MaxResultBytes; max > 0 && len(r.res.Content) > max && r.f == "" {
		out.Oversize, out.OriginalBytes = true, len(r.res.Content)
		out.Result = o.opts.Oversize(ctx, call, r.res)
	}
	return out
}

func failed(f Failure, ns, msg string) Outcome {
	return Outcome{Result: Result{Content: msg, IsError: true}, Namespace: ns, Failure: f}
}

type callResult struct {
	res Result
	f   Failure
	err error
}

// run calls the provider in its own goroutine so that a tool that ignores
// its context still cannot hold the session past the timeout; such a
// goroutine finishes on its own later and its result is dropped.
func run(ctx context.Context, p Provider, call Call, timeout time.Duration) callResult {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	done := make(chan callResult, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				// The model learns that the tool crashed; the stack is for the log.
				done <- callResult{Result{Content: fmt.Sprintf("tool %s crashed: %v", call.Name, r), IsError: true}, FailPanic,
					fmt.Errorf("panic in tool %s: %v\n%s", call.Name, r, debug.Stack())}
			}
		}()
		res, err := p.Call(cctx, call)
		if err != nil {
			done <- errorResult(ctx, cctx, call.Name, timeout, err)
			return
		}
		done <- callResult{res, "", nil}
	}()
	select {
	case r := <-done:
		return r
	case <-cctx.Done():
		return errorResult(ctx, cctx, call.Name, timeout, cctx.Err())
	}
}

// errorResult explains a failed call. ctx is the caller's context and cctx
// the call's own (ctx bounded by the tool's timeout): when the caller's
// deadline passed first, the tool is not blamed for being slow.
func errorResult(ctx, cctx context.Context, name string, timeout time.Duration, err error) callResult {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return callResult{Result{Content: fmt.Sprintf("tool %s was stopped: the time for this request ran out.", name), IsError: true}, FailTimeout, err}
	case ctx.Err() != nil:
		return callResult{Result{Content: fmt.Sprintf("tool %s was cancelled.", name), IsError: true}, FailCanceled, err}
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && timeout > 0:
		return callResult{Result{Content: fmt.Sprintf("tool %s did not answer within %s and was stopped. Try a narrower request, or continue without it.", name, timeout), IsError: true}, FailTimeout, err}
	case cctx.Err() != nil:
		return callResult{Result{Content: fmt.Sprintf("tool %s was cancelled.", name), IsError: true}, FailCanceled, err}
	}
	return callResult{Result{Content: fmt.Sprintf("tool %s failed: %v", name, err), IsError: true}, FailError, err}
}

// ParseArguments decodes a model's raw argument text for tool name and
// checks it against schema. It returns the arguments as compact JSON, or a
// message for the model: with a nil result when the text is not a JSON
// object, with the decoded arguments when they break the schema. An empty
// text means no arguments ("{}").
func ParseArguments(name, args string, schema *Schema) (json.RawMessage, string) {
	text := strings.TrimSpace(args)
	if text == "" {
		text = "{}"
	}
	v, err := DecodeJSON([]byte(text))
	if err != nil {
		return nil, fmt.Sprintf("The arguments for %s are not valid JSON (%v). You sent: %s\nSend a single JSON object that matches the tool's input schema.", name, err, Snippet(args, 300))
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Sprintf("The arguments for %s must be a JSON object, not %s. You sent: %s", name, jsonKind(v), Snippet(args, 300))
	}
	raw := json.RawMessage(text)
	if err := schema.Validate(v); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return raw, fmt.Sprintf("The arguments for %s do not match its input schema:\n- %s\nFix these and call the tool again.", name, strings.Join(ve.Problems, "\n- "))
		}
		return raw, fmt.Sprintf("The arguments for %s could not be checked: %v", name, err)
	}
	return raw, ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// UnknownToolMessage tells the model that name is not a tool it may call
// and lists the names it may use (allowed filters tools when non-nil).
func UnknownToolMessage(name string, tools []Tool, allowed func(string) bool) string {
	var names []string
	for _, t := range tools {
		if allowed == nil || allowed(t.Name) {
			names = append(names, t.Name)
		}
	}
	const most = 40
	more := ""
	if len(names) > most {
		more = fmt.Sprintf(" (and %d more)", len(names)-most)
		names = names[:most]
	}
	return fmt.Sprintf("There is no tool named %q. Available tools: %s%s.", Snippet(name, 100), strings.Join(names, ", "), more)
}

// Snippet shortens s to at most n bytes on a rune boundary, marking a cut.
func Snippet(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d more bytes]", len(s)-cut)
}

// Truncate is the default OversizeFunc: it keeps the start and the end of
// the text within max bytes and says how much was cut. The tool_output
// store replaces it with handles to the whole text.
func Truncate(max int) OversizeFunc {
	return func(_ context.Context, call Call, res Result) Result {
		if max <= 0 || len(res.Content) <= max {
			return res
		}
		note := fmt.Sprintf("\n\n[… %s returned %d bytes; %d bytes in the middle were cut to fit …]\n\n", call.Name, len(res.Content), len(res.Content)-max)
		keep := max - len(note)
		if keep < 0 {
			keep = 0
		}
		head := keep * 2 / 3
		tail := keep - head
		for head > 0 && !utf8.RuneStart(res.Content[head]) {
			head--
		}
		t := len(res.Content) - tail
		for t < len(res.Content) && !utf8.RuneStart(res.Content[t]) {
			t++
		}
		res.Content = res.Content[:head] + note + res.Content[t:]
		return res
	}
}
