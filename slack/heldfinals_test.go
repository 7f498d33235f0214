package slack_test

import (
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// heldFinals scripts model for sessions sessions at once, each named by
// key: a session takes steps task_status turns of turn each, then its final
// report, answer(name), waits until every session has reached its own, so
// that all the answers leave the model at the same moment. It returns when
// each session's report left the model.
func heldFinals[K comparable](t *testing.T, model *llmtest.Server, key func(*llmtest.Recorded) K, steps, sessions int, turn time.Duration, answer func(K) string) (ended func() map[K]time.Time) {
	t.Helper()
	var mu sync.Mutex
	end := map[K]time.Time{}
	turns := map[K]int{}
	finals := 0
	release := make(chan struct{})
	var releaseOnce sync.Once
	// A session that never reaches its report must not hold the others'
	// replies, and with them the model server's Close, for ever.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		n := key(r)
		time.Sleep(turn)
		mu.Lock()
		turns[n]++
		step := turns[n]
		if step > steps {
			if finals++; finals == sessions {
				releaseOnce.Do(func() { close(release) })
			}
		}
		mu.Unlock()
		if step <= steps {
			return llmtest.Call(agent.TaskStatusTool, fmt.Sprintf(`{"status":"in-progress","done":"","pending":"more","now":"step %d","ready_for_final_report":false,"need_to_run_more_tools":true}`, step))
		}
		<-release
		mu.Lock()
		end[n] = time.Now()
		mu.Unlock()
		return llmtest.TextReport(answer(n))
	})
	return func() map[K]time.Time {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(end)
	}
}
