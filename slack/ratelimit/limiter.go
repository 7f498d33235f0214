// Package ratelimit budgets the bot's Slack Web API calls. Its Transport
// stands in front of slack-go's HTTP client and lets each call go when its
// method's token bucket has a token, by priority; its Pacer spreads
// chat.update's budget over the progress messages being kept fresh.
//
// The Transport reads the method from the URL and, for methods budgeted
// per channel, the channel from the form body, and waits for a token of
// that method's budget (method × workspace, or method × channel) before
// the call leaves. The buckets live in a shared store (Buckets), so
// replicas sharing a store share one workspace's budget.
//
// Calls waiting for the same bucket queue by priority, oldest first within
// a priority, and a low priority may only take a token while the bucket
// keeps a reserve for the higher ones: a final answer never queues behind
// a progress refresh, and refreshes cannot drain the budget answers need.
// A 429 teaches the limiter: the bucket is closed for Retry-After, and its
// rate halved for a minute (and again at each further 429).
//
// The time a call waits in the queue is not part of its time on the wire:
// each call gets Options.Wire from the moment its token is taken, and
// only the caller's own context bounds its wait.
package ratelimit

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack/storeguard"
)

// Buckets are token buckets, shared by the replicas or kept by one.
type Buckets interface {
	// Take takes one token from the token bucket key when more than keep
	// tokens are in it, and returns 0. Otherwise it takes nothing and
	// returns how long until the bucket will hold keep+1. The bucket
	// holds at most burst tokens, gains rate tokens a second and starts
	// full.
	Take(ctx context.Context, key string, rate float64, burst, keep int) (time.Duration, error)
}

// DefaultWire is Options.Wire when it is zero.
const DefaultWire = 30 * time.Second

// Options configure a Transport.
type Options struct {
	// Next makes the calls once their budget lets them go.
	Next http.RoundTripper
	// Shared are the buckets every replica takes from (the state store).
	Shared Buckets
	// Local are this process's own buckets, used while Shared fails; New
	// panics without them.
	Local Buckets
	// Limits are the budgets by Web API method; other methods are not
	// limited.
	Limits map[string]config.RateLimit
	// Wire bounds a call from the moment its token is taken to the end of
	// its answer; the caller's deadline, when earlier, still holds.
	// DefaultWire when zero.
	Wire time.Duration
	// Guard is the policy every take from Shared passes: the bot's own,
	// shared with its other store calls, so one outage is noticed once.
	// Nil makes one of the limiter's own, with Log and Cause.
	Guard *storeguard.Guard
	// Log is told when Shared fails and when it answers again; nil logs
	// nothing.
	Log *zap.Logger
	// Cause renders Shared's errors for the log without hosts or secrets;
	// nil logs no cause.
	Cause func(error) string
}

// clock is the limiter's time, injected by its tests.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Learning from 429s.
const (
	penaltyPeriod = time.Minute // a lowered rate holds this long after the last 429
	minPenalty    = 1.0 / 8     // the lowest a 429 brings a rate to
)

// limit is a method's budget, resolved.
type limit struct {
	rate       float64 // tokens a second
	burst      int
	perChannel bool
}

// Transport is an http.RoundTripper that budgets the Web API calls; see
// the package comment. Make one with New.
type Transport struct {
	next    http.RoundTripper
	store   Buckets // shared by the replicas
	local   Buckets // when the store fails, this process's own buckets
	clock   clock
	wire    time.Duration
	guard   *storeguard.Guard // every take from store passes it
	log     *zap.Logger
	limits  map[string]limit
	mu      sync.Mutex
	team    string
	queues  map[string]*queue
	methods map[string]*methodStats
	seq     uint64
	records int
}

// pruneEvery is how many calls pass between two sweeps of idle queues.
const pruneEvery = 1024

// prune forgets the queues of buckets nobody waits for, that learnt
// nothing from a 429 and were not used in the last two minutes (one per
// channel the bot ever posted in would otherwise pile up); l.mu held.
func (l *Transport) prune(now time.Time) {
	for k, q := range l.queues {
		q.used.roll(now)
		if len(q.waiting) == 0 && q.penalty == 1 && !now.Before(q.closedUntil) && q.used.cur == 0 && q.used.prev == 0 {
			delete(l.queues, k)
		}
	}
}

// queue is one bucket's waiting calls and what 429s taught about it.
type queue struct {
	method       string
	waiting      []*waiter // by priority, then arrival
	closedUntil  time.Time // Retry-After of the last 429
	penalty      float64   // the rate's multiplier, 1 without 429s
	penaltyUntil time.Time
	used         window
}

type waiter struct {
	prio Priority
	seq  uint64
	wake chan struct{}
}

// errNoBudget is what wait returns, when told not to wait, if no token is
// free at once.
var errNoBudget = errors.New("ratelimit: no rate budget left at once")

// New makes a Transport budgeting the calls o.Next makes.
func New(o Options) *Transport {
	if o.Shared == nil || o.Local == nil {
		panic("ratelimit: Options.Shared and Options.Local must be set")
	}
	return newTransport(o, realClock{})
}

// newTransport is New on clk.
func newTransport(o Options, clk clock) *Transport {
	l := &Transport{next: o.Next, store: o.Shared, local: o.Local, clock: clk, log: o.Log, guard: o.Guard,
		wire: cmp.Or(o.Wire, DefaultWire), limits: map[string]limit{},
		queues: map[string]*queue{}, methods: map[string]*methodStats{}}
	if l.log == nil {
		l.log = zap.NewNop()
	}
	if l.guard == nil {
		l.guard = storeguard.New(storeguard.Options{Cooldown: storeCooldown, Trip: 1, Log: l.log, Cause: o.Cause, Now: clk.Now})
	}
	for m, rl := range o.Limits {
		l.limits[m] = limit{rate: rl.PerMinute / 60, burst: rl.Burst, perChannel: rl.Per == config.PerChannel}
	}
	return l
}

// SetWorkspace names the workspace the budgets belong to (auth.test's
// team), so replicas of the same app in the same workspace share them.
func (l *Transport) SetWorkspace(team string) {
	l.mu.Lock()
	l.team = team
	l.mu.Unlock()
}

// RoundTrip waits for the call's budget, makes the call, and learns from
// a 429. Once a token is spent the call is no longer cancelled with its
// context: a call that may already have reached Slack is waited for, so
// nothing the caller stopped lands later. From then on it has l.wire to
// be answered, or less if the caller's deadline comes first; the time it
// queued does not count against it.
func (l *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := path.Base(req.URL.Path)
	if path.Base(path.Dir(req.URL.Path)) != "api" {
		// Not a Web API method (a file's upload URL, a response_url): one
		// name for all of them, as each such path is unique.
		method = "other"
	}
	lim, limited := l.limits[method]
	channel := ""
	if limited && lim.perChannel {
		var err error
		if channel, err = channelOf(req); err != nil {
			return nil, err
		}
	}
	o := optsOf(req.Context())
	start := l.clock.Now()
	if limited && (o.paid == nil || !o.paid.spend(method)) {
		if err := l.wait(req.Context(), method, channel, o.prio, false); err != nil {
			return nil, err
		}
	}
	waited := l.clock.Now().Sub(start)
	var ctx context.Context
	var cancel context.CancelFunc
	if o.prio == Cosmetic {
		// What only decorates may be cut off on the wire too: the
		// shutdown drops it rather than wait for it.
		ctx, cancel = context.WithTimeout(req.Context(), l.wire)
	} else {
		ctx, cancel = detach(req.Context(), l.wire)
	}
	resp, err := l.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
	} else {
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	}
	l.record(method, channel, waited, resp)
	return resp, err
}

// TakeNow takes a token of method's budget for channel if one is free at
// once; the returned context's next call of method spends it.
func (l *Transport) TakeNow(ctx context.Context, method, channel string, p Priority) (context.Context, bool) {
	if _, ok := l.limits[method]; !ok {
		return WithPriority(ctx, p), true
	}
	if l.wait(ctx, method, channel, p, true) != nil {
		return ctx, false
	}
	o := optsOf(ctx)
	o.prio, o.paid = p, &paid{method: method, ok: true}
	return context.WithValue(ctx, callKey{}, o), true
}

// key is the bucket of a call.
func (l *Transport) key(method, channel string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keyLocked(method, channel)
}

// keyLocked is key with l.mu held.
func (l *Transport) keyLocked(method, channel string) string {
	k := "slack-rate:" + l.team + ":" + method
	if l.limits[method].perChannel {
		k += ":" + channel
	}
	return k
}

// wait queues for a token of method (in channel, where budgets are per
// channel) at priority p. With now it does not wait: it returns
// errNoBudget unless a token is free at once.
func (l *Transport) wait(ctx context.Context, method, channel string, p Priority, now bool) error {
	lim := l.limits[method]
	key := l.key(method, channel)
	keep := int(reserve[p] * float64(lim.burst))
	l.mu.Lock()
	q := l.queues[key]
	if q == nil {
		q = &queue{method: method, penalty: 1}
		l.queues[key] = q
	}
	l.seq++
	w := &waiter{prio: p, seq: l.seq, wake: make(chan struct{}, 1)}
	i := 0
	for i < len(q.waiting) && q.waiting[i].prio <= p {
		i++
	}
	q.waiting = append(q.waiting[:i], append([]*waiter{w}, q.waiting[i:]...)...)
	l.mu.Unlock()
	defer l.leave(q, w)

	for {
		l.mu.Lock()
		head := q.waiting[0] == w
		t := l.clock.Now()
		closed := q.closedUntil.Sub(t)
		if !t.Before(q.penaltyUntil) && q.penalty < 1 {
			q.penalty = min(1, q.penalty*2)
			q.penaltyUntil = t.Add(penaltyPeriod)
		}
		rate := lim.rate * q.penalty
		l.mu.Unlock()
		var d time.Duration
		switch {
		case !head && now:
			return errNoBudget
		case !head:
			d = -1 // until woken
		case closed > 0:
			if now {
				return errNoBudget
			}
			d = closed
		default:
			var err error
			d, err = l.take(ctx, key, rate, lim.burst, keep)
			if err != nil {
				return err
			}
			if d == 0 {
				return nil
			}
			if now {
				return errNoBudget
			}
		}
		var timer <-chan time.Time
		if d >= 0 {
			timer = l.clock.After(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.wake:
		case <-timer:
		}
	}
}

// leave takes w out of its queue and wakes the next head.
func (l *Transport) leave(q *queue, w *waiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, x := range q.waiting {
		if x == w {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			break
		}
	}
	if len(q.waiting) > 0 {
		select {
		case q.waiting[0].wake <- struct{}{}:
		default:
		}
	}
}

// learn closes a bucket for Retry-After and lowers its rate.
func (l *Transport) learn(q *queue, retryAfter time.Duration) {
	now := l.clock.Now()
	q.closedUntil = now.Add(max(retryAfter, time.Second))
	q.penalty = max(q.penalty/2, minPenalty)
	q.penaltyUntil = now.Add(penaltyPeriod)
}

// rate is the budget of method now, in calls a second (lowered by recent
// 429s); 0 when the method is not limited.
func (l *Transport) Rate(method string) float64 {
	lim, ok := l.limits[method]
	if !ok || lim.perChannel {
		return lim.rate
	}
	key := l.key(method, "")
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.queues[key]; q != nil {
		return lim.rate * q.penalty
	}
	return lim.rate
}

// record counts a call, its wait and a 429.
func (l *Transport) record(method, channel string, waited time.Duration, resp *http.Response) {
	key := l.key(method, channel)
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.methods[method]
	if m == nil {
		m = &methodStats{}
		l.methods[method] = m
	}
	m.calls++
	m.wait += waited
	m.lastWait = waited
	m.maxWait = max(m.maxWait, waited)
	q := l.queues[key]
	if q == nil {
		q = &queue{method: method, penalty: 1}
		l.queues[key] = q
	}
	q.used.add(now)
	if l.records++; l.records%pruneEvery == 0 {
		l.prune(now)
	}
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		m.limited++
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		l.learn(q, time.Duration(secs)*time.Second)
	}
}

// channelOf reads the channel a call is about from its form body, and
// puts the body back for the transport.
func channelOf(req *http.Request) (string, error) {
	if req.Body == nil {
		return req.URL.Query().Get("channel"), nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return "", err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
		return req.URL.Query().Get("channel"), nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return "", nil
	}
	return form.Get("channel"), nil
}

// detach keeps ctx's values but not its cancellation, and gives the call
// wire from now, or until ctx's deadline when that comes first.
func detach(ctx context.Context, wire time.Duration) (context.Context, context.CancelFunc) {
	dl := time.Now().Add(wire)
	if cdl, ok := ctx.Deadline(); ok && cdl.Before(dl) {
		dl = cdl
	}
	return context.WithDeadline(context.WithoutCancel(ctx), dl)
}

// cancelBody releases the detached context when the response is read.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
