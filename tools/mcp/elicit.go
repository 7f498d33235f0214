package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/tools"
)

// Elicitation (elicitation/create) reaches the session whose call caused
// it. The client is shared by every session using the server, so the
// request is tied to a call this way:
//
//   - Over streamable HTTP a server asks on the response stream of the call
//     itself: the request's context is the call's, and its elicitor answers.
//   - Otherwise (stdio, SSE, the standing GET stream) nothing in the request
//     names the call. It goes to the one call in flight to the server; when
//     calls of several sessions are in flight it cannot be told whose it is
//     and is declined — one person's form is never shown to another.
//
// A call whose session has no elicitor (nobody to show a form to) is
// answered decline, as is a request when no call is in flight.

// inflight is one tool call running on a server.
type inflight struct {
	ctx context.Context
	e   tools.Elicitor // nil: the session cannot show a form
}

type inflightKey struct{}

// calls tracks a server's calls in flight.
type calls struct {
	mu  sync.Mutex
	set map[*inflight]struct{}
}

// begin registers a call; the returned context carries it and end removes it.
func (cs *calls) begin(ctx context.Context) (context.Context, func()) {
	c := &inflight{ctx: ctx, e: tools.ElicitorFrom(ctx)}
	cs.mu.Lock()
	if cs.set == nil {
		cs.set = map[*inflight]struct{}{}
	}
	cs.set[c] = struct{}{}
	cs.mu.Unlock()
	return context.WithValue(ctx, inflightKey{}, c), func() {
		cs.mu.Lock()
		delete(cs.set, c)
		cs.mu.Unlock()
	}
}

// owner finds the call a request belongs to, or says why there is none.
func (cs *calls) owner(ctx context.Context) (*inflight, string) {
	if c, ok := ctx.Value(inflightKey{}).(*inflight); ok {
		return c, ""
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var only *inflight
	for c := range cs.set {
		switch {
		case only == nil:
			only = c
		case only.e == nil || c.e != only.e:
			// Calls of different sessions (or of sessions that cannot
			// answer): whose question it is cannot be told.
			return nil, "several sessions have calls in flight to this server"
		}
	}
	if only == nil {
		return nil, "no call is in flight to this server"
	}
	return only, ""
}

// elicitHandler answers the elicitation requests of one server.
type elicitHandler struct {
	s *server
}

var _ client.ElicitationHandler = elicitHandler{}

// Elicit routes the request to its call's elicitor and returns the answer.
func (h elicitHandler) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s := h.s
	decline := func(why string) (*mcp.ElicitationResult, error) {
		s.log.Info("MCP elicitation declined", zap.String("reason", why))
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	}
	if req.Params.Mode != "" && req.Params.Mode != mcp.ElicitationModeForm {
		return decline("only form elicitation is supported")
	}
	call, why := s.calls.owner(ctx)
	if call == nil {
		return decline(why)
	}
	if call.e == nil {
		return decline("the session has nobody to show a form to")
	}
	schema, err := json.Marshal(req.Params.RequestedSchema)
	if err != nil {
		return decline("the requested schema cannot be read")
	}
	// The wait is bounded by the call (and the elicitor's own timeout),
	// not by the transport's handling of the request.
	wctx, cancel := context.WithCancel(call.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		if ctx.Err() == context.Canceled {
			cancel()
		}
	})
	defer stop()
	ans, err := call.e.Elicit(wctx, tools.ElicitRequest{Server: s.name, Message: req.Params.Message, Schema: schema})
	if err != nil {
		s.log.Info("MCP elicitation cancelled", zap.Error(err))
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, nil
	}
	s.log.Info("MCP elicitation answered", zap.String("action", string(ans.Action)), zap.String("reason", ans.Reason))
	switch ans.Action {
	case tools.ElicitAccept:
		content := ans.Content
		if content == nil {
			content = map[string]any{}
		}
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
			Action: mcp.ElicitationResponseActionAccept, Content: content}}, nil
	case tools.ElicitCancel:
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, nil
	case tools.ElicitDecline:
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	}
	return nil, fmt.Errorf("unknown elicitation answer %q", ans.Action)
}

// elicitOptions are the client options declaring form elicitation, when
// the process has a front end that can show a form.
func (s *server) elicitOptions() []client.ClientOption {
	if !s.reg.opts.Elicitation {
		return nil
	}
	return []client.ClientOption{
		client.WithElicitationHandler(elicitHandler{s}),
		client.WithClientCapabilities(mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}},
		}),
	}
}
