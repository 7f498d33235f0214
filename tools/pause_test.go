package tools

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAPausedTimeoutNeitherRunsNorFiresUntilResumed(t *testing.T) {
	ctx, cancel := withPausableTimeout(context.Background(), time.Hour)
	defer cancel()
	p := ctx.Value(pauseKey{}).(*pausable)
	resume := PauseTimeout(ctx)
	inner := PauseTimeout(ctx)
	p.mu.Lock()
	stopped, left := p.timer == nil, p.left
	p.mu.Unlock()
	if !stopped || left <= 59*time.Minute {
		t.Fatalf("paused: timer stopped %v, %s left", stopped, left)
	}
	inner()
	if p.timer != nil {
		t.Fatal("the clock ran again while an outer pause held it")
	}
	resume()
	resume() // a second resume changes nothing
	p.mu.Lock()
	running, paused := p.timer != nil, p.paused
	p.mu.Unlock()
	if !running || paused != 0 {
		t.Fatalf("resumed: running %v, pauses %d", running, paused)
	}
	if ctx.Err() != nil {
		t.Fatalf("the call ended: %v", ctx.Err())
	}
}

func TestAPausableTimeoutRunsOutAsADeadline(t *testing.T) {
	ctx, cancel := withPausableTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause %v, want the deadline", context.Cause(ctx))
	}
}
