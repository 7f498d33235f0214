// Package wait is how a test waits for something it has no signal for: it
// checks a condition until it holds, failing the test with what it waited
// for when it does not. Tests of every package import it, so it depends
// on nothing of ours.
package wait

import (
	"testing"
	"time"
)

// DefaultTimeout is how long Eventually waits when not told otherwise. A
// wait is not an assertion about speed: the timeout only bounds how long a
// broken test hangs, so it is generous for a loaded machine under -race.
const DefaultTimeout = 30 * time.Second

// every is how often the condition is checked between wake-ups.
const every = 10 * time.Millisecond

// Option changes how Eventually waits.
type Option func(*waiter)

type waiter struct {
	timeout time.Duration
	log     func() string
	wake    func() <-chan struct{}
}

// Within waits at most d instead of DefaultTimeout.
func Within(d time.Duration) Option { return func(w *waiter) { w.timeout = d } }

// Log adds what log returns at the time of the failure to it, e.g. a
// process's output so far.
func Log(log func() string) Option { return func(w *waiter) { w.log = log } }

// On checks the condition again as soon as the channel changed returns is
// closed (the emulator's Changed), not only on the next tick. changed is
// called before each check, so a change during the check is not missed.
func On(changed func() <-chan struct{}) Option { return func(w *waiter) { w.wake = changed } }

// Eventually checks cond until it holds; when it does not within the
// timeout it fails tb with "timed out waiting for <what>". It must be
// called from the test's goroutine.
func Eventually(tb testing.TB, what string, cond func() bool, opts ...Option) {
	tb.Helper()
	w := waiter{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&w)
	}
	deadline := time.NewTimer(w.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var woken <-chan struct{}
		if w.wake != nil {
			woken = w.wake()
		}
		if cond() {
			return
		}
		select {
		case <-woken:
		case <-tick.C:
		case <-deadline.C:
			if cond() {
				return
			}
			if w.log != nil {
				tb.Fatalf("timed out after %s waiting for %s:\n%s", w.timeout, what, w.log())
			}
			tb.Fatalf("timed out after %s waiting for %s", w.timeout, what)
		}
	}
}
