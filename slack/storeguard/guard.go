// Package storeguard is the one policy the Slack headend applies to every
// call it makes to the state store, so that a store that fails or hangs
// slows nothing down and costs a few log lines, not one per call.
//
// Every call is bounded by a timeout, whatever the store's own: a call that
// does not answer in time is abandoned and counts as failed. Failed calls
// of one kind in a row (Options.Trip; one slow call under load is not an
// outage) open that kind's breaker: for the cooldown that follows no call
// of the kind asks the store
// (calls fail at once with ErrDown and their callers fall back), then one
// call at a time probes it, and the first call that succeeds closes the
// breaker again. A decision that needs the store (is this event new? may
// this session have the thread?) retries with backoff for up to the
// patience; once one has waited the patience out, the store counts as down
// and later decisions try it once, until a call succeeds. Each kind of
// call is logged when it starts failing (at most once a minute if the store
// flaps) and when the store answers it again. A call its own caller
// cancelled (a Stop, the shutdown) is no failure of the store.
package storeguard

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Defaults.
const (
	// DefaultPatience is how long a decision retries a failing store.
	DefaultPatience = 20 * time.Second
	// DefaultCooldown is how long the store is left alone after a failure,
	// at most: a patience under four times as long shortens it to a
	// quarter of the patience, so a decision still probes a few times.
	DefaultCooldown = 5 * time.Second
	// DefaultTimeout bounds a call when its caller gives no timeout.
	DefaultTimeout = 5 * time.Second
	// DefaultTrip is how many failed calls in a row open the breaker.
	DefaultTrip = 3
)

// Backoff between a decision's tries of a failing store.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 2 * time.Second
)

// warnEvery bounds how often one kind of failing call, or one fallback, is
// logged at warn.
const warnEvery = time.Minute

// ErrDown is the answer to a call not made because the breaker is open.
var ErrDown = errors.New("the state store is failing; not asked")

// errSlow is a call the store did not answer within its timeout.
var errSlow = errors.New("the state store did not answer in time")

// Options configure a Guard.
type Options struct {
	// Patience is how long a decision retries; DefaultPatience when zero.
	Patience time.Duration
	// Cooldown is how long the breaker stays open after a failure; zero
	// means DefaultCooldown, shortened to a quarter of Patience.
	Cooldown time.Duration
	// Trip is how many failed calls in a row open the breaker;
	// DefaultTrip when zero. A failed probe opens it again at once.
	Trip int
	// Log receives the outage lines; nil logs nothing.
	Log *zap.Logger
	// Cause renders the store's errors for the log without hosts or
	// secrets; nil logs no cause.
	Cause func(error) string
	// Now is the clock; time.Now when nil (tests move their own).
	Now func() time.Time
}

// Guard applies the policy. Its zero value is not usable: make one with New.
type Guard struct {
	patience, cooldown time.Duration
	trip               int
	log                *zap.Logger
	cause              func(error) string
	now                func() time.Time

	mu sync.Mutex
	// downSince is when a decision last waited out the patience; zero
	// once a call succeeds.
	downSince time.Time
	kinds     map[string]*kind
	fallbacks map[string]time.Time // fallback message → when last logged at warn
}

// kind is what the guard knows of one kind of call: its breaker — each
// kind has its own, so that calls with a tight timeout (a rate budget's
// 200 ms) failing under load do not stop the others — and its log.
type kind struct {
	fails     int       // failed calls in a row
	open      bool      // the breaker is open: fails reached trip
	openUntil time.Time // nobody asks the store for this kind before then
	probing   bool      // one call is asking it again
	failing   bool      // its last call failed
	warned    bool      // this failure was logged, so its end will be too
	lastWarn  time.Time // when a failure of it was last logged
}

// New makes a Guard.
func New(o Options) *Guard {
	g := &Guard{patience: o.Patience, cooldown: o.Cooldown, trip: o.Trip, log: o.Log, cause: o.Cause, now: o.Now,
		kinds: map[string]*kind{}, fallbacks: map[string]time.Time{}}
	if g.patience <= 0 {
		g.patience = DefaultPatience
	}
	if g.cooldown <= 0 {
		g.cooldown = min(DefaultCooldown, g.patience/4)
	}
	if g.trip <= 0 {
		g.trip = DefaultTrip
	}
	if g.log == nil {
		g.log = zap.NewNop()
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g
}

// Patience is how long a decision retries a failing store.
func (g *Guard) Patience() time.Duration { return g.patience }

// Call makes one call of f, of the named kind, bounded by timeout
// (DefaultTimeout when zero). It returns ErrDown without calling f while
// the breaker is open, and ctx's error when ctx ended first.
func (g *Guard) Call(ctx context.Context, kind string, timeout time.Duration, f func(context.Context) error) error {
	_, err := Do(ctx, g, kind, timeout, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// Do is Call for a call that returns a value: the value is handed back
// only when the call answered in time, never written after Do returned.
func Do[T any](ctx context.Context, g *Guard, kind string, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	var zero T
	probe, ask := g.ask(kind)
	if !ask {
		// The kind is failing too, for the log: its calls are not made.
		g.result(kind, ErrDown)
		return zero, ErrDown
	}
	v, err := bounded(ctx, timeout, f)
	if err != nil && ctx.Err() != nil {
		// Cancelled by its caller: says nothing of the store.
		g.mu.Lock()
		if probe {
			g.kind(kind).probing = false
		}
		g.mu.Unlock()
		return zero, ctx.Err()
	}
	g.result(kind, err)
	return v, err
}

// kind is the record of the named kind of call; g.mu held.
func (g *Guard) kind(name string) *kind {
	k := g.kinds[name]
	if k == nil {
		k = &kind{}
		g.kinds[name] = k
	}
	return k
}

// ask reports whether a call of the named kind may ask the store, and
// whether it is the one probe of its open breaker.
func (g *Guard) ask(name string) (probe, ask bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.kind(name)
	switch {
	case !k.open:
		return false, true
	case k.probing || g.now().Before(k.openUntil):
		return false, false
	}
	k.probing = true
	return true, true
}

// bounded calls f with ctx bounded by timeout, and gives up waiting for
// it then, whatever f does: an abandoned call ends on its own, and what it
// returns is dropped. A panic in f is raised again on the caller's
// goroutine, where its recovery is.
func bounded[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v        T
		err      error
		panicked any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panicked: p}
			}
		}()
		v, err := f(cctx)
		done <- result{v: v, err: err}
	}()
	select {
	case r := <-done:
		if r.panicked != nil {
			panic(r.panicked)
		}
		return r.v, r.err
	case <-cctx.Done():
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		return zero, errSlow
	}
}

// result notes the outcome of a call of kind: the breaker and the log.
func (g *Guard) result(name string, err error) {
	g.mu.Lock()
	now := g.now()
	k := g.kind(name)
	warn, back := false, false
	if !errors.Is(err, ErrDown) {
		k.probing = false
	}
	if err == nil {
		k.open, k.fails, g.downSince = false, 0, time.Time{}
		if k.failing {
			k.failing = false
			back, k.warned = k.warned, false
		}
	} else {
		if !errors.Is(err, ErrDown) { // a call not made leaves the breaker as it is
			k.fails++
			if k.fails >= g.trip || k.open {
				k.open, k.openUntil = true, now.Add(g.cooldown)
			}
		}
		k.failing = true
		if !k.warned && now.Sub(k.lastWarn) >= warnEvery {
			k.warned, k.lastWarn, warn = true, now, true
		}
	}
	g.mu.Unlock()
	switch {
	case warn:
		fields := []zap.Field{zap.String("calls", name)}
		if g.cause != nil {
			fields = append(fields, zap.String("error", g.cause(err)))
		}
		g.log.Warn("state store failing; retrying", fields...)
	case back:
		g.log.Info("state store answering again", zap.String("calls", name))
	}
}

// Down reports whether a decision has waited out the patience since the
// store last answered.
func (g *Guard) Down() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.downSince.IsZero()
}

// gaveUp records that a decision waited out the patience.
func (g *Guard) gaveUp() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.downSince.IsZero() {
		g.downSince = g.now()
	}
}

// Decide calls try, itself a guarded call, until it succeeds, ctx ends or
// the patience has passed, backing off between tries, and returns try's
// last error. While the store is down one try is the answer.
func (g *Guard) Decide(ctx context.Context, try func(context.Context) error) error {
	_, err := g.Await(ctx, 0, func(ctx context.Context) (bool, error) { return true, try(ctx) }, nil)
	return err
}

// Await calls try, itself a guarded call, until it reports true: every
// `every` while it answers false (waiting is called before the first such
// wait), with backoff while it fails. It gives up with try's error once the
// store has failed for the patience, at once while the store is down, and
// with ctx's error when ctx ends.
func (g *Guard) Await(ctx context.Context, every time.Duration, try func(context.Context) (bool, error), waiting func()) (bool, error) {
	var failing time.Time // since when try has been failing
	backoff := retryFirst
	waited := false
	for {
		ok, err := try(ctx)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		pause := every
		switch {
		case err == nil && ok:
			return true, nil
		case err == nil:
			failing, backoff = time.Time{}, retryFirst
			if !waited && waiting != nil {
				waiting()
			}
			waited = true
		default:
			if failing.IsZero() {
				failing = time.Now()
			}
			if g.Down() {
				return false, err
			}
			if time.Since(failing)+backoff > g.patience {
				g.gaveUp()
				return false, err
			}
			pause, backoff = backoff, min(backoff*2, retryMax)
			g.log.Debug("state store call failed; retrying", zap.Duration("in", pause))
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// Fallback logs a decision made without the store: at warn at most once a
// minute for each msg, else at debug, so a long outage does not cost a
// warning per event.
func (g *Guard) Fallback(msg string, fields ...zap.Field) {
	g.mu.Lock()
	now := g.now()
	warn := now.Sub(g.fallbacks[msg]) >= warnEvery
	if warn {
		g.fallbacks[msg] = now
	}
	g.mu.Unlock()
	if warn {
		g.log.Warn(msg, fields...)
	} else {
		g.log.Debug(msg, fields...)
	}
}
