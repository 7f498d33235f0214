package main

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"
)

// gauge is what the fake model sees of the fleet: how many requests are in
// flight, overall and per thread, the most at once, and who called.
type gauge struct {
	mu      sync.Mutex
	s       gaugeState
	threads map[string]int // thread tag → requests in flight
	changed chan struct{}  // closed and replaced on every change
}

// gaugeState is a copy of a gauge's figures.
type gaugeState struct {
	inFlight, peak, calls int
	byModel               map[string]int // model name (one per replica) → calls
	byQuestion            map[string]int // question tag → calls
	overlaps              []string       // threads that had two requests in flight at once
}

func newGauge() *gauge {
	return &gauge{s: gaugeState{byModel: map[string]int{}, byQuestion: map[string]int{}}, threads: map[string]int{}, changed: make(chan struct{})}
}

func (g *gauge) enter(thread, question, model string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.s.inFlight++
	g.s.calls++
	g.s.peak = max(g.s.peak, g.s.inFlight)
	g.s.byModel[model]++
	g.s.byQuestion[question]++
	if thread != "" {
		g.threads[thread]++
		if g.threads[thread] > 1 {
			g.s.overlaps = append(g.s.overlaps, thread)
		}
	}
	g.notify()
}

func (g *gauge) leave(thread string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.s.inFlight--
	if thread != "" {
		g.threads[thread]--
	}
	g.notify()
}

// notify wakes waiters; g.mu held.
func (g *gauge) notify() {
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *gauge) snapshot() gaugeState {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.s
	s.byModel = maps.Clone(g.s.byModel)
	s.byQuestion = maps.Clone(g.s.byQuestion)
	s.overlaps = append([]string(nil), g.s.overlaps...)
	return s
}

// waitFor blocks until cond holds over the gauge's figures or ctx ends.
func (g *gauge) waitFor(ctx context.Context, cond func(gaugeState) bool) error {
	for {
		g.mu.Lock()
		ch := g.changed
		g.mu.Unlock()
		if cond(g.snapshot()) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// logBuffer collects a replica's log (zap JSON lines) as the process
// writes it, and signals every write.
type logBuffer struct {
	mu   sync.Mutex
	buf  strings.Builder
	wake chan struct{}
}

func newLogBuffer() *logBuffer { return &logBuffer{wake: make(chan struct{})} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.wake)
	l.wake = make(chan struct{})
	return len(p), nil
}

// changed returns a channel closed at the next write.
func (l *logBuffer) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wake
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines returns the complete log lines whose message is msg, decoded.
func (l *logBuffer) lines(msg string) []map[string]any {
	var out []map[string]any
	for line := range strings.Lines(l.String()) {
		if !strings.HasSuffix(line, "\n") || !strings.Contains(line, msg) {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// count is how many complete log lines have the message msg.
func (l *logBuffer) count(msg string) int { return len(l.lines(msg)) }
