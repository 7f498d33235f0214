package tools

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/internal/wait"
)

func TestAQueueOfTwoNeverRunsAThirdCall(t *testing.T) {
	t.Parallel()
	var running, peak atomic.Int64
	release := make(chan struct{})
	p := &funcProvider{ns: "q", tools: []Tool{{Name: "q__slow", Schema: anyObject, Queue: "pair"}},
		call: func(ctx context.Context, c Call) (Result, error) {
			n := running.Add(1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			defer running.Add(-1)
			select {
			case <-release:
			case <-ctx.Done():
				return Result{}, ctx.Err()
			}
			return Result{Content: "done"}, nil
		}}
	o := newOrch(t, Options{Queues: map[string]int{"pair": 2}}, p)
	const calls = 20
	outs := make([]Outcome, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = o.Execute(context.Background(), fmt.Sprint(i), "q__slow", "{}", 0)
		}()
	}
	// Wait until two run and the other eighteen wait, then let them through
	// one at a time: at every moment at most two may be inside the tool.
	wait.Eventually(t, "two calls running and the rest waiting", func() bool { s := o.Queues()[0]; return s.Running == 2 && s.Waiting == calls-2 })
	for range calls {
		release <- struct{}{}
	}
	wg.Wait()
	if peak.Load() != 2 {
		t.Fatalf("peak concurrency %d, want 2", peak.Load())
	}
	waited := 0
	for _, out := range outs {
		if !out.OK() || out.Queue != "pair" {
			t.Fatalf("outcome %+v", out)
		}
		if out.QueueWait > 0 {
			waited++
		}
	}
	if waited < calls-2 {
		t.Fatalf("only %d calls report a queue wait", waited)
	}
}

func TestAQueueWaitEndsWithTheSession(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	p := &funcProvider{ns: "q", tools: []Tool{{Name: "q__t", Schema: anyObject, Queue: "one"}},
		call: func(ctx context.Context, c Call) (Result, error) {
			if string(c.Arguments) == `{"hold":true}` {
				<-hold
			}
			return Result{Content: "ran"}, nil
		}}
	o := newOrch(t, Options{Queues: map[string]int{"one": 1}}, p)
	go o.Execute(context.Background(), "holder", "q__t", `{"hold":true}`, 0)
	wait.Eventually(t, "one call running", func() bool { return o.Queues()[0].Running == 1 })

	t.Run("a cancelled wait gives up at once and says so", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan Outcome, 1)
		go func() { done <- o.Execute(ctx, "w", "q__t", "{}", 0) }()
		wait.Eventually(t, "one call waiting", func() bool { return o.Queues()[0].Waiting == 1 })
		cancel()
		out := <-done
		if out.Failure != FailCanceled || !strings.Contains(out.Content, "cancelled while waiting in queue one") {
			t.Fatalf("%q: %s", out.Failure, out.Content)
		}
		if s := o.Queues()[0]; s.Waiting != 0 || s.Running != 1 {
			t.Fatalf("queue after cancel: %+v", s)
		}
	})
	t.Run("a wait past the session's deadline is blamed on the deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		out := o.Execute(ctx, "w", "q__t", "{}", 0)
		if out.Failure != FailTimeout || !strings.Contains(out.Content, "time for this request ran out") {
			t.Fatalf("%q: %s", out.Failure, out.Content)
		}
	})
}

func TestATimedOutCallFreesItsQueueSlot(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	p := &funcProvider{ns: "q", tools: []Tool{{Name: "q__t", Schema: anyObject, Queue: "one", Timeout: 30 * time.Millisecond}},
		call: func(ctx context.Context, c Call) (Result, error) {
			if string(c.Arguments) == `{"hang":true}` {
				<-block // ignores its context, like a stuck server
			}
			return Result{Content: "ran"}, nil
		}}
	o := newOrch(t, Options{Queues: map[string]int{"one": 1}}, p)
	out := o.Execute(context.Background(), "1", "q__t", `{"hang":true}`, 0)
	if out.Failure != FailTimeout || !strings.Contains(out.Content, "did not answer within 30ms") {
		t.Fatalf("%q: %s", out.Failure, out.Content)
	}
	if next := o.Execute(context.Background(), "2", "q__t", `{}`, 0); !next.OK() || next.Content != "ran" || next.QueueWait > time.Second {
		t.Fatalf("next call: %+v", next)
	}
}

func TestCancelStopsWaitingAndRunningCalls(t *testing.T) {
	t.Parallel()
	p := &funcProvider{ns: "q", tools: []Tool{{Name: "q__t", Schema: anyObject, Queue: "one"}},
		call: func(ctx context.Context, c Call) (Result, error) {
			<-ctx.Done()
			return Result{}, ctx.Err()
		}}
	o := newOrch(t, Options{Queues: map[string]int{"one": 1}}, p)
	done := make(chan Outcome, 2)
	for i := range 2 {
		go func() { done <- o.Execute(context.Background(), fmt.Sprint(i), "q__t", "{}", 0) }()
	}
	wait.Eventually(t, "one call running and one waiting", func() bool { s := o.Queues()[0]; return s.Running == 1 && s.Waiting == 1 })
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if out := <-done; out.Failure != FailClosed || !strings.Contains(out.Content, "shutting down") {
			t.Fatalf("%q: %s", out.Failure, out.Content)
		}
	}
	if !p.closed.Load() {
		t.Fatal("Close did not close the provider")
	}
	if out := o.Execute(context.Background(), "late", "q__t", "{}", 0); out.Failure != FailClosed {
		t.Fatalf("a call after Close: %q", out.Failure)
	}
}
