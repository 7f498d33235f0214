package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Target is one model an agent may use: a provider and a model it serves.
type Target struct {
	Provider Provider
	Model    string
}

// String returns "provider/model", the way agent files name a target.
func (t Target) String() string {
	if t.Provider == nil {
		return t.Model
	}
	return t.Provider.Name() + "/" + t.Model
}

// RetryInfo describes a failed attempt that another attempt will follow.
type RetryInfo struct {
	Attempt int           // number of the failed attempt, from 1
	Target  Target        // where it went
	Err     error         // why it failed, an *Error
	Wait    time.Duration // how long the chain waits before the next attempt
	Next    Target        // where the next attempt goes
}

// Chain makes a model call with retries and fallbacks over an agent's
// models. Its zero value with Targets set works.
//
// The rules:
//   - Attempts walk Targets in order and cycle: the attempt after one on
//     Targets[i] goes to the next usable target after i.
//   - A retryable failure (rate limit, 5xx, network, timeout, bad response)
//     puts the target in backoff: it is not tried again before
//     Backoff(n) has passed, n being how many times it has failed, nor
//     before the error's RetryAfter. A target in backoff is passed over while
//     another usable target is ready, so a fallback model is tried at once;
//     when none is ready, the chain waits for the one that is ready first.
//   - Auth and quota errors are final for the provider: every target on it
//     leaves the rotation. A bad request is final for the target (the
//     model is unknown there, or refuses the request): it leaves the
//     rotation. When no target is left, the last error is returned.
//   - At most MaxRetries+1 attempts are made. Timeout bounds each attempt;
//     an attempt that runs out of time is an ErrTimeout, which is retryable.
//   - When ctx is done the chain returns at once, ErrCanceled or ErrTimeout.
//   - No wait is longer than MaxWait, and none ends after ctx's deadline: a
//     wait that would (a Retry-After of an hour, say) is not started. The
//     chain gives up instead, and its ChainError says how long the wait
//     would have been.
//
// Every error Complete returns is a *ChainError wrapping the last *Error,
// so KindOf and errors.As see the final cause.
//
// A streaming attempt that fails part-way may already have passed text to
// Request.OnText; OnRetry tells the consumer to drop it.
type Chain struct {
	Targets    []Target      // the agent's models in order
	MaxRetries int           // extra attempts after the first (total attempts = MaxRetries+1)
	Timeout    time.Duration // per attempt (0 = none); a timed-out attempt is an ErrTimeout, retryable
	// Backoff returns the wait before a target is tried again after its
	// n-th failure (n ≥ 1). Default: DefaultBackoff.
	Backoff func(n int) time.Duration
	// MaxWait caps a single wait before another attempt (0 means
	// DefaultMaxWait).
	MaxWait time.Duration
	// OnRetry, when set, is called after a failed attempt that another will
	// follow, before the wait, for logs and progress events.
	OnRetry func(RetryInfo)
}

// DefaultMaxWait is the longest a chain waits before another attempt when
// its MaxWait is not set: a service that asks for longer is treated as
// unavailable for this call.
const DefaultMaxWait = time.Minute

// ChainError is the failure of a whole Chain call: the last attempt's error,
// how many attempts were made, and the targets they went to.
type ChainError struct {
	Attempts int
	Tried    []string // "provider/model", in the order first tried
	Err      error    // the last attempt's *Error
	// Wait, when not zero, is why the chain gave up: the next attempt
	// would have had to wait this long, more than WaitLimit (MaxWait, or
	// the time left before the caller's deadline).
	Wait, WaitLimit time.Duration
}

func (e *ChainError) Error() string {
	if len(e.Tried) == 0 {
		return fmt.Sprintf("llm: no attempt made: %v", e.Err)
	}
	wait := ""
	if e.Wait > 0 {
		wait = fmt.Sprintf("; the next would have to wait %s, more than the %s allowed", e.Wait.Round(time.Second), e.WaitLimit.Round(time.Second))
	}
	return fmt.Sprintf("llm: gave up after %d attempt%s (tried %s%s): %v",
		e.Attempts, plural(e.Attempts), strings.Join(e.Tried, ", "), wait, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *ChainError) Unwrap() error { return e.Err }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// DefaultBackoff waits 500ms after a target's first failure and doubles the
// wait each time, up to 30s, less up to a fifth at random so that sessions
// that failed together do not retry together.
func DefaultBackoff(n int) time.Duration {
	const base, ceiling = 500 * time.Millisecond, 30 * time.Second
	d := ceiling
	if n < 1 {
		n = 1
	}
	if n <= 7 { // 500ms << 6 = 32s is past the ceiling
		d = min(base<<(n-1), ceiling)
	}
	return d - rand.N(d/5+1)
}

// targetState is what a chain call knows about one target.
type targetState struct {
	removed   bool
	failures  int
	notBefore time.Time
}

// Complete sends req to the chain's targets under the rules of Chain. The
// request is copied for each attempt with Model set to the target's model;
// the caller's request is not modified.
func (c *Chain) Complete(ctx context.Context, req *Request) (*Response, error) {
	if len(c.Targets) == 0 {
		return nil, &ChainError{Err: &Error{Kind: ErrBadRequest, Message: "no model configured"}}
	}
	backoff := c.Backoff
	if backoff == nil {
		backoff = DefaultBackoff
	}
	maxAttempts := max(c.MaxRetries, 0) + 1
	states := make([]targetState, len(c.Targets))
	var tried []string
	var last error
	fail := func(attempts int, err error) *ChainError {
		return &ChainError{Attempts: attempts, Tried: tried, Err: err}
	}
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}

	var prev Target // target of the last failed attempt
	next := 0       // where the search for the next target starts
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fail(attempt-1, contextError(ctx, prev, last))
		}
		i, wait := pick(states, next, time.Now())
		if i < 0 {
			return nil, fail(attempt-1, last)
		}
		t := c.Targets[i]
		if wait > 0 {
			limit := maxWait
			if dl, ok := ctx.Deadline(); ok {
				limit = min(limit, time.Until(dl))
			}
			if wait > limit {
				ce := fail(attempt-1, last)
				ce.Wait, ce.WaitLimit = wait, max(limit, 0)
				return nil, ce
			}
		}
		if attempt > 1 && c.OnRetry != nil {
			c.OnRetry(RetryInfo{Attempt: attempt - 1, Target: prev, Err: last, Wait: wait, Next: t})
		}
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, fail(attempt-1, contextError(ctx, prev, last))
			case <-timer.C:
			}
		}

		if name := t.String(); !slices.Contains(tried, name) {
			tried = append(tried, name)
		}
		resp, err := c.attempt(ctx, t, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fail(attempt, contextError(ctx, t, last))
		}
		e := asError(err, t)
		last, prev, next = e, t, i+1

		switch {
		case e.Kind == ErrAuth || e.Kind == ErrQuota:
			for j, o := range c.Targets {
				if o.Provider == t.Provider || o.Provider.Name() == t.Provider.Name() {
					states[j].removed = true
				}
			}
		case e.Kind == ErrBadRequest:
			states[i].removed = true
		case !e.Retryable():
			return nil, fail(attempt, e)
		default:
			s := &states[i]
			s.failures++
			s.notBefore = time.Now().Add(max(backoff(s.failures), e.RetryAfter))
		}
		if attempt >= maxAttempts {
			return nil, fail(attempt, e)
		}
	}
}

// attempt makes one call to t, bounded by the chain's per-attempt timeout.
func (c *Chain) attempt(ctx context.Context, t Target, req *Request) (*Response, error) {
	r := *req
	r.Model = t.Model
	actx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	resp, err := t.Provider.Complete(actx, &r)
	if err != nil && ctx.Err() == nil && actx.Err() != nil && KindOf(err) != ErrTimeout {
		// The provider did not say so, but the attempt ran out of time.
		return nil, &Error{Kind: ErrTimeout, Provider: t.Provider.Name(), Model: t.Model,
			Message: fmt.Sprintf("no answer within %s", c.Timeout), Err: err}
	}
	return resp, err
}

// pick returns the index of the target for the next attempt and how long to
// wait before making it: the first usable target from start (cycling) that
// is ready at now, or else the one that becomes ready first. It returns -1
// when no target is usable.
func pick(states []targetState, start int, now time.Time) (int, time.Duration) {
	best := -1
	for k := range states {
		i := (start + k) % len(states)
		s := states[i]
		if s.removed {
			continue
		}
		if !s.notBefore.After(now) {
			return i, 0
		}
		if best < 0 || s.notBefore.Before(states[best].notBefore) {
			best = i
		}
	}
	if best < 0 {
		return -1, 0
	}
	return best, states[best].notBefore.Sub(now)
}

// asError returns err as an *Error, classifying errors of providers that
// do not return one.
func asError(err error, t Target) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindOf(err), Provider: t.Provider.Name(), Model: t.Model, Message: err.Error(), Err: err}
}

// contextError is the error for a chain call whose ctx is done. It keeps
// the last attempt's error in the message, since that is usually why the
// caller gave up.
func contextError(ctx context.Context, t Target, last error) *Error {
	e := &Error{Kind: KindOf(ctx.Err()), Err: ctx.Err(), Model: t.Model}
	if t.Provider != nil {
		e.Provider = t.Provider.Name()
	}
	e.Message = "the caller stopped waiting"
	if e.Kind == ErrTimeout {
		e.Message = "the caller's deadline passed"
	}
	if last != nil {
		e.Message += " (last error: " + last.Error() + ")"
	}
	return e
}
