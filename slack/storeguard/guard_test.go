package storeguard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newGuard(t *testing.T, o Options) (*Guard, *clock, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	o.Log, o.Now = zap.New(core), clk.Now
	return New(o), clk, logs
}

var errBroken = errors.New("connection refused")

func TestAFailureOpensTheBreakerUntilTheCooldownThenOneCallProbes(t *testing.T) {
	g, clk, logs := newGuard(t, Options{Cooldown: time.Second, Trip: 1})
	ctx := context.Background()
	calls := 0
	fail := func(context.Context) error { calls++; return errBroken }
	if err := g.Call(ctx, "dedup", 0, fail); !errors.Is(err, errBroken) {
		t.Fatalf("first call: %v", err)
	}
	for range 5 {
		if err := g.Call(ctx, "dedup", 0, fail); !errors.Is(err, ErrDown) {
			t.Fatalf("a call in the cooldown: %v, want ErrDown", err)
		}
	}
	if calls != 1 {
		t.Fatalf("the store was asked %d times in the cooldown, want once", calls)
	}
	clk.advance(time.Second)
	if err := g.Call(ctx, "dedup", 0, func(context.Context) error { calls++; return nil }); err != nil {
		t.Fatalf("the probe after the cooldown: %v", err)
	}
	if err := g.Call(ctx, "lease", 0, func(context.Context) error { calls++; return nil }); err != nil {
		t.Fatalf("a call after the probe succeeded: %v", err)
	}
	if calls != 3 {
		t.Errorf("%d calls reached the store, want 3", calls)
	}
	if n := logs.FilterMessage("state store failing; retrying").Len(); n != 1 {
		t.Errorf("the outage was logged %d times, want once", n)
	}
	if n := logs.FilterMessage("state store answering again").Len(); n != 1 {
		t.Errorf("the recovery was logged %d times, want once", n)
	}
}

func TestOnlyOneCallProbesAnOpenBreakerAtATime(t *testing.T) {
	g, clk, _ := newGuard(t, Options{Cooldown: time.Second, Trip: 1})
	ctx := context.Background()
	_ = g.Call(ctx, "k", 0, func(context.Context) error { return errBroken })
	clk.advance(time.Second)
	inProbe, release := make(chan struct{}), make(chan struct{})
	probed := make(chan error)
	go func() {
		probed <- g.Call(ctx, "k", 0, func(context.Context) error {
			close(inProbe)
			<-release
			return nil
		})
	}()
	<-inProbe
	if err := g.Call(ctx, "k", 0, func(context.Context) error { return nil }); !errors.Is(err, ErrDown) {
		t.Errorf("a second call while one probes: %v, want ErrDown", err)
	}
	close(release)
	if err := <-probed; err != nil {
		t.Fatal(err)
	}
}

func TestTheBreakerOpensOnlyAfterTripFailuresInARow(t *testing.T) {
	g, _, _ := newGuard(t, Options{Cooldown: time.Second})
	ctx := context.Background()
	calls := 0
	fail := func(context.Context) error { calls++; return errBroken }
	ok := func(context.Context) error { calls++; return nil }
	// Two failures, a success, two failures: never three in a row.
	for _, f := range []func(context.Context) error{fail, fail, ok, fail, fail} {
		_ = g.Call(ctx, "k", 0, f)
	}
	if calls != 5 {
		t.Fatalf("%d of 5 calls reached the store: the breaker opened before %d failures in a row", calls, DefaultTrip)
	}
	_ = g.Call(ctx, "k", 0, fail)
	if err := g.Call(ctx, "k", 0, ok); !errors.Is(err, ErrDown) {
		t.Errorf("after %d failures in a row a call was made: %v", DefaultTrip, err)
	}
}

func TestACallThatHangsIsAbandonedAtItsTimeout(t *testing.T) {
	g, _, logs := newGuard(t, Options{})
	hang := make(chan struct{})
	defer close(hang)
	err := g.Call(context.Background(), "lease", 20*time.Millisecond, func(context.Context) error {
		<-hang // a store that ignores its context
		return nil
	})
	if !errors.Is(err, errSlow) {
		t.Fatalf("a hung call: %v, want errSlow", err)
	}
	if logs.FilterMessage("state store failing; retrying").Len() != 1 {
		t.Error("the hung call was not logged as a failure")
	}
}

func TestACallItsCallerCancelledIsNoFailureOfTheStore(t *testing.T) {
	g, _, logs := newGuard(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	err := g.Call(ctx, "slots", time.Minute, func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call: %v", err)
	}
	if logs.Len() != 0 {
		t.Errorf("a cancelled call was logged: %v", logs.All()[0].Message)
	}
	if err := g.Call(context.Background(), "slots", 0, func(context.Context) error { return nil }); err != nil {
		t.Errorf("the breaker opened on a cancelled call: %v", err)
	}
}

func TestAPanicInAStoreCallReachesItsCaller(t *testing.T) {
	g, _, _ := newGuard(t, Options{})
	defer func() {
		if p := recover(); p != "bug" {
			t.Errorf("recovered %v, want the store's panic", p)
		}
	}()
	_ = g.Call(context.Background(), "k", 0, func(context.Context) error { panic("bug") })
	t.Error("the panic was swallowed")
}

func TestADecisionGivesUpAtItsPatienceAndLaterOnesTryOnce(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	g := New(Options{Patience: 300 * time.Millisecond, Log: zap.New(core)})
	ctx := context.Background()
	tries := 0
	err := g.Decide(ctx, func(ctx context.Context) error {
		return g.Call(ctx, "dedup", 0, func(context.Context) error { tries++; return errBroken })
	})
	if err == nil || !g.Down() {
		t.Fatalf("a decision on a dead store: %v, down %v", err, g.Down())
	}
	if tries < 2 {
		t.Errorf("the decision asked the store %d times within its patience", tries)
	}
	retries := logs.FilterMessage("state store call failed; retrying").Len()
	tries = 0
	time.Sleep(100 * time.Millisecond) // past the cooldown: the next call may probe
	_ = g.Decide(ctx, func(ctx context.Context) error {
		return g.Call(ctx, "dedup", 0, func(context.Context) error { tries++; return errBroken })
	})
	if tries != 1 || logs.FilterMessage("state store call failed; retrying").Len() != retries {
		t.Errorf("a decision while the store is down asked it %d times and retried", tries)
	}
	time.Sleep(100 * time.Millisecond)
	if err := g.Call(ctx, "dedup", 0, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if g.Down() {
		t.Error("a call that succeeded left the store down")
	}
}

func TestAwaitWaitsWhileTheAnswerIsNoAndSaysSoOnce(t *testing.T) {
	g := New(Options{})
	n, waited := 0, 0
	ok, err := g.Await(context.Background(), time.Millisecond, func(context.Context) (bool, error) {
		n++
		return n == 4, nil
	}, func() { waited++ })
	if !ok || err != nil || n != 4 || waited != 1 {
		t.Errorf("Await: ok %v, err %v, %d tries, waiting called %d times", ok, err, n, waited)
	}
}

func TestAFallbackIsAWarningOnceAMinute(t *testing.T) {
	g, clk, logs := newGuard(t, Options{})
	for range 3 {
		g.Fallback("deciding alone")
	}
	clk.advance(time.Minute)
	g.Fallback("deciding alone")
	if n := logs.FilterMessage("deciding alone").FilterLevelExact(zap.WarnLevel).Len(); n != 2 {
		t.Errorf("%d warnings, want 2", n)
	}
}

func TestOneKindsBreakerLeavesTheOthersAsking(t *testing.T) {
	g, _, _ := newGuard(t, Options{Cooldown: time.Minute})
	ctx := context.Background()
	for range DefaultTrip {
		_ = g.Call(ctx, "rate budgets", 0, func(context.Context) error { return errBroken })
	}
	if err := g.Call(ctx, "rate budgets", 0, func(context.Context) error { return nil }); !errors.Is(err, ErrDown) {
		t.Fatalf("the tripped kind asked the store: %v", err)
	}
	asked := false
	if err := g.Call(ctx, "event dedup", 0, func(context.Context) error { asked = true; return nil }); err != nil || !asked {
		t.Errorf("another kind was not asked while one kind's breaker is open: %v", err)
	}
}
