package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
)

// Options tune an Orchestrator.
type Options struct {
	// Timeout bounds a call when neither the tool nor the caller gives one
	// (0: no bound).
	Timeout time.Duration
	// MaxResultBytes is the size above which a result is handed to
	// Oversize (0: no cap).
	MaxResultBytes int
	// Oversize replaces an oversized result. The tool_output store plugs in
	// here; the default keeps the head and tail of the text (Truncate).
	Oversize OversizeFunc
	// Queues are the named queues tools may wait in, with how many of
	// their calls run at once.
	Queues map[string]int
	// CacheEntries and CacheBytes bound the response cache (0: the
	// defaults, defaultCacheEntries and defaultCacheBytes).
	CacheEntries int
	CacheBytes   int
	// Log receives a warning for each tool left out or renamed, and the
	// request and response lines of calls whose context carries no logger
	// (see WithLogger). Nil logs nothing.
	Log *zap.Logger
	// Now overrides the clock of the cache (tests).
	Now func() time.Time
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
	FailClosed      Failure = "closed" // the orchestrator was shut down
)

// Outcome is the full story of one Execute.
type Outcome struct {
	Result
	Namespace string
	// Remote is the tool as its source knows it, "namespace:tool".
	Remote  string
	Failure Failure
	Latency time.Duration
	// Queue is the queue the call waited in ("" for none) and QueueWait
	// how long it waited for its slot.
	Queue     string
	QueueWait time.Duration
	// Cached is set when the result came from the response cache.
	Cached bool
	// Oversize is set when the result went through the Oversize hook;
	// OriginalBytes is then the size the tool produced, and OversizeReason
	// says why: "bytes" (over the size cap) or "tokens" (more than the
	// caller's context has room for).
	Oversize       bool
	OriginalBytes  int
	OversizeReason string
	// Err is the underlying error of a failed call, for logs only: the
	// model sees Content.
	Err error
}

// OK reports whether the tool ran and did not report an error.
func (o *Outcome) OK() bool { return o.Failure == "" && !o.IsError }

var errClosed = errors.New("the tools are shutting down")

// Orchestrator routes calls to providers. It is safe for concurrent use and
// meant to be shared by every session: queues and the response cache are
// process-wide. Its tool list follows the providers' (see Notifier); each
// change makes a new generation.
type Orchestrator struct {
	opts      Options
	log       *zap.Logger
	providers []Provider
	queues    map[string]*queue
	cache     *resultCache

	cat     atomic.Pointer[catalog]
	mu      sync.Mutex         // guards schemas and serialises rebuilds
	schemas map[string]*Schema // compiled, by document, for rebuilds
	rebuild sync.Mutex

	stop      chan struct{} // closed by Cancel
	stopOnce  sync.Once
	closeOnce sync.Once
}

// New lists the tools of every provider and compiles their schemas. It
// does not fail: a provider that cannot list its tools yet, or a tool whose
// schema does not compile, is logged and left out, and a name taken by an
// earlier provider gets a numeric suffix. Providers that implement Notifier
// bring their changes in as they happen.
func New(ctx context.Context, opts Options, providers ...Provider) *Orchestrator {
	if opts.Oversize == nil {
		opts.Oversize = Truncate(opts.MaxResultBytes)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	o := &Orchestrator{
		opts:      opts,
		log:       opts.Log,
		providers: slices.Clone(providers),
		queues:    make(map[string]*queue, len(opts.Queues)),
		cache:     newResultCache(opts.CacheEntries, opts.CacheBytes, opts.Now),
		schemas:   map[string]*Schema{},
		stop:      make(chan struct{}),
	}
	if o.log == nil {
		o.log = zap.NewNop()
	}
	for name, n := range opts.Queues {
		o.queues[name] = newQueue(name, n)
	}
	o.cat.Store(o.build(ctx, 1))
	for _, p := range o.providers {
		if n, ok := p.(Notifier); ok {
			n.OnToolsChanged(o.Refresh)
		}
	}
	return o
}

// Refresh lists the providers' tools again and makes them the current
// generation. Providers that implement Notifier trigger it themselves.
func (o *Orchestrator) Refresh() {
	o.rebuild.Lock()
	defer o.rebuild.Unlock()
	select {
	case <-o.stop:
		return
	default:
	}
	// Listing is local for our providers (they keep their lists), so a
	// short bound only guards against a provider that would block.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o.cat.Store(o.build(ctx, o.cat.Load().gen+1))
}

// Generation numbers the current tool list; it grows with each change, so
// a caller caching what it derived from Tools knows when to derive again.
func (o *Orchestrator) Generation() uint64 { return o.cat.Load().gen }

// Tools lists every tool, sorted by name. The slice must not be modified.
func (o *Orchestrator) Tools() []Tool { return o.cat.Load().tools }

// Tool returns the tool called name.
func (o *Orchestrator) Tool(name string) (Tool, bool) {
	e, ok := o.cat.Load().entries[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Warmup gets every provider ready at once (an MCP server connects and
// lists its tools) and then refreshes the tool list. It returns the
// providers' errors joined; those providers keep trying on their own.
func (o *Orchestrator) Warmup(ctx context.Context) error {
	errs := make([]error, len(o.providers))
	var wg sync.WaitGroup
	for i, p := range o.providers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Warmup(ctx); err != nil {
				errs[i] = fmt.Errorf("%s: %w", p.Namespace(), err)
			}
		}()
	}
	wg.Wait()
	o.Refresh()
	return errors.Join(errs...)
}

// Cancel stops every call: those waiting in a queue and those running end
// at once as cancelled, and later calls are refused. It is how a process
// shutting down lets its sessions finish quickly.
func (o *Orchestrator) Cancel() {
	o.stopOnce.Do(func() { close(o.stop) })
}

// Close cancels every call and closes every provider, returning their
// errors joined. It is safe to call more than once.
func (o *Orchestrator) Close() error {
	o.Cancel()
	var errs []error
	o.closeOnce.Do(func() {
		for _, p := range o.providers {
			if err := p.Close(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", p.Namespace(), err))
			}
		}
	})
	return errors.Join(errs...)
}

// Execute runs one call: it checks that the tool exists and that args is a
// JSON object matching the tool's schema, answers from the cache when it
// can, waits for a slot in the tool's queue, runs the provider within the
// tool's timeout (else timeout, else Options.Timeout), caches a success and
// applies the size cap. Every failure becomes an Outcome whose Content
// tells the model what went wrong and how to fix it; Execute itself never
// fails and never panics. It logs a request line (debug) and a response
// line (info, warn on failure) to the context's logger.
func (o *Orchestrator) Execute(ctx context.Context, id, name, args string, timeout time.Duration) Outcome {
	start := time.Now()
	e := o.cat.Load().entries[name]
	log := o.logger(ctx)
	if e != nil {
		logRequest(log, e, id, args)
	}
	out := o.execute(ctx, e, id, name, args, timeout)
	out.Latency = time.Since(start)
	logResponse(log, e, id, name, len(args), &out)
	return out
}

func (o *Orchestrator) execute(ctx context.Context, e *entry, id, name, args string, timeout time.Duration) Outcome {
	if e == nil {
		return failed(FailUnknownTool, "", UnknownToolMessage(name, o.Tools(), nil))
	}
	ns := e.provider.Namespace()
	raw, v, msg := parseArguments(name, args, e.schema)
	if msg != "" {
		f := FailInvalidArgs
		if raw == nil {
			f = FailBadJSON
		}
		return failed(f, ns, msg)
	}
	out := Outcome{Namespace: ns, Remote: e.remote}
	select {
	case <-o.stop:
		r := closedResult(name)
		out.Result, out.Failure, out.Err = r.res, r.f, r.err
		return out
	default:
	}
	var key string
	if ttl := e.tool.CacheTTL; ttl > 0 {
		key = cacheKey(e.call, raw, v)
		if content, ok := o.cache.get(key); ok {
			out.Content, out.Cached = content, true
			return o.capped(ctx, out, Call{ID: id, Name: name, Arguments: raw})
		}
	}
	if q := e.queue; q != nil {
		out.Queue = q.name
		waited := time.Now()
		err := q.acquire(ctx, o.stop)
		out.QueueWait = time.Since(waited)
		if err != nil {
			r := queueResult(ctx, name, q.name, err)
			out.Result, out.Failure, out.Err = r.res, r.f, r.err
			return out
		}
		defer q.release()
	}
	switch {
	case e.tool.Timeout > 0:
		timeout = e.tool.Timeout
	case timeout <= 0:
		timeout = o.opts.Timeout
	}
	call := Call{ID: id, Name: e.call, Arguments: raw}
	r := run(ctx, o.stop, e.provider, call, name, timeout)
	out.Result, out.Failure, out.Err = r.res, r.f, r.err
	if key != "" && out.OK() && !out.Terminate {
		o.cache.put(key, out.Content, e.tool.CacheTTL)
	}
	if r.f != "" {
		return out
	}
	call.Name = name
	return o.capped(ctx, out, call)
}

// capped hands a result that is too large to the Oversize hook: the
// caller's ResultPolicy when its context carries one, else the
// orchestrator's size cap.
func (o *Orchestrator) capped(ctx context.Context, out Outcome, call Call) Outcome {
	if p, ok := ctx.Value(policyKey{}).(*ResultPolicy); ok && p != nil {
		reason := ""
		switch {
		case p.MaxBytes > 0 && len(out.Content) > p.MaxBytes:
			reason = "bytes"
		case p.TooManyTokens != nil && p.TooManyTokens(out.Content):
			reason = "tokens"
		}
		if reason != "" && p.Oversize != nil {
			out.Oversize, out.OriginalBytes, out.OversizeReason = true, len(out.Content), reason
			out.Result = p.Oversize(ctx, call, out.Result, reason)
		}
		return out
	}
	if max := o.opts.MaxResultBytes; max > 0 && len(out.Content) > max {
		out.Oversize, out.OriginalBytes, out.OversizeReason = true, len(out.Content), "bytes"
		out.Result = o.opts.Oversize(ctx, call, out.Result)
	}
	return out
}

// ResultPolicy is one caller's rule for results too large to hand to its
// model as they are — a session's, which knows its own size cap, how much
// room its context has left, and where it keeps what it cannot show.
type ResultPolicy struct {
	// MaxBytes is the size above which a result is oversized (0: none).
	MaxBytes int
	// TooManyTokens, when set, reports whether a result within MaxBytes
	// would still not fit the caller's context.
	TooManyTokens func(content string) bool
	// Oversize replaces an oversized result; reason is "bytes" or
	// "tokens". call.Name is the name the model used.
	Oversize func(ctx context.Context, call Call, res Result, reason string) Result
}

type policyKey struct{}

// WithResultPolicy returns a context whose calls apply p instead of the
// orchestrator's own size cap.
func WithResultPolicy(ctx context.Context, p *ResultPolicy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
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
func run(ctx context.Context, stop <-chan struct{}, p Provider, call Call, name string, timeout time.Duration) callResult {
	var cctx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		cctx, cancel = withPausableTimeout(ctx, timeout)
	} else {
		cctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	done := doneChans.Get().(chan callResult)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				// The model learns that the tool crashed; the stack is for the log.
				done <- callResult{Result{Content: fmt.Sprintf("tool %s crashed: %v", name, r), IsError: true}, FailPanic,
					fmt.Errorf("panic in tool %s: %v\n%s", name, r, debug.Stack())}
			}
		}()
		res, err := p.Call(cctx, call)
		if err != nil {
			done <- errorResult(ctx, cctx, name, timeout, err)
			return
		}
		done <- callResult{res, "", nil}
	}()
	select {
	case r := <-done:
		// Received, so empty and with no other sender: reusable. A channel
		// abandoned on the paths below may still receive the late result.
		doneChans.Put(done)
		return r
	case <-cctx.Done():
		return errorResult(ctx, cctx, name, timeout, context.Cause(cctx))
	case <-stop:
		cancel()
		return closedResult(name)
	}
}

func closedResult(name string) callResult {
	return callResult{Result{Content: fmt.Sprintf("tool %s was cancelled: the bot is shutting down.", name), IsError: true}, FailClosed, errClosed}
}

var doneChans = sync.Pool{New: func() any { return make(chan callResult, 1) }}

// queueResult explains a call that gave up waiting for its queue.
func queueResult(ctx context.Context, name, queue string, err error) callResult {
	switch {
	case errors.Is(err, errClosed):
		return closedResult(name)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return callResult{Result{Content: fmt.Sprintf("tool %s was stopped while waiting in queue %s: the time for this request ran out.", name, queue), IsError: true}, FailTimeout, err}
	}
	return callResult{Result{Content: fmt.Sprintf("tool %s was cancelled while waiting in queue %s.", name, queue), IsError: true}, FailCanceled, err}
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
	case errors.Is(context.Cause(cctx), context.DeadlineExceeded) && timeout > 0:
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
	raw, _, msg := parseArguments(name, args, schema)
	return raw, msg
}

// parseArguments is ParseArguments that also returns the decoded value.
func parseArguments(name, args string, schema *Schema) (json.RawMessage, any, string) {
	text := strings.TrimSpace(args)
	if text == "" {
		text = "{}"
	}
	raw := json.RawMessage(text)
	var v any
	err := json.Unmarshal(raw, &v)
	if err != nil {
		return nil, nil, fmt.Sprintf("The arguments for %s are not valid JSON (%v). You sent: %s\nSend a single JSON object that matches the tool's input schema.", name, err, Snippet(args, 300))
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, fmt.Sprintf("The arguments for %s must be a JSON object, not %s. You sent: %s", name, jsonKind(v), Snippet(args, 300))
	}
	if err := schema.Validate(v); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return raw, v, fmt.Sprintf("The arguments for %s do not match its input schema:\n- %s\nFix these and call the tool again.", name, strings.Join(ve.Problems, "\n- "))
		}
		return raw, v, fmt.Sprintf("The arguments for %s could not be checked: %v", name, err)
	}
	return raw, v, ""
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
