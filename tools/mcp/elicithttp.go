package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// answerTimeout bounds the POST that carries a person's answer back.
const answerTimeout = 30 * time.Second

// longAnswers lets a person take longer than mcp-go allows. mcp-go bounds
// the handling of a server's request over streamable HTTP, and the POST of
// its answer, with 30 seconds; a person filling in a form takes minutes.
// An elicitation is handled without that bound (the call it belongs to,
// and the elicitor's own timeout, bound it instead) and its answer posted
// here.
type longAnswers struct {
	url     string
	headers map[string]string
	session func() string
	version atomic.Value // string: the negotiated protocol version
	client  *http.Client
}

// wrap returns the handler the transport is given.
func (l *longAnswers) wrap(h transport.RequestHandler) transport.RequestHandler {
	return func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if req.Method != string(mcp.MethodElicitationCreate) {
			return h(ctx, req)
		}
		resp, err := h(context.WithoutCancel(ctx), req)
		if err != nil {
			resp = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
		}
		if resp != nil {
			l.post(ctx, resp)
		}
		return nil, nil // answered here: the transport sends nothing
	}
}

func (l *longAnswers) post(ctx context.Context, resp *transport.JSONRPCResponse) {
	body, err := json.Marshal(resp)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id := l.session(); id != "" {
		req.Header.Set(transport.HeaderKeySessionID, id)
	}
	if v, _ := l.version.Load().(string); v != "" {
		req.Header.Set(transport.HeaderKeyProtocolVersion, v)
	}
	for k, v := range l.headers {
		req.Header.Set(k, v)
	}
	r, err := l.client.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<16))
	r.Body.Close()
}
