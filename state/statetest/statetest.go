// Package statetest is the conformance suite every state.Store backend
// must pass: each backend's tests call Run with a function that opens a
// fresh, empty store, so memory, SQLite and Redis are held to one
// definition of the behaviour the Slack headend relies on.
package statetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/state"
)

// Expiry is checked with real time because a shared backend (Redis) keeps
// its own clock. A short TTL is only ever asserted to have expired, never
// to still be live, so a slow machine (-race) delays a test but cannot
// fail it; liveness is asserted under long TTLs.
const (
	short    = 60 * time.Millisecond
	long     = time.Minute
	patience = 3 * time.Second
	// slotPatience bounds how long one of twenty contenders waits for a slot
	// that others keep taking and giving back: long enough for a loaded
	// machine under the race detector, short enough that a slot never
	// given back fails the test rather than the suite.
	slotPatience = 30 * time.Second
)

// Run runs the whole suite as subtests of t. open must return a new,
// empty store for each call; Run closes it when the subtest ends.
func Run(t *testing.T, open func(t *testing.T) state.Store) {
	t.Helper()
	groups := []struct {
		name  string
		tests []test
	}{
		{"once", onceTests},
		{"lease", leaseTests},
		{"mark", markTests},
		{"slots", slotTests},
		{"claims", claimTests},
		{"claim owners", claimOwnerTests},
		{"counters", counterTests},
		{"buckets", bucketTests},
		{"sessions", sessionTests},
		{"progress", progressTests},
		{"retention", retentionTests},
		{"health", healthTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					// The store itself, not a wrapper: a wrapper would hide
					// the one-step paths a backend offers beside Store
					// (Redis's claim scripts), and the suite would test the
					// fallback instead.
					s := open(t)
					t.Cleanup(func() {
						if errors.Is(s.Ping(ctx), state.ErrClosed) {
							return // the test closed it itself
						}
						if err := s.Close(); err != nil {
							t.Errorf("Close: %v", err)
						}
					})
					tc.run(t, s)
				})
			}
		})
	}
}

// test is one behaviour, named as a sentence.
type test struct {
	name string
	run  func(t *testing.T, s state.Store)
}

// eventually polls cond every interval until it holds, failing the test
// after patience. interval is longer than short where polling itself
// could renew what is waited on, so an implementation that extends a TTL
// on every call still shows the TTL's end.
func eventually(t *testing.T, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", patience, what)
		}
		time.Sleep(interval)
	}
}

// truth, total and listed fail the test on an error and return the value,
// so a check reads as one line: truth(t)(s.Once(...)).
func truth(t *testing.T) func(bool, error) bool { return check[bool](t) }

func total(t *testing.T) func(float64, error) float64 { return check[float64](t) }

func listed(t *testing.T) func([]state.SessionRecord, error) []state.SessionRecord {
	return check[[]state.SessionRecord](t)
}

func check[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// concurrently runs f(i) for i in [0, n) at once and waits for all.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start) // release them together to maximise contention
	wg.Wait()
}

var ctx = context.Background()

var healthTests = []test{
	{"ping answers on an open store", func(t *testing.T, s state.Store) {
		if err := s.Ping(ctx); err != nil {
			t.Fatalf("Ping on an open store: %v", err)
		}
	}},
	{"ping fails once the store is closed", func(t *testing.T, s state.Store) {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Ping(ctx); !errors.Is(err, state.ErrClosed) {
			t.Fatalf("Ping after Close = %v, want state.ErrClosed", err)
		}
	}},
}

var onceTests = []test{
	{"a key is new once and then seen", func(t *testing.T, s state.Store) {
		if !truth(t)(s.Once(ctx, "Ev1", long)) {
			t.Fatal("a new key is not new")
		}
		if truth(t)(s.Once(ctx, "Ev1", long)) {
			t.Fatal("a redelivered key counted as new")
		}
		if !truth(t)(s.Once(ctx, "Ev2", long)) {
			t.Fatal("another key is not new")
		}
	}},
	{"a key is new again after its ttl", func(t *testing.T, s state.Store) {
		truth(t)(s.Once(ctx, "Ev1", short))
		eventually(t, short+10*time.Millisecond, "the key is still remembered", func() bool {
			return truth(t)(s.Once(ctx, "Ev1", short))
		})
	}},
	{"one of 50 concurrent callers is first", func(t *testing.T, s state.Store) {
		var firsts atomic.Int64
		concurrently(50, func(int) {
			ok, err := s.Once(ctx, "same", long)
			if err != nil {
				t.Error(err)
			}
			if ok {
				firsts.Add(1)
			}
		})
		if n := firsts.Load(); n != 1 {
			t.Fatalf("%d callers were told the key was new", n)
		}
	}},
}

var leaseTests = []test{
	{"a lease has one owner until released", func(t *testing.T, s state.Store) {
		steps := []struct {
			do    string // lock | unlock
			owner string
			want  bool
		}{
			{"lock", "a", true},
			{"lock", "b", false}, // held by a
			{"lock", "a", true},  // a renews
			{"unlock", "b", false},
			{"lock", "b", false}, // b's unlock left a's lease alone
			{"unlock", "a", false},
			{"lock", "b", true}, // released
		}
		for i, st := range steps {
			if st.do == "unlock" {
				if err := s.Unlock(ctx, "thread", st.owner); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				continue
			}
			if got := truth(t)(s.Lock(ctx, "thread", st.owner, long)); got != st.want {
				t.Fatalf("step %d: Lock by %s = %v, want %v", i, st.owner, got, st.want)
			}
		}
	}},
	{"an expired lease goes to another owner", func(t *testing.T, s state.Store) {
		if !truth(t)(s.Lock(ctx, "thread", "dead replica", short)) {
			t.Fatal("a free lease was refused")
		}
		eventually(t, 5*time.Millisecond, "the lease never expired", func() bool {
			return truth(t)(s.Lock(ctx, "thread", "live replica", long))
		})
	}},
	{"unlocking a lease nobody holds is not an error", func(t *testing.T, s state.Store) {
		if err := s.Unlock(ctx, "nobody's", "a"); err != nil {
			t.Fatal(err)
		}
	}},
	{"one of 50 concurrent owners gets the lease", func(t *testing.T, s state.Store) {
		var owners atomic.Int64
		concurrently(50, func(i int) {
			ok, err := s.Lock(ctx, "thread", fmt.Sprint("replica", i), long)
			if err != nil {
				t.Error(err)
			}
			if ok {
				owners.Add(1)
			}
		})
		if n := owners.Load(); n != 1 {
			t.Fatalf("%d owners hold the lease", n)
		}
	}},
}

var markTests = []test{
	{"a mark is remembered and others are not", func(t *testing.T, s state.Store) {
		if err := s.Mark(ctx, "C1/1.0", long); err != nil {
			t.Fatal(err)
		}
		if !truth(t)(s.Marked(ctx, "C1/1.0")) {
			t.Fatal("a mark is not remembered")
		}
		if truth(t)(s.Marked(ctx, "C1/2.0")) {
			t.Fatal("an unmarked key is remembered")
		}
	}},
	{"a mark is forgotten after its ttl", func(t *testing.T, s state.Store) {
		if err := s.Mark(ctx, "C1/1.0", short); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Millisecond, "the mark is still remembered", func() bool {
			return !truth(t)(s.Marked(ctx, "C1/1.0"))
		})
	}},
	{"marking again renews a mark", func(t *testing.T, s state.Store) {
		if err := s.Mark(ctx, "C1/1.0", short); err != nil {
			t.Fatal(err)
		}
		if err := s.Mark(ctx, "C1/1.0", long); err != nil {
			t.Fatal(err)
		}
		// A probe marked now with the same short ttl shows when the first
		// ttl has certainly ended.
		if err := s.Mark(ctx, "probe", short); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Millisecond, "the probe is still remembered", func() bool {
			return !truth(t)(s.Marked(ctx, "probe"))
		})
		if !truth(t)(s.Marked(ctx, "C1/1.0")) {
			t.Fatal("the second Mark did not renew the first")
		}
	}},
}

var slotTests = []test{
	{"limit holders get slots and the next is refused", func(t *testing.T, s state.Store) {
		steps := []struct {
			holder string
			want   bool
		}{
			{"s1", true},
			{"s2", true},
			{"s3", true},
			{"s4", false}, // all three held
			{"s2", true},  // a holder renews its own slot, even when full
		}
		for _, st := range steps {
			if got := truth(t)(s.Acquire(ctx, "sessions", st.holder, 3, long)); got != st.want {
				t.Fatalf("Acquire by %s = %v, want %v", st.holder, got, st.want)
			}
		}
		if !truth(t)(s.Acquire(ctx, "other queue", "s4", 3, long)) {
			t.Fatal("a full semaphore refused a holder of another")
		}
	}},
	{"a released slot goes to the next holder", func(t *testing.T, s state.Store) {
		truth(t)(s.Acquire(ctx, "q", "a", 1, long))
		if truth(t)(s.Acquire(ctx, "q", "b", 1, long)) {
			t.Fatal("a second holder got the only slot")
		}
		if err := s.Release(ctx, "q", "b"); err != nil { // not b's: a keeps it
			t.Fatal(err)
		}
		if truth(t)(s.Acquire(ctx, "q", "b", 1, long)) {
			t.Fatal("releasing a slot not held freed another's")
		}
		if err := s.Release(ctx, "q", "a"); err != nil {
			t.Fatal(err)
		}
		if !truth(t)(s.Acquire(ctx, "q", "b", 1, long)) {
			t.Fatal("a released slot was refused")
		}
	}},
	{"an expired slot goes to the next holder", func(t *testing.T, s state.Store) {
		truth(t)(s.Acquire(ctx, "q", "dead replica", 1, short))
		eventually(t, 5*time.Millisecond, "the slot never expired", func() bool {
			return truth(t)(s.Acquire(ctx, "q", "live replica", 1, long))
		})
	}},
	{"a limit below one admits nobody", func(t *testing.T, s state.Store) {
		if truth(t)(s.Acquire(ctx, "q", "a", 0, long)) {
			t.Fatal("a zero limit admitted a holder")
		}
	}},
	{"limit of 20 concurrent acquirers get slots", func(t *testing.T, s state.Store) {
		var got atomic.Int64
		concurrently(20, func(i int) {
			ok, err := s.Acquire(ctx, "q", fmt.Sprint("h", i), 5, long)
			if err != nil {
				t.Error(err)
			}
			if ok {
				got.Add(1)
			}
		})
		if n := got.Load(); n != 5 {
			t.Fatalf("%d of 20 acquirers got one of 5 slots", n)
		}
	}},
	{"holders in and out never exceed the limit", func(t *testing.T, s state.Store) {
		const limit, rounds = 3, 4
		var in, most atomic.Int64
		concurrently(20, func(i int) {
			holder := fmt.Sprint("h", i)
			for range rounds {
				deadline := time.Now().Add(slotPatience)
				for {
					ok, err := s.Acquire(ctx, "q", holder, limit, long)
					if err != nil || time.Now().After(deadline) {
						t.Errorf("a holder never got a slot: %v", err)
						return
					}
					if ok {
						break
					}
					time.Sleep(time.Millisecond) // back off; someone is about to release
				}
				n := in.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				in.Add(-1)
				if err := s.Release(ctx, "q", holder); err != nil {
					t.Error(err)
				}
			}
		})
		if m := most.Load(); m > limit {
			t.Fatalf("%d holders at once with a limit of %d", m, limit)
		}
	}},
}

// slow is a refill rate at which no token comes back during a test.
const slow = 0.01 // a token every 100 s

// took reads a Take: true when a token was taken.
func took(t *testing.T) func(time.Duration, error) bool {
	return func(wait time.Duration, err error) bool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if wait < 0 {
			t.Fatalf("Take returned a negative wait %v", wait)
		}
		return wait == 0
	}
}

var bucketTests = []test{
	{"a new bucket gives its burst at once, then says how long to wait", func(t *testing.T, s state.Store) {
		for i := range 3 {
			if !took(t)(s.Take(ctx, "chat.update", slow, 3, 0)) {
				t.Fatalf("take %d of a burst of 3 was refused", i+1)
			}
		}
		wait, err := s.Take(ctx, "chat.update", slow, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		// One token takes 100 s at this rate; the takes above took far
		// less than 10 s, however slow the machine.
		if wait < 90*time.Second || wait > 100*time.Second {
			t.Fatalf("an empty bucket at one token per 100 s asks to wait %v", wait)
		}
		if !took(t)(s.Take(ctx, "chat.delete", slow, 3, 0)) {
			t.Fatal("an empty bucket refused a take from another bucket")
		}
	}},
	{"tokens come back at the bucket's rate", func(t *testing.T, s state.Store) {
		took(t)(s.Take(ctx, "fast", 20, 1, 0))
		eventually(t, 10*time.Millisecond, "no token came back at 20 a second", func() bool {
			return took(t)(s.Take(ctx, "fast", 20, 1, 0))
		})
	}},
	{"keep leaves tokens that only a take with a lower keep may have", func(t *testing.T, s state.Store) {
		for i := range 2 {
			if !took(t)(s.Take(ctx, "b", slow, 4, 2)) {
				t.Fatalf("take %d keeping 2 of 4 was refused", i+1)
			}
		}
		if took(t)(s.Take(ctx, "b", slow, 4, 2)) {
			t.Fatal("a take keeping 2 tokens emptied the bucket below 2")
		}
		for i := range 2 {
			if !took(t)(s.Take(ctx, "b", slow, 4, 0)) {
				t.Fatalf("take %d keeping nothing was refused with tokens left", i+1)
			}
		}
		if took(t)(s.Take(ctx, "b", slow, 4, 0)) {
			t.Fatal("an empty bucket gave a token")
		}
	}},
	{"keep is clamped below the burst", func(t *testing.T, s state.Store) {
		if !took(t)(s.Take(ctx, "b", slow, 2, 5)) {
			t.Fatal("a full bucket refused a take whose keep exceeds the burst")
		}
	}},
	{"of 50 concurrent takes exactly the burst succeed", func(t *testing.T, s state.Store) {
		var n atomic.Int64
		concurrently(50, func(int) {
			if took(t)(s.Take(ctx, "shared", slow, 10, 0)) {
				n.Add(1)
			}
		})
		if n.Load() != 10 {
			t.Fatalf("%d of 50 concurrent takes from a bucket of 10 succeeded", n.Load())
		}
	}},
	{"a bucket that cannot refill is an error", func(t *testing.T, s state.Store) {
		if _, err := s.Take(ctx, "b", 0, 3, 0); err == nil {
			t.Fatal("a rate of 0 was accepted")
		}
		if _, err := s.Take(ctx, "b", 1, 0, 0); err == nil {
			t.Fatal("a burst of 0 was accepted")
		}
	}},
}

var counterTests = []test{
	{"adds return the running total", func(t *testing.T, s state.Store) {
		for _, st := range []struct{ delta, want float64 }{{1.5, 1.5}, {2, 3.5}, {-0.5, 3}} {
			if got := total(t)(s.Add(ctx, "tokens:U1", st.delta, long)); got != st.want {
				t.Fatalf("Add(%v) = %v, want %v", st.delta, got, st.want)
			}
		}
		if got := total(t)(s.Get(ctx, "tokens:U1")); got != 3 {
			t.Fatalf("Get = %v, want 3", got)
		}
	}},
	{"an absent counter is zero", func(t *testing.T, s state.Store) {
		if got := total(t)(s.Get(ctx, "never added")); got != 0 {
			t.Fatalf("Get = %v, want 0", got)
		}
	}},
	{"a counter resets after its first ttl however often it is added to", func(t *testing.T, s state.Store) {
		total(t)(s.Add(ctx, "cost:C1", 1, short))
		total(t)(s.Add(ctx, "cost:C1", 1, long)) // must not push the reset back
		eventually(t, 5*time.Millisecond, "the counter never reset", func() bool {
			return total(t)(s.Get(ctx, "cost:C1")) == 0
		})
		if got := total(t)(s.Add(ctx, "cost:C1", 4, long)); got != 4 {
			t.Fatalf("an add after the reset gave %v, want 4", got)
		}
	}},
	{"concurrent adds add up exactly", func(t *testing.T, s state.Store) {
		const workers, each, delta = 20, 10, 0.5
		var mu sync.Mutex
		totals := map[float64]bool{}
		concurrently(workers, func(int) {
			for range each {
				v, err := s.Add(ctx, "k", delta, long)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				totals[v] = true
				mu.Unlock()
			}
		})
		if got := total(t)(s.Get(ctx, "k")); got != workers*each*delta {
			t.Fatalf("total %v, want %v", got, workers*each*delta)
		}
		// Every add saw a different total, or two adds read the same value.
		if len(totals) != workers*each {
			t.Fatalf("%d distinct totals returned by %d adds", len(totals), workers*each)
		}
	}},
}

// record returns a complete record; Started has no monotonic reading and
// whole nanoseconds, as every backend can store it.
func record(id, user, channel string, started int64) state.SessionRecord {
	return state.SessionRecord{
		ID: id, User: user, Channel: channel, ThreadTS: "1700000000.000100",
		Agent: "helper", Status: "done",
		Turns: 3, ToolCalls: 5, InputTokens: 1200, OutputTokens: 340,
		CostUSD: 0.0123,
		Started: time.Unix(started, 123456789), Duration: 4200 * time.Millisecond,
		Report: "The answer is *42*.\n\n| a | b |",
	}
}

// ids lists the records' IDs in order.
func ids(rs []state.SessionRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// sameRecord reports whether a and b hold the same values; times are
// compared as instants because a backend may return another location.
func sameRecord(a, b state.SessionRecord) bool {
	if !a.Started.Equal(b.Started) {
		return false
	}
	a.Started, b.Started = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

var sessionTests = []test{
	{"a record reads back as written and is replaced by id", func(t *testing.T, s state.Store) {
		r := record("S1", "U1", "C1", 1_800_000_000)
		if err := s.PutSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Session(ctx, "S1")
		if err != nil || !ok || !sameRecord(got, r) {
			t.Fatalf("Session = %+v, %v, %v; want %+v", got, ok, err, r)
		}
		r.Status, r.Turns, r.Report = "failed", 7, ""
		if err := s.PutSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Session(ctx, "S1"); !sameRecord(got, r) {
			t.Fatalf("after replacing: %+v, want %+v", got, r)
		}
		if all := listed(t)(s.Sessions(ctx, state.SessionFilter{})); len(all) != 1 {
			t.Fatalf("%d records after replacing one", len(all))
		}
	}},
	{"a record keeps its approval decisions in order", func(t *testing.T, s state.Store) {
		r := record("SA", "U1", "C1", 1_800_000_000)
		at := time.Unix(1_800_000_010, 0).UTC()
		r.Approvals = []state.Approval{
			{Tool: "github__merge", Decision: "approved", By: "U2", Thread: true, At: at},
			{Tool: "github__delete", Decision: "timed out", At: at.Add(time.Minute)},
		}
		if err := s.PutSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Session(ctx, "SA"); !reflect.DeepEqual(got.Approvals, r.Approvals) {
			t.Fatalf("approvals %+v, want %+v", got.Approvals, r.Approvals)
		}
	}},
	{"an unknown session is not found", func(t *testing.T, s state.Store) {
		if _, ok, err := s.Session(ctx, "nope"); ok || err != nil {
			t.Fatalf("Session = %v, %v", ok, err)
		}
	}},
	{"a zero start time survives", func(t *testing.T, s state.Store) {
		r := state.SessionRecord{ID: "S0", Status: "running"}
		if err := s.PutSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Session(ctx, "S0"); !got.Started.IsZero() || !sameRecord(got, r) {
			t.Fatalf("got %+v, want %+v", got, r)
		}
	}},
	{"sessions are listed newest first and filtered", func(t *testing.T, s state.Store) {
		const t0 = 1_800_000_000
		for _, r := range []state.SessionRecord{
			record("old", "U1", "C1", t0),
			record("mid", "U2", "C1", t0+60),
			record("new", "U1", "C2", t0+120),
			record("tie-b", "U3", "C3", t0+30),
			record("tie-a", "U3", "C3", t0+30), // same start: ordered by id
		} {
			if err := s.PutSession(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name string
			f    state.SessionFilter
			want []string
		}{
			{"everything", state.SessionFilter{}, []string{"new", "mid", "tie-a", "tie-b", "old"}},
			{"by user", state.SessionFilter{User: "U1"}, []string{"new", "old"}},
			{"by channel", state.SessionFilter{Channel: "C1"}, []string{"mid", "old"}},
			{"by user and channel", state.SessionFilter{User: "U1", Channel: "C1"}, []string{"old"}},
			{"since a start, inclusive", state.SessionFilter{Since: time.Unix(t0+60, 123456789)}, []string{"new", "mid"}},
			{"limited", state.SessionFilter{Limit: 2}, []string{"new", "mid"}},
			{"nothing matches", state.SessionFilter{User: "U9"}, []string{}},
		} {
			if got := ids(listed(t)(s.Sessions(ctx, tc.f))); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}},
	{"no limit means the default limit", func(t *testing.T, s state.Store) {
		for i := range state.DefaultSessionLimit + 5 {
			if err := s.PutSession(ctx, record(fmt.Sprintf("S%03d", i), "U1", "C1", int64(1_800_000_000+i))); err != nil {
				t.Fatal(err)
			}
		}
		got := listed(t)(s.Sessions(ctx, state.SessionFilter{}))
		if len(got) != state.DefaultSessionLimit || got[0].ID != fmt.Sprintf("S%03d", state.DefaultSessionLimit+4) {
			t.Fatalf("%d records starting with %s", len(got), got[0].ID)
		}
	}},
	{"feedback is recorded on a known session only", func(t *testing.T, s state.Store) {
		r := record("S1", "U1", "C1", 1_800_000_000)
		if err := s.PutSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.SetFeedback(ctx, "unknown", state.Feedback{User: "U1", Value: "positive", At: time.Unix(1_800_000_010, 0)}); !errors.Is(err, state.ErrNoSession) {
			t.Fatalf("SetFeedback on an unknown id = %v, want ErrNoSession", err)
		}
		if _, ok, _ := s.Session(ctx, "unknown"); ok {
			t.Fatal("feedback on an unknown id made a record")
		}
	}},
	{"feedback keeps each person's last click, oldest first", func(t *testing.T, s state.Store) {
		r := record("S1", "U1", "C1", 1_800_000_000)
		if err := s.PutSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		at := func(sec int64) time.Time { return time.Unix(1_800_000_000+sec, 500) }
		steps := []struct {
			click state.Feedback
			want  string // user=value, oldest first
		}{
			{state.Feedback{User: "U1", Value: "positive", At: at(10)}, "U1=positive"},
			{state.Feedback{User: "U2", Value: "negative", At: at(20)}, "U1=positive U2=negative"},
			{state.Feedback{User: "U1", Value: "negative", At: at(30)}, "U2=negative U1=negative"}, // U1 changed their mind
			{state.Feedback{User: "U2", Value: "negative", At: at(40)}, "U1=negative U2=negative"}, // the same click again
		}
		for i, st := range steps {
			if err := s.SetFeedback(ctx, "S1", st.click); err != nil {
				t.Fatal(err)
			}
			got, _, err := s.Session(ctx, "S1")
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, f := range got.Feedback {
				parts = append(parts, f.User+"="+f.Value)
			}
			if strings.Join(parts, " ") != st.want {
				t.Fatalf("after click %d: %v, want %s", i, parts, st.want)
			}
			if last := got.Feedback[len(got.Feedback)-1]; !last.At.Equal(st.click.At) {
				t.Fatalf("after click %d: the newest click is at %v, want %v", i, last.At, st.click.At)
			}
		}
		// The rest of the record is untouched, and listing shows the verdicts.
		list, err := s.Sessions(ctx, state.SessionFilter{User: "U1"})
		if err != nil || len(list) != 1 || len(list[0].Feedback) != 2 || list[0].Report != r.Report {
			t.Fatalf("Sessions = %+v, %v", list, err)
		}
	}},
	{"feedback clicked at once by many people is all kept", func(t *testing.T, s state.Store) {
		if err := s.PutSession(ctx, record("S1", "U1", "C1", 1_800_000_000)); err != nil {
			t.Fatal(err)
		}
		const people = 8
		var wg sync.WaitGroup
		errs := make(chan error, people)
		for i := range people {
			wg.Go(func() {
				errs <- s.SetFeedback(ctx, "S1", state.Feedback{User: fmt.Sprintf("U%d", i), Value: "positive", At: time.Unix(1_800_000_100, int64(i))})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got, _, _ := s.Session(ctx, "S1"); len(got.Feedback) != people {
			t.Fatalf("%d verdicts kept of %d", len(got.Feedback), people)
		}
	}},
}
