package state

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

	"github.com/redis/go-redis/v9"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/state/redistest"
)

// redisPrefixes numbers the prefixes of the stores tests open, so tests
// sharing one server never see each other's keys.
var redisPrefixes atomic.Int64

// newRedisPrefix returns a prefix no other store of this test binary uses.
func newRedisPrefix(t *testing.T) string {
	return fmt.Sprintf("test%d:%s:", redisPrefixes.Add(1), t.Name())
}

// dialRedis opens a store on srv under prefix, closed when t ends.
func dialRedis(t *testing.T, srv *redistest.Server, prefix string) *Redis {
	t.Helper()
	r, err := DialRedis(context.Background(), srv.URL(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// newTestRedis starts a server for t and opens a store on it.
func newTestRedis(t *testing.T) *Redis {
	t.Helper()
	return dialRedis(t, redistest.Start(t), newRedisPrefix(t))
}

// concurrently runs f(i) for i in [0, n) at once and waits for all.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}

func TestRedisOnceLockAndAddAreAtomicUnderFiftyGoroutines(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	var firsts, locks atomic.Int64
	var errs atomic.Value
	concurrently(50, func(i int) {
		ok, err := r.Once(ctx, "event", time.Minute)
		if err != nil {
			errs.Store(err)
		}
		if ok {
			firsts.Add(1)
		}
		ok, err = r.Lock(ctx, "thread", fmt.Sprintf("owner%d", i), time.Minute)
		if err != nil {
			errs.Store(err)
		}
		if ok {
			locks.Add(1)
		}
		if _, err := r.Add(ctx, "tokens", 1.5, time.Minute); err != nil {
			errs.Store(err)
		}
	})
	if err, _ := errs.Load().(error); err != nil {
		t.Fatal(err)
	}
	if n := firsts.Load(); n != 1 {
		t.Errorf("Once answered true %d times to 50 goroutines; want 1", n)
	}
	if n := locks.Load(); n != 1 {
		t.Errorf("Lock granted one lease to %d of 50 owners; want 1", n)
	}
	if v, err := r.Get(ctx, "tokens"); err != nil || v != 75 {
		t.Errorf("50 adds of 1.5 = %v, %v; want 75", v, err)
	}
}

func TestRedisSlotLimitIsNeverExceededByTwentyAcquirers(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	const limit, rounds = 3, 15
	var inUse, most, granted atomic.Int64
	var errs atomic.Value
	concurrently(20, func(i int) {
		holder := fmt.Sprintf("session%d", i)
		for range rounds {
			ok, err := r.Acquire(ctx, "max_concurrent_sessions", holder, limit, time.Minute)
			if err != nil {
				errs.Store(err)
				return
			}
			if !ok {
				continue
			}
			granted.Add(1)
			n := inUse.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			inUse.Add(-1)
			if err := r.Release(ctx, "max_concurrent_sessions", holder); err != nil {
				errs.Store(err)
				return
			}
		}
	})
	if err, _ := errs.Load().(error); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > limit {
		t.Errorf("%d slots held at once; the limit is %d", m, limit)
	}
	if granted.Load() == 0 {
		t.Error("no acquirer ever got a slot")
	}
	if n, err := r.client.ZCard(ctx, r.slotKey("max_concurrent_sessions")).Result(); err != nil || n != 0 {
		t.Errorf("after every release %d slots are still held (%v)", n, err)
	}
}

func TestRedisSlotsAreLimitedRenewedAndExpire(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	acquire := func(holder string, ttl time.Duration) bool {
		t.Helper()
		ok, err := r.Acquire(ctx, "tool:search", holder, 2, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !acquire("a", time.Minute) || !acquire("b", 50*time.Millisecond) {
		t.Fatal("two holders did not get the two slots")
	}
	if acquire("c", time.Minute) {
		t.Fatal("a third holder got one of two slots")
	}
	if !acquire("a", time.Minute) {
		t.Fatal("a holder could not renew its own slot")
	}
	wait.Eventually(t, "the expired slot of b to be freed", func() bool { return acquire("c", time.Minute) }, wait.Within(5*time.Second))
	if err := r.Release(ctx, "tool:search", "nobody"); err != nil {
		t.Fatalf("releasing a slot not held: %v", err)
	}
	if err := r.Release(ctx, "tool:search", "a"); err != nil {
		t.Fatal(err)
	}
	if !acquire("d", time.Minute) {
		t.Fatal("a released slot was not free")
	}
}

func TestRedisKeysExpireAfterShortTTLs(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	const ttl = 50 * time.Millisecond
	start := time.Now()
	if ok, err := r.Once(ctx, "Ev1", ttl); err != nil || !ok {
		t.Fatalf("a new key: %v, %v", ok, err)
	}
	if ok, err := r.Lock(ctx, "thread", "replica1", ttl); err != nil || !ok {
		t.Fatalf("a free lease: %v, %v", ok, err)
	}
	if err := r.Mark(ctx, "mine", ttl); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(ctx, "budget", 3, ttl); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, "the lease to expire", func() bool {
		ok, err := r.Lock(ctx, "thread", "replica2", time.Minute)
		return err == nil && ok
	}, wait.Within(5*time.Second))
	if d := time.Since(start); d < ttl {
		t.Errorf("a lease of %s lapsed after %s", ttl, d)
	}
	wait.Eventually(t, "the dedup key to expire", func() bool {
		ok, err := r.Once(ctx, "Ev1", ttl)
		return err == nil && ok
	}, wait.Within(5*time.Second))
	wait.Eventually(t, "the mark to expire", func() bool {
		ok, err := r.Marked(ctx, "mine")
		return err == nil && !ok
	}, wait.Within(5*time.Second))
	wait.Eventually(t, "the counter to expire", func() bool {
		v, err := r.Get(ctx, "budget")
		return err == nil && v == 0
	}, wait.Within(5*time.Second))
}

func TestRedisLeaseIsRenewedByItsOwnerOnly(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	lock := func(owner string, ttl time.Duration) bool {
		t.Helper()
		ok, err := r.Lock(ctx, "thread", owner, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !lock("a", 50*time.Millisecond) {
		t.Fatal("a free lease was refused")
	}
	if !lock("a", time.Hour) {
		t.Fatal("the owner could not renew its lease")
	}
	if pttl := r.client.PTTL(ctx, r.keyKey("thread")).Val(); pttl < time.Minute {
		t.Fatalf("a renewed lease expires in %s; want about an hour", pttl)
	}
	if err := r.Unlock(ctx, "thread", "b"); err != nil {
		t.Fatal(err)
	}
	if lock("b", time.Hour) {
		t.Fatal("another owner's unlock released the lease")
	}
	if err := r.Unlock(ctx, "thread", "a"); err != nil {
		t.Fatal(err)
	}
	if !lock("b", time.Hour) {
		t.Fatal("the lease was not free after its owner unlocked it")
	}
}

func TestRedisCounterKeepsTheExpiryOfItsFirstAdd(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	if v, err := r.Add(ctx, "U1:2026-01-02", 0.25, time.Hour); err != nil || v != 0.25 {
		t.Fatalf("first add = %v, %v", v, err)
	}
	if v, err := r.Add(ctx, "U1:2026-01-02", 0.5, 48*time.Hour); err != nil || v != 0.75 {
		t.Fatalf("second add = %v, %v", v, err)
	}
	if pttl := r.client.PTTL(ctx, r.counterKey("U1:2026-01-02")).Val(); pttl > time.Hour {
		t.Errorf("a later add extended the counter's expiry to %s", pttl)
	}
	if v, err := r.Get(ctx, "absent"); err != nil || v != 0 {
		t.Errorf("an absent counter = %v, %v; want 0", v, err)
	}
}

func TestRedisSessionsAreListedNewestFirstByUserChannelAndSince(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	recs := []SessionRecord{
		{ID: "s1", User: "U1", Channel: "C1", Started: t0},
		{ID: "s2", User: "U2", Channel: "C1", Started: t0.Add(time.Minute)},
		{ID: "s3", User: "U1", Channel: "C2", Started: t0.Add(2 * time.Minute)},
		{ID: "s4", User: "U1", Channel: "C1", Started: t0.Add(3 * time.Minute)},
	}
	for _, s := range recs {
		if err := r.PutSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(f SessionFilter) string {
		t.Helper()
		var out []string
		for _, s := range listWithin(t, r, f) {
			out = append(out, s.ID)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name string
		f    SessionFilter
		want string
	}{
		{"everything", SessionFilter{}, "s4,s3,s2,s1"},
		{"one user", SessionFilter{User: "U1"}, "s4,s3,s1"},
		{"one channel", SessionFilter{Channel: "C1"}, "s4,s2,s1"},
		{"a user in a channel", SessionFilter{User: "U1", Channel: "C1"}, "s4,s1"},
		{"since a start, inclusive", SessionFilter{Since: t0.Add(time.Minute)}, "s4,s3,s2"},
		{"since a nanosecond after a start", SessionFilter{Since: t0.Add(time.Minute + time.Nanosecond)}, "s4,s3"},
		{"a limit", SessionFilter{Limit: 2}, "s4,s3"},
		{"a limit after filtering", SessionFilter{User: "U1", Channel: "C1", Limit: 1}, "s4"},
		{"nobody", SessionFilter{User: "U9"}, ""},
	}
	for _, tt := range tests {
		if got := ids(tt.f); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}

	// Replacing a record moves it between indexes.
	moved := recs[0]
	moved.User, moved.Channel = "U2", "C3"
	if err := r.PutSession(ctx, moved); err != nil {
		t.Fatal(err)
	}
	if got := ids(SessionFilter{User: "U1"}); got != "s4,s3" {
		t.Errorf("after s1 moved to U2, U1 lists %q", got)
	}
	if got := ids(SessionFilter{Channel: "C3"}); got != "s1" {
		t.Errorf("after s1 moved to C3, C3 lists %q", got)
	}
	if got := ids(SessionFilter{}); got != "s4,s3,s2,s1" {
		t.Errorf("after a replace, everything lists %q", got)
	}
	moved.Started = t0.Add(time.Hour)
	if err := r.PutSession(ctx, moved); err != nil {
		t.Fatal(err)
	}
	for _, f := range []SessionFilter{{}, {User: "U2"}, {Channel: "C3"}} {
		if got := ids(f); !strings.HasPrefix(got, "s1") || strings.Count(got, "s1") != 1 {
			t.Errorf("after s1 restarted later, %+v lists %q; want s1 once, first", f, got)
		}
	}
}

func TestRedisSessionsDefaultToAHundred(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 130 {
		if err := r.PutSession(ctx, SessionRecord{ID: fmt.Sprintf("s%03d", i), User: "U1", Started: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	got := listWithin(t, r, SessionFilter{User: "U1"})
	if len(got) != DefaultSessionLimit || got[0].ID != "s129" || got[99].ID != "s030" {
		t.Fatalf("got %d records from %s to %s; want 100 from s129 to s030", len(got), got[0].ID, got[len(got)-1].ID)
	}
	if got := listWithin(t, r, SessionFilter{User: "U1", Channel: "C9"}); len(got) != 0 {
		t.Fatalf("a filter nothing matches, past one page: %d records", len(got))
	}
}

// listingDeadline bounds one listing of session records in the tests: a
// listing whose paging never ends fails in seconds, not at the suite's
// timeout.
const listingDeadline = 10 * time.Second

// listWithin lists the records f selects, failing t when the listing
// fails or does not end within listingDeadline.
func listWithin(t *testing.T, r *Redis, f SessionFilter) []SessionRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), listingDeadline)
	defer cancel()
	got, err := r.Sessions(ctx, f)
	if ctx.Err() != nil {
		t.Fatalf("listing sessions %+v did not end within %v: its paging does not advance", f, listingDeadline)
	}
	if err != nil {
		t.Fatalf("listing sessions %+v: %v", f, err)
	}
	return got
}

func TestRedisSessionRecordRoundTripsAndTakesFeedback(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	want := SessionRecord{
		ID: "s1", User: "U1", Channel: "C1", ThreadTS: "1700000000.000100", Agent: "helper", Status: "done",
		Turns: 4, ToolCalls: 7, InputTokens: 12345, OutputTokens: 678, CostUSD: 0.0123456789,
		Started: time.Date(2026, 3, 1, 12, 0, 0, 987654321, time.FixedZone("CET", 3600)), Duration: 83*time.Second + time.Nanosecond,
		Report: "Line one\n*bold* — ünïcode",
	}
	if err := r.PutSession(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := r.Session(ctx, "s1")
	if err != nil || !ok {
		t.Fatalf("Session = %v, %v", ok, err)
	}
	if !got.Started.Equal(want.Started) {
		t.Errorf("Started = %v, want %v", got.Started, want.Started)
	}
	got.Started = want.Started
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	at := time.Date(2026, 3, 1, 12, 5, 0, 1, time.UTC)
	if err := r.SetFeedback(ctx, "s1", Feedback{User: "U2", Value: "positive", At: at}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := r.Session(ctx, "s1"); len(got.Feedback) != 1 || got.Feedback[0].User != "U2" ||
		got.Feedback[0].Value != "positive" || !got.Feedback[0].At.Equal(at) {
		t.Errorf("feedback = %+v, want U2's positive at %v", got.Feedback, at)
	}
	if err := r.SetFeedback(ctx, "nope", Feedback{User: "U2", Value: "negative", At: at}); !errors.Is(err, ErrNoSession) {
		t.Errorf("feedback on an unknown session: %v, want ErrNoSession", err)
	}
	if _, ok, err := r.Session(ctx, "nope"); ok || err != nil {
		t.Errorf("an unknown session: %v, %v", ok, err)
	}
	if n, _ := r.client.Exists(ctx, r.sessionKey("nope")).Result(); n != 0 {
		t.Error("feedback on an unknown session created a record")
	}
}

func TestTwoReplicasOnOneRedisSeeEachOthersState(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	prefix := newRedisPrefix(t)
	a, b := dialRedis(t, srv, prefix), dialRedis(t, srv, prefix)
	ctx := context.Background()
	must := func(ok bool, err error) bool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	if !must(a.Once(ctx, "Ev1", time.Minute)) || must(b.Once(ctx, "Ev1", time.Minute)) {
		t.Error("an event handled by replica a was new to replica b")
	}
	if !must(a.Lock(ctx, "thread:C1:1.0", "a", time.Minute)) || must(b.Lock(ctx, "thread:C1:1.0", "b", time.Minute)) {
		t.Error("replica b took a thread lease replica a holds")
	}
	if err := a.Unlock(ctx, "thread:C1:1.0", "a"); err != nil {
		t.Fatal(err)
	}
	if !must(b.Lock(ctx, "thread:C1:1.0", "b", time.Minute)) {
		t.Error("replica b could not take a lease replica a released")
	}
	if !must(a.Acquire(ctx, "sessions", "a1", 2, time.Minute)) || !must(b.Acquire(ctx, "sessions", "b1", 2, time.Minute)) {
		t.Fatal("two replicas could not take two slots")
	}
	if must(a.Acquire(ctx, "sessions", "a2", 2, time.Minute)) || must(b.Acquire(ctx, "sessions", "b2", 2, time.Minute)) {
		t.Error("two replicas held more slots than the limit")
	}
	if err := a.Mark(ctx, "mine:C1:1.0", time.Minute); err != nil {
		t.Fatal(err)
	}
	if !must(b.Marked(ctx, "mine:C1:1.0")) {
		t.Error("a thread replica a marked is unmarked for replica b")
	}
	if _, err := a.Add(ctx, "cost:U1", 0.5, time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Add(ctx, "cost:U1", 0.25, time.Hour); err != nil || v != 0.75 {
		t.Errorf("replica b's add onto replica a's counter = %v, %v; want 0.75", v, err)
	}
	rec := SessionRecord{ID: "s1", User: "U1", Channel: "C1", Status: "done", Started: time.Now()}
	if err := a.PutSession(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := b.SetFeedback(ctx, "s1", Feedback{User: "U2", Value: "positive", At: time.Now()}); err != nil {
		t.Fatalf("replica b could not give feedback on replica a's session: %v", err)
	}
	got, err := a.Sessions(ctx, SessionFilter{User: "U1"})
	if err != nil || len(got) != 1 || len(got[0].Feedback) != 1 || got[0].Feedback[0].Value != "positive" {
		t.Errorf("replica a lists %+v, %v; want s1 with replica b's feedback", got, err)
	}

	// A third store under another prefix shares nothing.
	c := dialRedis(t, srv, newRedisPrefix(t))
	if !must(c.Once(ctx, "Ev1", time.Minute)) {
		t.Error("a store under another prefix saw this prefix's event")
	}
}

func TestOpenRedisNeverRepeatsThePassword(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://:s3cretpw@127.0.0.1:1/0",     // nothing listens on port 1
		"redis://user:s3cretpw@127.0.0.1:1/x", // a bad database number
		"redis://user:s3cretpw@[::1/0",        // not a URL
		"http://user:s3cretpw@127.0.0.1:1/0",  // not Redis
	} {
		_, err := openRedis(config.State{Backend: "redis", RedisURL: config.Secret(u)})
		if err == nil {
			t.Errorf("%s opened", strings.ReplaceAll(u, "s3cretpw", "***"))
			continue
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("the error repeats the password: %v", err)
		}
		if strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("the error names the server's address: %v", err)
		}
	}
	_, err := openRedis(config.State{Backend: "redis", RedisURL: "redis://127.0.0.1:1/0"})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a server that refuses the connection gives %v", err)
	}
}

func TestOpenRedisConnectsWithThePasswordInTheURL(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	setup := dialRedis(t, srv, newRedisPrefix(t))
	if err := setup.client.ConfigSet(context.Background(), "requirepass", "s3cretpw").Err(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(config.State{Backend: "redis", RedisURL: config.Secret("redis://:s3cretpw@" + srv.Addr + "/0")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*Redis); !ok {
		t.Fatalf("Open with backend redis gave a %T", s)
	}
	if ok, err := s.Once(context.Background(), "Ev1", time.Minute); err != nil || !ok {
		t.Fatalf("Once through a password-protected server: %v, %v", ok, err)
	}
	_, err = Open(config.State{Backend: "redis", RedisURL: config.Secret("redis://:wrong@" + srv.Addr + "/0")})
	if err == nil {
		t.Fatal("a wrong password opened the store")
	}
}

func TestRedisCounterAddsLikeAFloat64(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	want := 0.0
	for _, d := range []float64{0.1, 0.2, 1e-9, 123456.789, -0.3, 1.0 / 3} {
		want += d
		got, err := r.Add(ctx, "cost", d, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("after adding %v: %v, want %v as float64 arithmetic gives", d, got, want)
		}
	}
	if got, err := r.Get(ctx, "cost"); err != nil || got != want {
		t.Fatalf("Get = %v, %v; want %v", got, err, want)
	}
}

func TestRedisStoreRecoversWhenTheServerRestarts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := dialRedis(t, srv, newRedisPrefix(t))
	ctx := context.Background()
	if ok, err := r.Lock(ctx, "thread", "a", time.Minute); err != nil || !ok {
		t.Fatalf("Lock = %v, %v", ok, err)
	}
	srv.Restart(t)
	// The pooled connections are dead and the script cache is empty: the
	// client redials and the scripts are loaded again, with no new store.
	wait.Eventually(t, "the store to work again", func() bool {
		_, err := r.Lock(ctx, "thread", "b", time.Minute)
		return err == nil
	}, wait.Within(5*time.Second))
	if ok, err := r.Acquire(ctx, "sessions", "b", 1, time.Minute); err != nil || !ok {
		t.Fatalf("Acquire after the restart = %v, %v", ok, err)
	}
}

func TestAStoreFailureInWordsNamesNoAddress(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer client.Close()
	err := NewRedis(client, "").Mark(context.Background(), "k", time.Minute)
	if err == nil {
		t.Fatal("a store on a closed port answered")
	}
	if !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("the raw error names no address, so this test proves nothing: %v", err)
	}
	if got := redact.Cause(err); got != "connection refused" {
		t.Errorf("redact.Cause = %q, want connection refused", got)
	}
	if got := redact.Cause(errors.New("ERR wrong number of arguments")); got != "ERR wrong number of arguments" {
		t.Errorf("redact.Cause of a server's own error = %q", got)
	}
}
