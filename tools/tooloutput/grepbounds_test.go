package tooloutput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAnEightThousandCharacterGrepPatternIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	e := put(t, s, "t", "{}", lines(100, 40))
	call := fsTools(t, s.Dir())
	out := call("Grep", obj{"pattern": strings.Repeat("(a|b)", 1600), "path": e.Handle})
	if !out.IsError || !strings.Contains(out.Content, "at most 1024 bytes") {
		t.Fatalf("Grep with an 8,000-character pattern = %.200q…, want it refused naming the limit", out.Content)
	}
	out = call("Grep", obj{"pattern": strings.Repeat("x", 1024), "path": e.Handle})
	if out.IsError {
		t.Errorf("a pattern of exactly 1024 bytes was refused: %s", out.Content)
	}
}

// cancelsAfter is a context whose Err reports cancellation from its n-th
// look on, and counts the looks. A search of one block looks twice between
// blocks (before it, and before finding the end of the file): a third look
// happens only within the block.
type cancelsAfter struct {
	context.Context
	n     int64
	looks atomic.Int64
}

func (c *cancelsAfter) Err() error {
	if c.looks.Add(1) >= c.n {
		return context.Canceled
	}
	return c.Context.Err()
}

// bigFile writes a file of at least size bytes of short lines to dir, for
// a search to take a while; it returns its name.
func bigFile(t *testing.T, dir string, size int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%08d the quick brown fox jumps over the lazy dog %d\n", i, i*7919)
	}
	name := "big.txt"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestAGrepLooksAtItsContextWithinABlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := bigFile(t, dir, grepBlock/2) // one block: looked at once before it
	p := &fsProvider{root: dir}
	for _, pattern := range []string{`\d{3}[a-z]* (fox|cat)\s+z`, `lazy dog \d+x`} { // without and with a literal
		ctx := &cancelsAfter{Context: context.Background(), n: 3}
		raw, _ := json.Marshal(obj{"pattern": pattern, "path": name})
		_, err := p.grep(ctx, raw)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: the search ended with %v after %d looks at its context, want it cancelled within the block", pattern, err, ctx.looks.Load())
		}
	}
}

func TestACancelledGrepOverALargeInputReturnsAndSaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := bigFile(t, dir, 16<<20)
	p := &fsProvider{root: dir}
	ctx, cancel := context.WithCancel(context.Background())
	started := &cancelsAfter{Context: ctx, n: 1 << 62}
	raw, _ := json.Marshal(obj{"pattern": `(?i)[a-z]{5} \d+[^x]*(ZZ|QQ)$`, "path": name})
	done := make(chan error, 1)
	go func() { _, err := p.grep(started, raw); done <- err }()
	// Cancel once the search is under way, past its first block's start.
	for started.looks.Load() < 3 {
		select {
		case err := <-done:
			t.Fatalf("the search ended before it could be cancelled: %v", err)
		default:
			runtime.Gosched()
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled search ended with %v, want it cancelled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the search was still running 5 s after it was cancelled")
	}
}

// Not parallel: it counts the goroutines of the whole test binary.
func TestAGrepRunsOnTheGoroutineThatCallsIt(t *testing.T) {
	dir := t.TempDir()
	name := bigFile(t, dir, 4<<20)
	p := &fsProvider{root: dir}
	raw, _ := json.Marshal(obj{"pattern": `\d{3}[a-z]* (fox|cat)\s+z`, "path": name})
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	var searching atomic.Bool
	searching.Store(true)
	wg.Go(func() {
		defer searching.Store(false)
		if _, err := p.grep(context.Background(), raw); err != nil {
			t.Error(err)
		}
	})
	most := 0
	for searching.Load() {
		most = max(most, runtime.NumGoroutine()-base)
		runtime.Gosched()
	}
	wg.Wait()
	if most > 1 {
		t.Errorf("the search ran on %d goroutines, want one", most)
	}
}
