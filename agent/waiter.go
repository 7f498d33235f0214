package agent

import "sync"

// callWaiter is a tool call's tools.Waiter: a person-shaped wait inside
// the call (an MCP elicitation) stops the session's clock and is shown
// as an EventWaiting until it is over.
type callWaiter struct {
	s  *session
	op *Op
}

// Waiting implements tools.Waiter.
func (w callWaiter) Waiting(what string, who []string) func(outcome string) {
	s := w.s
	info := WaitInfo{ID: s.id + "/" + randomID(4), Who: who, What: what}
	resume := s.clock.pause()
	started := info
	s.emit(Event{Kind: EventWaiting, Op: w.op, Wait: &started})
	var once sync.Once
	return func(outcome string) {
		once.Do(func() {
			resume()
			ended := info
			ended.Outcome = outcome
			s.emit(Event{Kind: EventResumed, Op: w.op, Wait: &ended})
		})
	}
}
