package tools

import (
	"context"
	"sync"
	"time"
)

// A call's timeout does not run while the call waits for a person — a
// form a tool asked for (MCP elicitation): the person's time is bounded by
// its own timeout, and a tool is not stopped as slow because someone took
// five minutes to fill in a form.

type pauseKey struct{}

// pausable is a call's timeout that can be stopped and resumed.
type pausable struct {
	mu      sync.Mutex
	left    time.Duration
	started time.Time
	timer   *time.Timer // nil while paused
	paused  int
	cancel  context.CancelCauseFunc
}

// withPausableTimeout is context.WithTimeout whose clock PauseTimeout can
// stop; when it runs out, the context's cause is context.DeadlineExceeded.
func withPausableTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	p := &pausable{left: d, cancel: cancel}
	p.mu.Lock()
	p.run()
	p.mu.Unlock()
	return context.WithValue(cctx, pauseKey{}, p), func() {
		p.mu.Lock()
		if p.timer != nil {
			p.timer.Stop()
		}
		p.mu.Unlock()
		cancel(context.Canceled)
	}
}

// run starts the clock on what is left; p.mu held.
func (p *pausable) run() {
	p.started = time.Now()
	p.timer = time.AfterFunc(p.left, func() { p.cancel(context.DeadlineExceeded) })
}

// PauseTimeout stops the timeout of the call ctx belongs to until resume
// is called; pauses nest. A context without such a timeout is unaffected.
func PauseTimeout(ctx context.Context) (resume func()) {
	p, _ := ctx.Value(pauseKey{}).(*pausable)
	if p == nil {
		return func() {}
	}
	p.mu.Lock()
	if p.paused == 0 && p.timer != nil {
		if p.timer.Stop() {
			p.left -= time.Since(p.started)
		} else {
			p.left = 0
		}
		p.timer = nil
	}
	p.paused++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.paused--; p.paused == 0 {
				p.run()
			}
		})
	}
}
