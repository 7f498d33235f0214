package wait_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/internal/wait"
)

// recorder is a testing.TB that records a failure instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = strings.TrimSpace(fmt.Sprintf(format, args...))
	r.mu.Unlock()
	panic(r) // Fatalf does not return
}

// run calls Eventually as a test would and returns the failure, if any.
func run(t *testing.T, what string, cond func() bool, opts ...wait.Option) (failure string) {
	t.Helper()
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != any(r) {
			panic(p)
		}
		failure = r.failed
	}()
	wait.Eventually(r, what, cond, opts...)
	return ""
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	if f := run(t, "the third check", func() bool { return n.Add(1) >= 3 }); f != "" {
		t.Fatalf("failed: %s", f)
	}
	if n.Load() != 3 {
		t.Errorf("checked %d times, want 3", n.Load())
	}
}

func TestEventuallyFailsNamingWhatItWaitedForAndTheLog(t *testing.T) {
	t.Parallel()
	f := run(t, "the impossible", func() bool { return false }, wait.Within(30*time.Millisecond), wait.Log(func() string { return "the process said no" }))
	if !strings.Contains(f, "timed out after 30ms waiting for the impossible") || !strings.Contains(f, "the process said no") {
		t.Errorf("failure = %q", f)
	}
}
