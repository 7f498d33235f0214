package ratelimit

import (
	"context"
	"sync"
)

// Priority orders calls waiting for the same budget; lower goes first.
type Priority int

// The priorities, first to last.
const (
	Answer   Priority = iota // a final answer and its continuation messages
	Note                     // error, "stopped" and "interrupted" notes, refusals
	First                    // the first progress message, "queued", reads before a session
	Settle                   // settling a progress message an answer made stale
	Refresh                  // progress refreshes
	Cosmetic                 // reactions and the assistant status
	numPriorities
)

// reserve is the share of a bucket's burst that a priority must leave in
// it: refreshes and cosmetic calls stop while answers could still use it.
var reserve = [numPriorities]float64{Settle: 0.2, Refresh: 0.3, Cosmetic: 0.5}

// callKey is the context key of a call's options.
type callKey struct{}

// callOpts ride on a request's context from the code that makes the call.
type callOpts struct {
	prio Priority
	// paid, when set and true, is a token already taken (by TakeNow) for
	// the next call of this context; the call spends it instead of waiting.
	paid *paid
}

// paid is a token taken ahead of the call that spends it.
type paid struct {
	mu     sync.Mutex
	method string
	ok     bool
}

// spend reports whether a token for method was paid, and uses it up.
func (p *paid) spend(method string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ok && p.method == method {
		p.ok = false
		return true
	}
	return false
}

// WithPriority marks the Web API calls made with ctx.
func WithPriority(ctx context.Context, p Priority) context.Context {
	o, _ := ctx.Value(callKey{}).(callOpts)
	o.prio = p
	return context.WithValue(ctx, callKey{}, o)
}

func optsOf(ctx context.Context) callOpts {
	o, ok := ctx.Value(callKey{}).(callOpts)
	if !ok {
		o.prio = First
	}
	return o
}
