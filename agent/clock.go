package agent

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The session's clock stops while a person is asked (a tool call waiting
// for approval): max_session_duration bounds the session's own work, and
// approval_timeout bounds the wait. A deadline is therefore a movable
// context, pushed later by the time the clock stood still.

// movable is a context that ends at a deadline that can move later. Its
// Err is context.DeadlineExceeded once the deadline passed, as with
// context.WithDeadline.
type movable struct {
	context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	deadline time.Time
	timer    *time.Timer
}

func newMovable(parent context.Context, deadline time.Time) *movable {
	ctx, cancel := context.WithCancelCause(parent)
	m := &movable{Context: ctx, cancel: cancel, deadline: deadline}
	m.timer = time.AfterFunc(time.Until(deadline), func() { cancel(context.DeadlineExceeded) })
	return m
}

// Deadline is the current deadline.
func (m *movable) Deadline() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deadline, true
}

// Err is context.DeadlineExceeded when this deadline, or one above, ended
// the context.
func (m *movable) Err() error {
	err := m.Context.Err()
	if err != nil && errors.Is(context.Cause(m.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// hold stops the deadline's timer.
func (m *movable) hold() {
	m.mu.Lock()
	m.timer.Stop()
	m.mu.Unlock()
}

// push moves the deadline d later and starts its timer again.
func (m *movable) push(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deadline = m.deadline.Add(d)
	if m.Context.Err() == nil {
		m.timer.Reset(time.Until(m.deadline))
	}
}

// release ends the context and its timer.
func (m *movable) release() {
	m.timer.Stop()
	m.cancel(context.Canceled)
}

// clock is a session's deadlines (its time for work and its final one)
// and the clock of the session above, which waits while this one does.
type clock struct {
	above *clock
	ctxs  []*movable

	mu    sync.Mutex
	held  int       // waits in progress
	since time.Time // when the first of them started
}

// pause stops the clock (and the clocks above) until the returned func is
// called; pauses may overlap.
func (c *clock) pause() (resume func()) {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	c.held++
	if c.held == 1 {
		c.since = time.Now()
		for _, m := range c.ctxs {
			m.hold()
		}
	}
	c.mu.Unlock()
	up := c.above.pause()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.held--
			if c.held == 0 {
				d := time.Since(c.since)
				for _, m := range c.ctxs {
					m.push(d)
				}
			}
			c.mu.Unlock()
			up()
		})
	}
}
