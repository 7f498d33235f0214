package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// Options tune a Provider.
type Options struct {
	// Log receives a line for each request that got no answer and for
	// OpenAPI documents that could not be fetched. Nil logs nothing.
	Log *zap.Logger
	// Client sends the requests; nil means a client with bounded dial and
	// TLS handshake times that connects to an internal (loopback,
	// link-local, private) address only for an endpoint whose configured
	// host is one. Either way, a redirect to another host is followed
	// without the configured headers, and a redirect, or a host the model
	// fills in, that names an internal address is refused by name.
	Client *http.Client
	// MaxResponseBytes is the most read from one answer (0: 8 MiB); the
	// model is told when an answer was cut.
	MaxResponseBytes int
}

// DefaultMaxResponseBytes bounds an answer when Options leave it at 0.
const DefaultMaxResponseBytes = 8 << 20

// Provider is the tools.Provider of REST endpoints and OpenAPI operations.
// Its tools are listed from the configuration at once, except those of
// OpenAPI documents given by URL, which arrive when Warmup has fetched them.
type Provider struct {
	tools.Base
	log      *zap.Logger
	client   *http.Client // reaches no internal address (see guard.go)
	open     *http.Client // for endpoints whose configured host is internal
	maxBytes int
	// retry is the first wait before fetching a failed document again; it
	// doubles up to maxRetry.
	retry time.Duration

	fixed  []*endpoint  // rest_tools and file documents, in a stable order
	remote []*remoteDoc // documents given by URL, sorted by key
	set    atomic.Pointer[toolset]

	mu       sync.Mutex // guards onChange, retrying and remoteDoc.endpoints
	onChange func()
	retrying bool
	fetching sync.Mutex // one fetch of the pending documents at a time

	ctx    context.Context // ends at Close: stops retries and calls
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// remoteDoc is an OpenAPI document fetched from a URL.
type remoteDoc struct {
	key       string
	cfg       config.OpenAPI
	endpoints []*endpoint // nil until fetched
}

// toolset is one immutable view of the provider's tools.
type toolset struct {
	tools  []tools.Tool
	byName map[string]*endpoint
}

const maxRetry = 5 * time.Minute

// New builds a Provider from the rest_tools and openapi sections of the
// configuration. OpenAPI documents that are files are read now and New
// fails, naming the key, when one cannot be read or is not OpenAPI 3;
// documents given by http(s) URL are fetched by Warmup.
func New(restTools map[string]config.RestTool, apis map[string]config.OpenAPI, o Options) (*Provider, error) {
	p := &Provider{log: o.Log, client: o.Client, maxBytes: o.MaxResponseBytes, retry: 5 * time.Second}
	if p.log == nil {
		p.log = zap.NewNop()
	}
	p.open = p.client
	if p.client == nil {
		p.client, p.open = defaultClient(false), defaultClient(true)
	}
	p.client, p.open = withRedirectPolicy(p.client), withRedirectPolicy(p.open)
	if p.maxBytes <= 0 {
		p.maxBytes = DefaultMaxResponseBytes
	}
	var errs []error
	for _, name := range sortedKeys(restTools) {
		e, err := restEndpoint(name, restTools[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.fixed = append(p.fixed, e)
	}
	for _, key := range sortedKeys(apis) {
		cfg := apis[key]
		if isURL(cfg.Spec) {
			p.remote = append(p.remote, &remoteDoc{key: key, cfg: cfg})
			continue
		}
		eps, err := loadFile(key, cfg, p.log)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.fixed = append(p.fixed, eps...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.publish()
	return p, nil
}

// Namespace returns "rest".
func (p *Provider) Namespace() string { return Namespace }

// Tools lists the tools as they are now.
func (p *Provider) Tools(context.Context) ([]tools.Tool, error) {
	return p.set.Load().tools, nil
}

// OnToolsChanged registers f, called after a fetched document adds tools.
func (p *Provider) OnToolsChanged(f func()) {
	p.mu.Lock()
	p.onChange = f
	p.mu.Unlock()
}

// Warmup fetches the OpenAPI documents given by URL that are not yet in.
// It returns their errors joined; those documents are fetched again in the
// background, with growing waits, until they load or the provider closes.
func (p *Provider) Warmup(ctx context.Context) error {
	err := p.fetchPending(ctx)
	if err != nil {
		p.mu.Lock()
		start := !p.retrying && p.ctx.Err() == nil
		p.retrying = p.retrying || start
		p.mu.Unlock()
		if start {
			p.wg.Add(1)
			go p.retryLoop()
		}
	}
	return err
}

// fetchPending fetches every document not yet loaded, publishing the new
// tools if any arrived.
func (p *Provider) fetchPending(ctx context.Context) error {
	p.fetching.Lock()
	defer p.fetching.Unlock()
	var errs []error
	added := false
	for _, d := range p.remote {
		p.mu.Lock()
		done := d.endpoints != nil
		p.mu.Unlock()
		if done {
			continue
		}
		eps, err := fetchDoc(withInternalAllowed(ctx, true), p.open, d.key, d.cfg, p.log)
		if err != nil {
			p.log.Warn("openapi document not loaded; its tools are absent until it is",
				zap.String("openapi", d.key), zap.Error(err))
			errs = append(errs, err)
			continue
		}
		p.mu.Lock()
		d.endpoints = eps
		p.mu.Unlock()
		added = true
	}
	if added {
		p.publish()
		p.mu.Lock()
		f := p.onChange
		p.mu.Unlock()
		if f != nil {
			f()
		}
	}
	return errors.Join(errs...)
}

// retryLoop fetches the missing documents again until all are in.
func (p *Provider) retryLoop() {
	defer p.wg.Done()
	wait := p.retry
	for {
		t := time.NewTimer(wait)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
		err := p.fetchPending(ctx)
		cancel()
		if err == nil {
			p.mu.Lock()
			p.retrying = false
			p.mu.Unlock()
			return
		}
		wait = min(wait*2, maxRetry)
	}
}

// publish names every endpoint, keeping names unique, and makes the result
// the current tool list. The order is fixed (rest_tools, then documents by
// key), so a document arriving late cannot rename tools already offered.
func (p *Provider) publish() {
	all := append([]*endpoint(nil), p.fixed...)
	p.mu.Lock()
	for _, d := range p.remote {
		all = append(all, d.endpoints...)
	}
	p.mu.Unlock()
	s := &toolset{byName: make(map[string]*endpoint, len(all))}
	for _, e := range all {
		t := e.tool
		t.Name = tools.Disambiguate(t.Name, func(n string) bool { _, ok := s.byName[n]; return ok })
		s.byName[t.Name] = e
		s.tools = append(s.tools, t)
	}
	p.set.Store(s)
}

// Call sends one request and reads its answer.
func (p *Provider) Call(ctx context.Context, call tools.Call) (tools.Result, error) {
	if p.ctx.Err() != nil {
		return tools.Result{}, errors.New("the REST tools are shut down")
	}
	e := p.set.Load().byName[call.Name]
	if e == nil {
		return tools.Result{}, fmt.Errorf("unknown tool %s", call.Name)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()

	args, err := decodeArgs(call.Arguments)
	if err != nil {
		return tools.Result{Content: err.Error(), IsError: true}, nil
	}
	return p.do(ctx, e, args)
}

// do sends the request of e and reads the answer.
func (p *Provider) do(ctx context.Context, e *endpoint, args map[string]any) (tools.Result, error) {
	sctx := ctx
	var limit time.Duration
	if e.streams != nil && e.streams.Timeout > 0 {
		limit = e.streams.Timeout.D()
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	client := p.client
	if e.mayReachInternal(ctx) {
		client = p.open
		sctx = withInternalAllowed(sctx, true)
	}
	req, err := e.request(sctx, args)
	if err != nil {
		var ae *argError
		if errors.As(err, &ae) {
			return tools.Result{Content: ae.msg, IsError: true}, nil
		}
		return tools.Result{}, llm.RedactedError(fmt.Sprintf("the request to the %s service could not be made", e.service), err)
	}
	if e.hostFromModel() {
		err = checkDestination(sctx, req.URL)
	}
	var resp *http.Response
	if err == nil {
		resp, err = client.Do(req)
	}
	if errors.Is(err, errForbiddenAddress) {
		p.log.Warn("rest request refused: it led to an internal address", zap.String("tool", e.tool.Name),
			zap.String("method", req.Method), zap.String("url", logURL(req.URL)))
		return tools.Result{Content: fmt.Sprintf("The request to the %s service was refused: it led to a loopback, link-local or private address, which this tool may not reach.", e.service), IsError: true}, nil
	}
	if err != nil {
		p.log.Warn("rest request got no answer", zap.String("tool", e.tool.Name),
			zap.String("method", req.Method), zap.String("url", logURL(req.URL)), zap.Error(bareCause(err)))
		if ctx.Err() == nil && sctx.Err() != nil {
			return tools.Result{Content: fmt.Sprintf("The %s service did not start answering within %s.", e.service, limit), IsError: true}, nil
		}
		return tools.Result{}, transportError(e.service, err)
	}
	defer resp.Body.Close()
	if e.streams != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return readStream(ctx, sctx, e.streams, resp.Body, p.maxBytes, limit)
	}
	body, cut, err := readBounded(resp.Body, p.maxBytes)
	if err != nil {
		p.log.Warn("rest answer broke off", zap.String("tool", e.tool.Name),
			zap.String("method", req.Method), zap.String("url", logURL(req.URL)), zap.Error(bareCause(err)))
		return tools.Result{}, transportError(e.service, err)
	}
	return result(resp, body, cut), nil
}

// Close stops background fetches and fails calls made after it.
func (p *Provider) Close() error {
	p.cancel()
	p.wg.Wait()
	return nil
}

// decodeArgs decodes the validated arguments, keeping numbers exact.
func decodeArgs(raw []byte) (map[string]any, error) {
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	v, err := tools.DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the arguments must be a JSON object")
	}
	return m, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
