package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies a failed model call by what the caller should do next.
type ErrorKind int

// Error kinds. Auth, Quota and BadRequest are final; the rest are worth a retry.
const (
	ErrUnknown     ErrorKind = iota
	ErrAuth                  // 401/403: the key is wrong; retrying cannot help
	ErrQuota                 // billing or quota exhausted (e.g. OpenAI insufficient_quota)
	ErrBadRequest            // 400/404/422: the request itself is wrong
	ErrRateLimit             // 429: wait RetryAfter, then retry
	ErrServer                // 5xx or 529 overloaded
	ErrNetwork               // connection refused, reset, DNS
	ErrTimeout               // the call's deadline passed
	ErrBadResponse           // the answer could not be parsed
	ErrCanceled              // the caller's context was cancelled
)

var kindNames = [...]string{"unknown", "auth", "quota", "bad_request", "rate_limit", "server", "network", "timeout", "bad_response", "canceled"}

func (k ErrorKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is a failed model call. Message must never contain a credential.
type Error struct {
	Kind       ErrorKind
	Provider   string
	Model      string
	Status     int           // HTTP status, 0 when none
	RetryAfter time.Duration // from a Retry-After header, 0 when absent
	Message    string        // what went wrong, safe to log and show
	Err        error         // underlying cause, may be nil
}

func (e *Error) Error() string {
	s := fmt.Sprintf("llm %s/%s: %s", e.Provider, e.Model, e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether another attempt (after a backoff) may succeed.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrServer, ErrNetwork, ErrTimeout, ErrBadResponse, ErrUnknown:
		return true
	}
	return false
}

// KindOf returns the ErrorKind of err: the Kind of an *Error in its chain,
// ErrCanceled or ErrTimeout for context errors, ErrUnknown otherwise.
func KindOf(err error) ErrorKind {
	var e *Error
	switch {
	case err == nil:
		return ErrUnknown
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, context.Canceled):
		return ErrCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ErrTimeout
	}
	return ErrUnknown
}

// ContextError returns the error for a call whose context ended — cancelled
// by the caller, or past its deadline — or nil while ctx is live. Adapters
// check it first: when the context ended, it decides the kind, whatever the
// transport made of the interruption.
func ContextError(ctx context.Context, provider, model string) *Error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	e := &Error{Kind: KindOf(err), Provider: provider, Model: model, Err: err, Message: "the call was cancelled"}
	if e.Kind == ErrTimeout {
		e.Message = "the call did not finish before its deadline"
	}
	return e
}
