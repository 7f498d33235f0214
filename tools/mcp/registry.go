package mcp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/tools"
)

// Options tune a Registry. The zero value works.
type Options struct {
	Log *zap.Logger // nil logs nothing
	// InitConcurrency is how many servers start at once (default 4).
	InitConcurrency int
	// Backoff are the waits before each restart of a failed server, the
	// last repeating (nil: 0, 1, 2, 5, 10, 30 and 60 seconds).
	Backoff []time.Duration
	// ProbeInterval is how often a running server's health is checked
	// (default 30s).
	ProbeInterval time.Duration
	// Elicitation declares the elicitation capability (form mode) to every
	// server: set it only when the sessions have a front end that can show
	// a form (Slack, a terminal). Each request goes to the elicitor of the
	// call that caused it (tools.WithElicitor); without one it is declined.
	Elicitation bool

	// sleep waits out a restart's backoff, reporting false when ctx ended
	// first; the package's tests watch the waits through it.
	sleep func(ctx context.Context, d time.Duration) bool
}

// defaultBackoff are the restart waits used when Options.Backoff is nil.
var defaultBackoff = []time.Duration{0, time.Second, 2 * time.Second, 5 * time.Second,
	10 * time.Second, 30 * time.Second, 60 * time.Second}

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Registry runs the configured MCP servers, one shared instance each.
type Registry struct {
	opts    Options
	log     *zap.Logger
	sem     chan struct{} // bounds concurrent start attempts
	servers map[string]*server

	mu     sync.Mutex
	closed bool
}

// NewRegistry starts every enabled server in the background, at most
// InitConcurrency at a time, and returns at once. A server that fails to
// start is retried with backoff; it never makes NewRegistry fail. Only a
// server name outside [A-Za-z0-9_-] does.
func NewRegistry(servers map[string]config.MCPServer, o Options) (*Registry, error) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.InitConcurrency <= 0 {
		o.InitConcurrency = config.DefaultMCPInitConcurrency
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = 30 * time.Second
	}
	if o.sleep == nil {
		o.sleep = sleep
	}
	r := &Registry{
		opts:    o,
		log:     o.Log,
		sem:     make(chan struct{}, o.InitConcurrency),
		servers: make(map[string]*server, len(servers)),
	}
	for name, cfg := range servers {
		if !validName.MatchString(name) {
			return nil, fmt.Errorf("MCP server name %q: use only letters, digits, '_' and '-'", name)
		}
		r.servers[name] = newServer(name, cfg, r)
	}
	for _, s := range r.servers {
		if s.cfg.IsEnabled() {
			s.mu.Lock()
			s.startLocked()
			s.mu.Unlock()
		}
	}
	return r, nil
}

func (r *Registry) backoff(attempt int) time.Duration {
	b := r.opts.Backoff
	if len(b) == 0 {
		return 0
	}
	return b[min(attempt, len(b)-1)]
}

// Acquire returns a handle on server name's shared instance, starting it
// again if every earlier handle was released. Close the handle to release
// it; the server stops with its last handle.
func (r *Registry) Acquire(name string) (tools.Provider, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("the MCP registry is closed")
	}
	s, ok := r.servers[name]
	if !ok {
		return nil, fmt.Errorf("no MCP server named %q is configured", name)
	}
	if !s.cfg.IsEnabled() {
		return nil, fmt.Errorf("MCP server %q is disabled", name)
	}
	s.mu.Lock()
	s.refs++
	s.startLocked()
	s.mu.Unlock()
	return &handle{s: s}, nil
}

// release drops one reference and stops the server with the last. The
// registry stays locked until the server is down, so that an Acquire
// racing with it starts a fresh instance rather than overlapping the old.
func (r *Registry) release(s *server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.mu.Lock()
	s.refs--
	last := s.refs <= 0
	s.mu.Unlock()
	if last {
		s.stop()
	}
}

// Providers acquires a handle on every enabled server, sorted by name.
func (r *Registry) Providers() []tools.Provider {
	names := make([]string, 0, len(r.servers))
	for name, s := range r.servers {
		if s.cfg.IsEnabled() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := make([]tools.Provider, 0, len(names))
	for _, name := range names {
		if p, err := r.Acquire(name); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Down returns, sorted, the names of the enabled servers that are not
// connected now: starting, restarting after a failure, or stopped. The
// readiness check reports them.
func (r *Registry) Down() []string {
	var down []string
	for name, s := range r.servers {
		if !s.cfg.IsEnabled() {
			continue
		}
		s.mu.Lock()
		up := s.phase == phaseConnected
		s.mu.Unlock()
		if !up {
			down = append(down, name)
		}
	}
	sort.Strings(down)
	return down
}

// Close stops every server and kills their process groups. It is safe to
// call more than once and from a signal handler's goroutine.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range r.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop()
		}()
	}
	wg.Wait()
	return nil
}
