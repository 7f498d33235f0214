package tools

import "context"

// Waiter is told when a call, while it runs, waits on a person (an MCP
// server asking the user for input): the session's clock stands still
// and its headend shows the wait until done is called with the outcome
// ("answered", "declined", "cancelled", "timed out"). what says it in
// words for people, never with the call's arguments.
type Waiter interface {
	Waiting(what string, who []string) (done func(outcome string))
}

type waiterKey struct{}

// WithWaiter gives a call's context the Waiter of its session.
func WithWaiter(ctx context.Context, w Waiter) context.Context {
	return context.WithValue(ctx, waiterKey{}, w)
}

// WaiterFrom is the Waiter of ctx's session, nil when it has none.
func WaiterFrom(ctx context.Context) Waiter {
	w, _ := ctx.Value(waiterKey{}).(Waiter)
	return w
}
