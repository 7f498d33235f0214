package mcp

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// mcp-go sends notifications/cancelled for an abandoned request over stdio
// but not over HTTP, where it counts the closed response stream as the
// cancellation. Servers on the handshake protocol are told that a
// disconnect is not a cancellation, so they would run an abandoned tool to
// the end; these wrappers tell them. Embedding keeps every optional
// interface of the transport visible to the client.

type cancellingHTTP struct {
	*transport.StreamableHTTP
	answers *longAnswers
}

// SetRequestHandler installs h, with elicitations answered without
// mcp-go's 30-second bound (see longAnswers).
func (t cancellingHTTP) SetRequestHandler(h transport.RequestHandler) {
	t.StreamableHTTP.SetRequestHandler(t.answers.wrap(h))
}

// SetProtocolVersion records the negotiated version for the answers.
func (t cancellingHTTP) SetProtocolVersion(v string) {
	t.answers.version.Store(v)
	t.StreamableHTTP.SetProtocolVersion(v)
}

func (t cancellingHTTP) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.StreamableHTTP.SendRequest(ctx, req)
	if err != nil && ctx.Err() != nil {
		sendCancelled(ctx, t.StreamableHTTP, req)
	}
	return resp, err
}

type cancellingSSE struct{ *transport.SSE }

func (t cancellingSSE) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.SSE.SendRequest(ctx, req)
	if err != nil && ctx.Err() != nil {
		sendCancelled(ctx, t.SSE, req)
	}
	return resp, err
}

// sendCancelled tells the server, off the caller's path and best effort,
// that request req is no longer wanted. Only tool calls are worth it: the
// handshake must not be cancelled and the rest are quick.
func sendCancelled(ctx context.Context, t transport.Interface, req transport.JSONRPCRequest) {
	if req.Method != string(mcp.MethodToolsCall) {
		return
	}
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{
				"requestId": req.ID, "reason": ctx.Err().Error(),
			}},
		},
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = t.SendNotification(ctx, n)
	}()
}
