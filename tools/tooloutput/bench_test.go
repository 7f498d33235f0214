package tooloutput

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/tools"
)

// logLines makes about size bytes of log-like lines, with a rare line
// holding "needle" every 50,000 lines.
func logLines(size int) string {
	var b strings.Builder
	b.Grow(size + 200)
	for i := 1; b.Len() < size; i++ {
		if i%50000 == 0 {
			fmt.Fprintf(&b, "2026-01-14T10:%02d:%02d.%03dZ ERROR req=%08x needle found in shard %d\n", i/60%60, i%60, i%1000, i, i%7)
			continue
		}
		fmt.Fprintf(&b, "2026-01-14T10:%02d:%02d.%03dZ INFO req=%08x status=%d path=/api/v1/items/%d bytes=%d\n",
			i/60%60, i%60, i%1000, i, 200+i%3, i, i*7%100000)
	}
	return b.String()
}

// oneLine makes about size bytes of JSON on one line.
func oneLine(size int) string {
	var b strings.Builder
	b.Grow(size + 200)
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","tags":["a","b"]},`, i, i)
	}
	b.WriteString(`{"id":-1,"name":"needle"}]}`)
	return b.String()
}

func grepCall(b *testing.B, p tools.Provider, args map[string]any) tools.Result {
	raw, _ := json.Marshal(args)
	res, err := p.Call(context.Background(), tools.Call{Name: "Grep", Arguments: raw})
	if err != nil || res.IsError {
		b.Fatalf("grep: %v %s", err, res.Content)
	}
	return res
}

// BenchmarkGrep50MB stores a 50 MB result and greps it. alloc-MB/op is
// what one Grep allocates in all (an upper bound of the heap it adds on
// top of the caller's string); the target is under 1 s and at most one
// copy of the result. "no-literal" is the slow case: a pattern without a
// literal of three bytes runs at the regexp engine's speed.
func BenchmarkGrep50MB(b *testing.B) {
	const size = 50 << 20
	for _, bc := range []struct {
		name, pattern string
		doc           func(int) string
	}{
		{"lines/literal", "needle", logLines},
		{"lines/regexp", `status=20[12] path=/api/v1/items/\d+7 bytes=99`, logLines},
		{"lines/case-insensitive", `(?i)NEEDLE FOUND`, logLines},
		{"lines/no-literal", `[0-9]{9}[g-z]`, logLines},
		{"one-line-json/literal", "needle", oneLine},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, _ := newStore(b)
			doc := bc.doc(size)
			e := put(b, s, "t", "{}", doc)
			p := fsProviderAt(s.Dir())
			args := map[string]any{"pattern": bc.pattern, "path": e.Handle, "max_results": 1000}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for b.Loop() {
				grepCall(b, p, args)
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
			b.SetBytes(int64(len(doc)))
			runtime.KeepAlive(doc)
		})
	}
}

// BenchmarkPut50MB stores a 50 MB result: the file write and the counts.
func BenchmarkPut50MB(b *testing.B) {
	doc := logLines(50 << 20)
	s, _ := newStore(b)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		put(b, s, "t", "{}", doc)
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
}

// TestGrepOfALargeResultAllocatesLessThanACopy holds Grep to its memory
// bound: a block at a time for lines, one copy for a single huge line.
//
// Not parallel: TotalAlloc counts every goroutine's allocations, and
// parallel tests only start once the sequential ones are done.
func TestGrepOfALargeResultAllocatesLessThanACopy(t *testing.T) {
	const size = 16 << 20
	for _, tc := range []struct {
		name  string
		doc   string
		limit uint64
	}{
		{"log lines take a few blocks", logLines(size), 4 * grepBlock},
		{"one huge line takes one copy", oneLine(size), size + 4*grepBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newStore(t)
			e := put(t, s, "t", "{}", tc.doc)
			raw, _ := json.Marshal(map[string]any{"pattern": "needle", "path": e.Handle})
			p := fsProviderAt(s.Dir())
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := p.Call(context.Background(), tools.Call{Name: "Grep", Arguments: raw})
			runtime.ReadMemStats(&after)
			if err != nil || res.IsError || !strings.Contains(res.Content, "needle") {
				t.Fatalf("grep: %v %s", err, tools.Snippet(res.Content, 300))
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > tc.limit {
				t.Errorf("grep allocated %d MB, want at most %d MB", got>>20, tc.limit>>20)
			}
		})
	}
}
