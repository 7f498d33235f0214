package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/slackbot/slackbot/llm"
)

// errBadResponse marks answers that arrived but could not be understood.
var errBadResponse = errors.New("malformed answer")

// classify turns an error of the SDK into an *llm.Error. It never keeps the
// SDK's API error, whose request carries the Authorization header, and it
// scrubs the key from every message.
func (p *Provider) classify(ctx context.Context, model string, err error) *llm.Error {
	e := &llm.Error{Provider: p.name, Model: model}

	var apiErr *sdk.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if ce := llm.ContextError(ctx, p.name, model); ce != nil {
		return ce
	}
	switch {
	case errors.As(err, &apiErr):
		p.fromAPI(e, apiErr)
		return e
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Err, e.Message = llm.ErrTimeout, context.DeadlineExceeded, "the server did not answer in time"
		return e
	case errors.Is(err, errBadResponse), errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		e.Kind = llm.ErrBadResponse
	default:
		e.Kind = llm.ErrNetwork
	}
	e.Message = p.redact(err.Error())
	e.Err = llm.RedactedError(e.Message, err)
	return e
}

// fromAPI classifies an error the API answered with: an HTTP status, or an
// "error" event in the middle of a stream (status 200).
func (p *Provider) fromAPI(e *llm.Error, a *sdk.Error) {
	typ := string(a.Type())
	code := string(a.ErrorCode())
	msg := a.Message
	if msg == "" && a.RawJSON() != "" && !json.Valid([]byte(a.RawJSON())) {
		msg = a.RawJSON() // a gateway's plain-text body
	}
	if a.StatusCode != http.StatusOK {
		e.Status = a.StatusCode
	}
	if a.Response != nil {
		e.RetryAfter = llm.RetryAfter(a.Response.Header)
	}

	switch {
	case isBilling(typ, code, msg, a.StatusCode):
		e.Kind = llm.ErrQuota
	case a.StatusCode == http.StatusUnauthorized, a.StatusCode == http.StatusForbidden,
		typ == "authentication_error", typ == "permission_error":
		e.Kind = llm.ErrAuth
	case a.StatusCode == http.StatusTooManyRequests, typ == "rate_limit_error":
		e.Kind = llm.ErrRateLimit
	case a.StatusCode == http.StatusRequestTimeout:
		e.Kind = llm.ErrTimeout
	case a.StatusCode >= 500, typ == "overloaded_error", typ == "api_error", typ == "timeout_error":
		e.Kind = llm.ErrServer
	case a.StatusCode >= 400, typ == "invalid_request_error", typ == "not_found_error", typ == "request_too_large":
		e.Kind = llm.ErrBadRequest
	default:
		e.Kind = llm.ErrServer
	}

	var parts []string
	if typ != "" {
		parts = append(parts, typ)
	}
	if code != "" {
		parts = append(parts, code)
	}
	if msg != "" {
		parts = append(parts, msg)
	}
	e.Message = p.redact(strings.Join(parts, ": "))
}

// isBilling recognises an exhausted balance or spending limit. Anthropic
// reports a low credit balance as a 400 invalid_request_error, so the
// message is checked too.
func isBilling(typ, code, msg string, status int) bool {
	lower := strings.ToLower(msg)
	return typ == "billing_error" || status == http.StatusPaymentRequired ||
		strings.Contains(code, "spend_limit") || strings.Contains(code, "billing") ||
		strings.Contains(lower, "credit balance") || strings.Contains(lower, "billing")
}

// redact removes the key from s (and anything shaped like a key) and
// bounds its length.
func (p *Provider) redact(s string) string { return llm.Redact(s, p.key) }
