package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// BenchmarkExecute measures the orchestrator's own cost per call — lookup,
// argument parsing and schema validation, the cache, the queue, the timeout
// wrapper and logging (to a disabled logger) — around a provider that
// answers at once. "miss" runs the tool every time (new arguments each
// call, so the cache is consulted and filled); "hit" is answered from the
// cache; "plain" has neither cache nor queue.
func BenchmarkExecute(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`)
	answer := func(context.Context, Call) (Result, error) {
		return Result{Content: "a short answer from the tool"}, nil
	}
	p := &funcProvider{ns: "b", call: answer, tools: []Tool{
		{Name: "b__cached", Schema: schema, Queue: "q", CacheTTL: time.Hour},
		{Name: "b__plain", Schema: schema},
	}}
	o := New(context.Background(), Options{Queues: map[string]int{"q": 4}, CacheEntries: 1 << 20, CacheBytes: 1 << 30, Timeout: time.Minute}, p)
	ctx := context.Background()
	args := make([]string, 1<<16)
	for i := range args {
		args[i] = `{"q":"find the thing","n":` + strconv.Itoa(i) + `}`
	}
	run := func(b *testing.B, tool string, arg func(i int) string, wantCached bool) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			out := o.Execute(ctx, "call", tool, arg(i), 0)
			if !out.OK() || out.Cached != wantCached {
				b.Fatalf("outcome %+v", out)
			}
		}
	}
	b.Run("miss", func(b *testing.B) {
		run(b, "b__cached", func(i int) string {
			if i%len(args) == 0 { // every argument seen: start over with an empty cache
				o.cache = newResultCache(1<<20, 1<<30, time.Now)
			}
			return args[i%len(args)]
		}, false)
	})
	b.Run("hit", func(b *testing.B) {
		o.Execute(ctx, "call", "b__cached", args[0], 0)
		run(b, "b__cached", func(int) string { return args[0] }, true)
	})
	b.Run("plain", func(b *testing.B) {
		run(b, "b__plain", func(i int) string { return args[i%len(args)] }, false)
	})
}
