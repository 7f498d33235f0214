package tools

import (
	"context"
	"sync/atomic"
)

// queue bounds how many calls of its tools run at once. Waiting calls are
// served in arrival order (a channel's senders are), and a wait ends as
// soon as the caller's context does, so a session that ends frees its place
// at once.
type queue struct {
	name    string
	slots   chan struct{}
	waiting atomic.Int64
}

func newQueue(name string, concurrency int) *queue {
	return &queue{name: name, slots: make(chan struct{}, max(concurrency, 1))}
}

// acquire takes a slot, or returns the reason it gave up: ctx's error, or
// errClosed when stop closes first.
func (q *queue) acquire(ctx context.Context, stop <-chan struct{}) error {
	select {
	case q.slots <- struct{}{}:
		return nil
	default:
	}
	q.waiting.Add(1)
	defer q.waiting.Add(-1)
	select {
	case q.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return errClosed
	}
}

func (q *queue) release() { <-q.slots }

// QueueStats is a queue's state at one moment.
type QueueStats struct {
	Name        string
	Concurrency int
	Running     int
	Waiting     int
}

// Queues reports the state of every named queue, sorted by name.
func (o *Orchestrator) Queues() []QueueStats {
	out := make([]QueueStats, 0, len(o.queues))
	for _, q := range o.queues {
		out = append(out, QueueStats{Name: q.name, Concurrency: cap(q.slots), Running: len(q.slots), Waiting: int(q.waiting.Load())})
	}
	sortBy(out, func(s QueueStats) string { return s.Name })
	return out
}
