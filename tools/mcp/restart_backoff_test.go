package mcp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/tools"
)

// waits records the backoffs a registry waits out, without waiting.
type waits struct {
	mu   sync.Mutex
	list []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) bool {
	w.mu.Lock()
	w.list = append(w.list, d)
	w.mu.Unlock()
	return ctx.Err() == nil
}

func (w *waits) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.list)
}

func TestAServerThatDiesRightAfterConnectingWaitsItsBackoffBeforeEachRestart(t *testing.T) {
	t.Parallel()
	rec := &waits{}
	o := fastOptions(t, nil)
	o.Backoff = []time.Duration{0, time.Minute, 5 * time.Minute}
	o.sleep = rec.sleep
	_, orch := setup(t, map[string]config.MCPServer{"f": stdio(testServer(t))}, o, tools.Options{})
	warm(t, orch)
	const deaths = 4
	for i := range deaths {
		gen := orch.Generation()
		if out := orch.Execute(context.Background(), "1", "f__crash", `{}`, 10*time.Second); out.OK() {
			t.Fatalf("death %d: the crash call succeeded: %+v", i+1, out)
		}
		// Withdrawn on death, published again on restart.
		wait.Eventually(t, fmt.Sprintf("the server to come back after death %d", i+1), func() bool {
			return orch.Generation() >= gen+2 && hasTool(orch, "f__echo")
		}, wait.Within(20*time.Second))
	}
	// The first death restarts at once; each later one, within minutes of
	// the last restart, waits the next backoff, the last repeating.
	want := fmt.Sprint([]time.Duration{0, time.Minute, 5 * time.Minute, 5 * time.Minute})
	if got := rec.String(); got != want {
		t.Fatalf("the restarts after %d deaths waited %s, want %s", deaths, got, want)
	}
}
