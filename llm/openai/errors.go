package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/slackbot/slackbot/llm"
)

// errBadResponse marks answers that arrived but could not be understood.
var errBadResponse = errors.New("malformed answer")

// classify turns an error of the SDK into an *llm.Error. It never keeps the
// SDK's *openai.Error, whose Request carries the Authorization header, and it
// scrubs the key from every message. res is the HTTP response when one
// arrived.
func (p *Provider) classify(ctx context.Context, model string, err error, res *http.Response) *llm.Error {
	e := &llm.Error{Provider: p.name, Model: model}
	var apiErr *sdk.Error
	var streamErr *ssestream.StreamError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if ce := llm.ContextError(ctx, p.name, model); ce != nil {
		return ce
	}
	switch {
	case errors.As(err, &apiErr):
		e.Status = apiErr.StatusCode
		if apiErr.Response != nil {
			e.RetryAfter = llm.RetryAfter(apiErr.Response.Header)
		}
		e.Kind = kindOf(apiErr.StatusCode, apiErr.Type, apiErr.Code)
		msg := apiErr.Message
		if msg == "" && apiErr.Response != nil && apiErr.Response.Body != nil {
			// Not an OpenAI error body: a gateway's page or plain text.
			b, _ := io.ReadAll(io.LimitReader(apiErr.Response.Body, 4*llm.MaxMessage))
			msg = string(b)
		}
		if strings.TrimSpace(msg) == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		e.Message = p.redact(joinNonEmpty(apiErr.Type, apiErr.Code, msg))
		return e
	case errors.As(err, &streamErr):
		// An error object in the middle of a stream (HTTP status 200).
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &body)
		code, _ := body.Error.Code.(string)
		e.Kind = kindOf(0, body.Error.Type, code)
		e.Message = p.redact(joinNonEmpty("error in stream", body.Error.Type, code, body.Error.Message))
		return e
	case res != nil && res.StatusCode >= 400:
		// An error body the SDK could not decode, such as a proxy's page.
		e.Status = res.StatusCode
		e.RetryAfter = llm.RetryAfter(res.Header)
		e.Kind = kindOf(res.StatusCode, "", "")
		e.Message = p.redact(err.Error())
		return e
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Err, e.Message = llm.ErrTimeout, context.DeadlineExceeded, "the server did not answer in time"
		return e
	case errors.Is(err, errBadResponse), errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		e.Kind = llm.ErrBadResponse
	case res != nil && !brokenConnection(err):
		// The server answered 2xx with something the SDK could not use,
		// such as an HTML page.
		e.Kind = llm.ErrBadResponse
	default:
		e.Kind = llm.ErrNetwork
	}
	e.Message = p.redact(err.Error())
	e.Err = llm.RedactedError(e.Message, err)
	return e
}

// brokenConnection reports whether err is the transport failing rather than
// the answer being unusable.
func brokenConnection(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// kindOf classifies an API error by HTTP status (0 for an error inside a
// stream), error type and code.
func kindOf(status int, typ, code string) llm.ErrorKind {
	switch {
	case code == "insufficient_quota" || typ == "insufficient_quota" || code == "billing_hard_limit_reached" || status == http.StatusPaymentRequired:
		return llm.ErrQuota
	case status == http.StatusUnauthorized || status == http.StatusForbidden || code == "invalid_api_key":
		return llm.ErrAuth
	case status == http.StatusTooManyRequests || code == "rate_limit_exceeded":
		return llm.ErrRateLimit
	case status == http.StatusRequestTimeout:
		return llm.ErrTimeout
	case status >= 500 || typ == "server_error" || code == "server_error":
		return llm.ErrServer
	case status >= 400:
		return llm.ErrBadRequest
	}
	return llm.ErrServer
}

// redact removes the key from s (and anything shaped like a key) and
// bounds its length.
func (p *Provider) redact(s string) string { return llm.Redact(s, p.key) }

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
