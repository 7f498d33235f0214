package tools

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// funcProvider is a Provider whose tools all run one function, and whose
// tool list can change while it runs, announced like an MCP server's.
type funcProvider struct {
	Base
	ns   string
	call func(ctx context.Context, c Call) (Result, error)

	mu       sync.Mutex
	tools    []Tool
	changed  func()
	instr    string
	calls    atomic.Int64
	closed   atomic.Bool
	warmErr  error
	warmedUp atomic.Bool
}

func (p *funcProvider) Namespace() string { return p.ns }

func (p *funcProvider) Tools(context.Context) ([]Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Tool(nil), p.tools...), nil
}

func (p *funcProvider) Call(ctx context.Context, c Call) (Result, error) {
	p.calls.Add(1)
	return p.call(ctx, c)
}

func (p *funcProvider) Instructions() string { return p.instr }

func (p *funcProvider) Warmup(context.Context) error {
	p.warmedUp.Store(true)
	return p.warmErr
}

func (p *funcProvider) Close() error {
	p.closed.Store(true)
	return nil
}

func (p *funcProvider) OnToolsChanged(f func()) {
	p.mu.Lock()
	p.changed = f
	p.mu.Unlock()
}

// setTools replaces the tool list and announces the change.
func (p *funcProvider) setTools(ts ...Tool) {
	p.mu.Lock()
	p.tools = ts
	f := p.changed
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

// echoArgs answers with the arguments it received.
func echoArgs(_ context.Context, c Call) (Result, error) {
	return Result{Content: string(c.Arguments)}, nil
}

var anyObject = json.RawMessage(`{"type":"object"}`)
