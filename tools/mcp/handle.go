package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// handle is one reference to a shared server; it is the tools.Provider the
// orchestrator sees.
type handle struct {
	s         *server
	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
}

var (
	_ tools.Provider = (*handle)(nil)
	_ tools.Notifier = (*handle)(nil)
)

// Namespace is the server's name.
func (h *handle) Namespace() string { return h.s.name }

// Tools returns the server's tools as last listed; none while it is down.
func (h *handle) Tools(context.Context) ([]tools.Tool, error) {
	return h.s.tools().list, nil
}

// Instructions are the server's instructions from its initialize answer.
func (h *handle) Instructions() string {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.instr
}

// Warmup waits until the server is connected and its tools listed, or the
// start attempt under way fails; the server keeps being retried after.
func (h *handle) Warmup(ctx context.Context) error { return h.s.awaitReady(ctx) }

// OnToolsChanged registers f to be called after each change of the tool
// list: connected, list_changed, died. It is dropped when the handle closes.
func (h *handle) OnToolsChanged(f func()) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return
	}
	h.s.mu.Lock()
	h.s.listeners[h] = f
	h.s.mu.Unlock()
}

// Close releases the handle; the server stops when its last handle does.
func (h *handle) Close() error {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
		h.s.mu.Lock()
		delete(h.s.listeners, h)
		h.s.mu.Unlock()
		h.s.reg.release(h.s)
	})
	return nil
}

// Call runs one tool on the server. Errors are worded for the model: they
// never carry addresses, paths or transport details, which stay reachable
// through errors.Unwrap for logs.
func (h *handle) Call(ctx context.Context, call tools.Call) (tools.Result, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	s := h.s
	if closed {
		return tools.Result{}, fmt.Errorf("MCP server %s is no longer available to this session", s.name)
	}
	s.mu.Lock()
	c, remote := s.conn, s.set.remote[call.Name]
	s.mu.Unlock()
	if c == nil {
		return tools.Result{}, fmt.Errorf("MCP server %s is not running right now; it is being restarted — try again shortly", s.name)
	}
	if remote == "" {
		return tools.Result{}, fmt.Errorf("MCP server %s has no tool %s any more", s.name, call.Name)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = remote
	if len(call.Arguments) > 0 {
		req.Params.Arguments = call.Arguments
	}
	ctx, end := s.calls.begin(ctx)
	defer end()
	res, err := c.client.CallTool(ctx, req)
	if err == nil {
		return render(res), nil
	}
	if ctx.Err() != nil {
		return tools.Result{}, ctx.Err()
	}
	var terr *transport.Error
	switch {
	case c.isDead() || errors.Is(err, transport.ErrTransportClosed):
		poke(c.suspect)
		return tools.Result{}, llm.RedactedError(fmt.Sprintf(
			"MCP server %s stopped while running %s; it is being restarted — try again shortly", s.name, remote), err)
	case errors.As(err, &terr):
		poke(c.suspect)
		return tools.Result{}, llm.RedactedError(fmt.Sprintf(
			"MCP server %s could not be reached while running %s; try again shortly", s.name, remote), err)
	}
	// A JSON-RPC error answer: the server's own words about the call.
	return tools.Result{}, llm.RedactedError(fmt.Sprintf("MCP server %s refused %s: %s", s.name, remote, tools.Snippet(err.Error(), 500)), err)
}
