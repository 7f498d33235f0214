package ratelimit

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// fakeClock is a clock the test moves; timers fire when it passes them.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

// advance moves the clock and fires the timers it passes.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = kept
}

// testLimiter budgets chat.update (workspace) and chat.postMessage
// (channel) as given, on a memory store that reads the fake clock.
func testLimiter(t *testing.T, clk *fakeClock, next http.RoundTripper, limits map[string]config.RateLimit) *Transport {
	t.Helper()
	if next == nil {
		next = http.DefaultTransport
	}
	l := newTransport(Options{Next: next, Shared: state.NewMemoryAt(clk.Now), Local: state.NewMemoryAt(clk.Now), Limits: limits}, clk)
	l.SetWorkspace("T1")
	return l
}

// waiting is how many calls of method wait in the limiter.
func waiting(l *Transport, method string) int { return l.Methods()[method].Waiting }

// grants advances the clock a second at a time until n calls were granted,
// and returns them in order.
func grants(t *testing.T, clk *fakeClock, got <-chan string, n int) []string {
	t.Helper()
	var order []string
	for tries := 0; len(order) < n; tries++ {
		if tries > 50*n {
			t.Fatalf("only %d of %d calls were granted: %v", len(order), n, order)
		}
		clk.advance(time.Second)
		select {
		case name := <-got:
			order = append(order, name)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return order
}

func TestCallsWaitingForOneBudgetGoInPriorityOrder(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.update": {PerMinute: 60, Burst: 1}})
	ctx := context.Background()
	if err := l.wait(ctx, "chat.update", "", Refresh, false); err != nil { // the only token
		t.Fatal(err)
	}
	arrivals := []struct {
		name string
		prio Priority
	}{
		{"cosmetic", Cosmetic}, {"refresh 1", Refresh}, {"settle", Settle},
		{"first progress", First}, {"refresh 2", Refresh}, {"note", Note}, {"answer", Answer},
	}
	got := make(chan string, len(arrivals))
	var wg sync.WaitGroup
	for i, a := range arrivals {
		wg.Go(func() {
			if err := l.wait(ctx, "chat.update", "", a.prio, false); err != nil {
				t.Error(err)
			}
			got <- a.name
		})
		wait.Eventually(t, a.name+" to queue", func() bool { return waiting(l, "chat.update") == i+1 })
	}
	order := grants(t, clk, got, len(arrivals))
	wg.Wait()
	want := "answer, note, first progress, settle, refresh 1, refresh 2, cosmetic"
	if strings.Join(order, ", ") != want {
		t.Fatalf("granted in the order %v, want %s", order, want)
	}
}

func TestRefreshesLeaveAReserveThatOnlyAnswersAndNotesMayTake(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.update": {PerMinute: 1, Burst: 10}})
	ctx := context.Background()
	count := func(p Priority) int {
		n := 0
		for ; n < 20; n++ {
			if _, ok := l.TakeNow(ctx, "chat.update", "", p); !ok {
				break
			}
		}
		return n
	}
	if n := count(Cosmetic); n != 5 {
		t.Fatalf("cosmetic calls took %d of 10 tokens, want 5 (half kept)", n)
	}
	if n := count(Refresh); n != 2 {
		t.Fatalf("refreshes took %d more, want 2 (3 kept)", n)
	}
	if n := count(Answer); n != 3 {
		t.Fatalf("an answer found %d tokens in the reserve, want 3", n)
	}
}

func TestA429ClosesTheBudgetForRetryAfterAndHalvesItsRateForAWhile(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	clk := newFakeClock()
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.update": {PerMinute: 60, Burst: 10}})
	post := func() int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/chat.update", strings.NewReader("channel=C1"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := l.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if post() != http.StatusTooManyRequests {
		t.Fatal("the server did not answer 429")
	}
	if _, ok := l.TakeNow(context.Background(), "chat.update", "", Answer); ok {
		t.Fatal("a token was given while Slack asked to wait 5 s")
	}
	if got := l.Rate("chat.update"); got != 0.5 {
		t.Fatalf("rate after a 429 = %v a second, want 0.5 (half of 1)", got)
	}
	clk.advance(5 * time.Second)
	if _, ok := l.TakeNow(context.Background(), "chat.update", "", Answer); !ok {
		t.Fatal("no token after Retry-After passed")
	}
	if post() != http.StatusOK {
		t.Fatal("the call after the wait failed")
	}
	st := l.Methods()["chat.update"]
	if st.Calls != 2 || st.RateLimited != 1 || st.PerMinute != 30 {
		t.Fatalf("stats %+v, want 2 calls, 1 rate limited, a budget of 30 a minute", st)
	}
	clk.advance(penaltyPeriod)
	if _, ok := l.TakeNow(context.Background(), "chat.update", "", Answer); !ok {
		t.Fatal("no token a minute later")
	}
	if got := l.Rate("chat.update"); got != 1 {
		t.Fatalf("rate a minute after the last 429 = %v a second, want 1 again", got)
	}
}

func TestEveryRefreshingSessionGetsItsTurn(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.update": {PerMinute: 60, Burst: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := l.wait(ctx, "chat.update", "", Refresh, false); err != nil { // the only token
		t.Fatal(err)
	}
	// Five sessions ask for a refresh again as soon as they had one, far
	// more than one token a second allows.
	const sessions, rounds = 5, 6
	got := make(chan string, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		name := string(rune('a' + i))
		wg.Go(func() {
			for l.wait(ctx, "chat.update", "", Refresh, false) == nil {
				got <- name
			}
		})
	}
	var order []string
	for range sessions * rounds {
		// Every session is waiting again before the next token comes.
		wait.Eventually(t, "every session to queue", func() bool { return waiting(l, "chat.update") == sessions })
		order = append(order, grants(t, clk, got, 1)...)
	}
	cancel()
	clk.advance(time.Hour)
	wg.Wait()
	counts := map[string]int{}
	for _, n := range order {
		counts[n]++
	}
	for i := range sessions {
		if n := counts[string(rune('a'+i))]; n != rounds {
			t.Fatalf("session %c had %d of %d refreshes: %v", 'a'+i, n, sessions*rounds, order)
		}
	}
}

func TestChatPostMessageIsBudgetedPerChannel(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		_, _ = w.Write([]byte(`{"ok":true,"channel":"` + r.Form.Get("channel") + `"}`))
	}))
	defer srv.Close()
	clk := newFakeClock()
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.postMessage": {PerMinute: 1, Burst: 2, Per: config.PerChannel}})
	post := func(ctx context.Context, channel string) error {
		form := url.Values{"channel": {channel}, "text": {"hi"}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/chat.postMessage", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := l.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for _, ch := range []string{"C1", "C1", "C2", "C2"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := post(ctx, ch); err != nil {
			t.Fatalf("post in %s: %v", ch, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := post(ctx, "C1"); err == nil {
		t.Fatal("a third post in C1 went out with a burst of 2 and no refill")
	}
	if u := l.Methods()["chat.postMessage"].Utilisation; u != 2 {
		t.Fatalf("utilisation %v, want 2 (two posts in the busiest channel against one a minute)", u)
	}
	// A post that waits for C1's next token counts its wait.
	done := make(chan error, 1)
	go func() { done <- post(context.Background(), "C1") }()
	wait.Eventually(t, "the post to queue", func() bool { return waiting(l, "chat.postMessage") == 1 })
	var err error
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("the post did not go out after 1000 s of its clock")
		}
		clk.advance(10 * time.Second)
		select {
		case err = <-done:
		case <-time.After(10 * time.Millisecond): // the post may not have set its timer yet
			continue
		}
		break
	}
	if err != nil {
		t.Fatal(err)
	}
	st := l.Methods()["chat.postMessage"]
	if st.Calls != 5 || st.LastWait < time.Minute-10*time.Second || st.MaxWait != st.LastWait || st.Wait != st.LastWait {
		t.Fatalf("stats %+v: want 5 calls, the last having waited about a minute for its token", st)
	}
}

func TestProgressRefreshesStretchToFitTheBudget(t *testing.T) {
	t.Parallel()
	tier3 := 50.0 / 60
	for _, tc := range []struct {
		live int
		want time.Duration
	}{
		{0, 2 * time.Second},
		{1, 2 * time.Second},   // 30 a minute fit in 60% of 50
		{30, 60 * time.Second}, // 30 sessions share 30 calls a minute
		{100, 200 * time.Second},
	} {
		got := stretch(2*time.Second, tc.live, tier3)
		if (got - tc.want).Abs() > time.Millisecond {
			t.Errorf("%d sessions: every %v, want %v", tc.live, got, tc.want)
		}
		if tc.live > 0 {
			if perSecond := float64(tc.live) / got.Seconds(); perSecond > progressShare*tier3+1e-9 {
				t.Errorf("%d sessions refresh %v times a second, over %v", tc.live, perSecond, progressShare*tier3)
			}
		}
	}
	if got := stretch(2*time.Second, 30, 0); got != 2*time.Second {
		t.Errorf("an unlimited chat.update stretched refreshes to %v", got)
	}
}

func TestReplicasSharingAStorePaceTheirProgressByTheirSum(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tier3 := func() float64 { return 50.0 / 60 }
	a := &Pacer{Base: 2 * time.Second, Rate: tier3}
	b := &Pacer{Base: 2 * time.Second, Rate: tier3}
	for range 10 {
		a.Join()
	}
	for range 20 {
		b.Join()
	}
	var wg sync.WaitGroup
	for _, p := range []*Pacer{a, b} {
		wg.Go(func() { p.Count(ctx, store, "T1", zap.NewNop()) })
	}
	want := stretch(2*time.Second, 30, tier3())
	wait.Eventually(t, "both replicas to pace 30 progress messages", func() bool {
		return a.Interval() == want && b.Interval() == want
	})
	cancel()
	wg.Wait()
	if alone := stretch(2*time.Second, 10, tier3()); alone >= want {
		t.Fatalf("the test proves nothing: 10 alone pace at %v, 30 at %v", alone, want)
	}
}

func TestBudgetsOfChannelsLeftIdleAreForgotten(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := testLimiter(t, clk, nil, map[string]config.RateLimit{"chat.postMessage": {PerMinute: 60, Burst: 4, Per: config.PerChannel}})
	for _, ch := range []string{"C1", "C2"} {
		l.record("chat.postMessage", ch, 0, nil)
	}
	clk.advance(3 * time.Minute)
	l.record("chat.postMessage", "C2", 0, nil)
	l.mu.Lock()
	l.prune(clk.Now())
	_, idle := l.queues[l.keyLocked("chat.postMessage", "C1")]
	_, busy := l.queues[l.keyLocked("chat.postMessage", "C2")]
	l.mu.Unlock()
	if idle || !busy {
		t.Fatalf("after three minutes: C1's idle budget kept %v, C2's busy one kept %v", idle, busy)
	}
}

func TestAStoreThatFailsLeavesTheReplicaBudgetingAlone(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, err := state.DialRedis(context.Background(), srv.URL(), "fallback:")
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.WarnLevel)
	clk := newFakeClock()
	l := newTransport(Options{Next: http.DefaultTransport, Shared: store, Local: state.NewMemoryAt(clk.Now), Limits: map[string]config.RateLimit{"chat.update": {PerMinute: 1, Burst: 2}}, Log: zap.New(core), Cause: redact.Cause}, clk)
	l.SetWorkspace("T1")
	_ = store.Close() // every Take now fails
	for i := range 2 {
		if _, ok := l.TakeNow(context.Background(), "chat.update", "", Answer); !ok {
			t.Fatalf("take %d of a burst of 2 was refused with the store down", i+1)
		}
	}
	if _, ok := l.TakeNow(context.Background(), "chat.update", "", Answer); ok {
		t.Fatal("with the store down, the replica's own bucket gave more than its burst")
	}
	if n := logs.FilterMessageSnippet("budgeting this replica alone").Len(); n != 1 {
		t.Fatalf("%d warnings about the store, want one", n)
	}
}

// hungListener accepts connections and never answers on them, as a Redis
// that hangs or sits behind a partition looks to its clients; it counts
// the connections it was asked for.
type hungListener struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newHungListener(t *testing.T) *hungListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungListener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.conns {
			_ = c.Close()
		}
	})
	return h
}

func (h *hungListener) accepted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// emulatorClient is slack-go on an emulator with channel C1, its HTTP
// client's transport the limiter l builds on next.
func emulatorClient(t *testing.T, build func(next http.RoundTripper) *Transport) (*emulator.Server, *slackapi.Client) {
	t.Helper()
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	srv.AddChannel("C1", "general", true)
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if tr, ok := hc.Transport.(*http.Transport); ok {
		// Calls at once may dial a connection that ends up unused; the
		// emulator's shutdown would wait 5 s for such a new, idle one.
		t.Cleanup(tr.CloseIdleConnections)
	}
	hc.Transport = build(hc.Transport)
	return srv, slackapi.New(srv.BotToken(), slackapi.OptionAPIURL(srv.APIURL()), slackapi.OptionHTTPClient(hc))
}

// A Redis that accepts connections and never answers must not hold every
// call up: the limiter gives the store a short while, then budgets alone
// with its local burst.
func TestAStoreThatHangsDoesNotHoldCallsUp(t *testing.T) {
	t.Parallel()
	hung := newHungListener(t)
	client := redis.NewClient(&redis.Options{Addr: hung.ln.Addr().String()}) // go-redis's own timeouts: 3 s a read, 3 retries
	store := state.NewRedis(client, "hung:")
	t.Cleanup(func() { _ = store.Close() })
	_, api := emulatorClient(t, func(next http.RoundTripper) *Transport {
		l := newTransport(Options{Next: next, Shared: store, Local: state.NewMemory(), Limits: map[string]config.RateLimit{"chat.update": {PerMinute: 50, Burst: 8}}, Log: zap.NewNop(), Cause: redact.Cause}, realClock{})
		l.SetWorkspace("T1")
		return l
	})
	_, ts, err := api.PostMessage("C1", slackapi.MsgOptionText("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	update := func(ctx context.Context, text string) error {
		_, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slackapi.MsgOptionText(text, false))
		return err
	}
	// Three calls one after the other: each took over 2 s when every one
	// waited for the store in turn.
	began := time.Now()
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := update(ctx, fmt.Sprintf("edit %d", i))
		cancel()
		if err != nil {
			t.Fatalf("update %d with the store hung: %v", i+1, err)
		}
	}
	took := time.Since(began)
	if took > 3*time.Second {
		t.Fatalf("three updates took %v with the store hung", took.Round(time.Millisecond))
	}
	// Twenty at once: the local burst of 8 (less the three above, plus
	// what refilled) goes out at once, the rest wait for the local rate.
	const want = 5
	var ok atomic.Int64
	var wg sync.WaitGroup
	began = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for i := range 20 {
		wg.Go(func() {
			if update(ctx, fmt.Sprintf("at once %d", i)) == nil && ok.Add(1) == want {
				cancel() // enough: the others would wait for the local rate
			}
		})
	}
	wg.Wait()
	if n := ok.Load(); n < want {
		t.Fatalf("%d of 20 concurrent updates went out within 3 s with the store hung; the local burst allows %d", n, want)
	}
	t.Logf("store hung: three updates in turn took %v; %d of 20 at once went out in %v", took.Round(time.Millisecond), want, time.Since(began).Round(time.Millisecond))
}

// After a failure the store is left alone for a while, then one call at
// a time asks it again while the others use the local buckets.
func TestAFailedStoreIsProbedByOneCallAtATime(t *testing.T) {
	t.Parallel()
	hung := newHungListener(t)
	// No retries of go-redis's own: each take from the store is one connection.
	store := state.NewRedis(redis.NewClient(&redis.Options{Addr: hung.ln.Addr().String(), MaxRetries: -1}), "hung:")
	t.Cleanup(func() { _ = store.Close() })
	clk := newFakeClock()
	l := newTransport(Options{Next: http.DefaultTransport, Shared: store, Local: state.NewMemoryAt(clk.Now), Limits: map[string]config.RateLimit{"chat.postMessage": {PerMinute: 60, Burst: 4, Per: config.PerChannel}}, Log: zap.NewNop(), Cause: redact.Cause}, clk)
	l.SetWorkspace("T1")
	take := func(channel string) bool {
		_, ok := l.TakeNow(context.Background(), "chat.postMessage", channel, Answer)
		return ok
	}
	if !take("C0") { // the store fails this one; the local bucket serves it
		t.Fatal("no token with the store hung")
	}
	wait.Eventually(t, "the store's connection", func() bool { return hung.accepted() == 1 })
	before := hung.accepted()
	for i := range 5 { // within the cooldown nobody asks the store
		if !take(fmt.Sprintf("C%d", i+1)) {
			t.Fatal("no local token while the store is left alone")
		}
	}
	if n := hung.accepted() - before; n != 0 {
		t.Fatalf("%d connections to the store within its cooldown", n)
	}
	clk.advance(storeCooldown)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			if !take(fmt.Sprintf("D%d", i)) {
				t.Error("no token after the cooldown")
			}
		})
	}
	wg.Wait()
	wait.Eventually(t, "the probe's connection", func() bool { return hung.accepted() > before })
	if n := hung.accepted() - before; n != 1 {
		t.Fatalf("five calls after the cooldown opened %d connections to the store, want one probe", n)
	}
}

// A real Redis that freezes: calls go on with the local buckets at once;
// once it answers again (and the cooldown passed) the shared bucket is
// used again, so another replica sees what this one took.
func TestAFrozenRedisIsBudgetedAroundAndUsedAgainWhenItAnswers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dial := func() *state.Redis { return dialRedis(t, srv, "frozen:") }
	limits := map[string]config.RateLimit{"chat.update": {PerMinute: 1, Burst: 2}}
	clk := newFakeClock()
	core, logs := observer.New(zap.InfoLevel)
	a := newTransport(Options{Next: http.DefaultTransport, Shared: dial(), Local: state.NewMemoryAt(clk.Now), Limits: limits, Log: zap.New(core), Cause: redact.Cause}, clk)
	a.SetWorkspace("T1")
	b := testLimiter(t, newFakeClock(), nil, limits)
	b.store = dial()
	take := func(l *Transport) bool {
		_, ok := l.TakeNow(context.Background(), "chat.update", "", Answer)
		return ok
	}

	srv.Hang()
	began := time.Now()
	got := []bool{take(a), take(a), take(a)}
	took := time.Since(began)
	srv.Resume()
	if !got[0] || !got[1] || got[2] {
		t.Fatalf("with Redis frozen, three takes from a local burst of 2 gave %v", got)
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("three takes with Redis frozen took %v", took.Round(time.Millisecond))
	}
	if logs.FilterMessageSnippet("budgeting this replica alone").Len() != 1 {
		t.Fatal("the fallback to local budgets was not logged")
	}

	// The local bucket is spent; the shared one has its burst, less what a
	// take given up while Redis was frozen may have spent once it ran.
	clk.advance(storeCooldown)
	n := 0
	for n < 3 && take(a) {
		n++
	}
	if n == 0 {
		t.Fatal("Redis answers again, with tokens in the shared bucket, and gave none")
	}
	if take(b) {
		t.Fatal("the other replica found a token: the first did not take from the shared bucket again")
	}
	if logs.FilterMessageSnippet("answering again").Len() != 1 {
		t.Fatal("the store's return was not logged")
	}
}

// A call that waited in the queue still gets its whole time on the wire:
// the bound runs from the moment its token is taken.
func TestTimeQueuedForABudgetDoesNotCountAgainstTheCall(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	clk := newFakeClock()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	next := hc.Transport
	var deadline atomic.Value // of the call as it reached the wire
	wire := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		dl, _ := r.Context().Deadline()
		deadline.Store(dl)
		return next.RoundTrip(r)
	})
	l := testLimiter(t, clk, wire, map[string]config.RateLimit{"chat.update": {PerMinute: 60, Burst: 1}})
	hc.Transport = l
	if err := l.wait(context.Background(), "chat.update", "", Answer, false); err != nil { // the only token
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := hc.Post(srv.URL+"/api/chat.update", "application/x-www-form-urlencoded", strings.NewReader("channel=C1"))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	wait.Eventually(t, "the call to queue", func() bool { return waiting(l, "chat.update") == 1 })
	queued := time.Now() // the call has been waiting since before this
	var err error
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("the call did not go out")
		}
		clk.advance(time.Second)
		select {
		case err = <-done:
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	if err != nil {
		t.Fatal(err)
	}
	dl, _ := deadline.Load().(time.Time)
	if dl.IsZero() {
		t.Fatal("the call went out with no deadline")
	}
	if dl.Before(queued.Add(DefaultWire)) {
		t.Fatalf("the call reached the wire with %v left of its %v: its time in the queue counted against it",
			time.Until(dl).Round(time.Millisecond), DefaultWire)
	}
	if dl.After(time.Now().Add(DefaultWire)) {
		t.Fatalf("the call's deadline %v is beyond %v from now", time.Until(dl), DefaultWire)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// When the store stops counting, a replica soon paces its own progress
// messages alone again instead of the fleet's last count.
func TestAReplicaForgetsTheFleetsCountWhenTheStoreStopsCounting(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dial := func() *state.Redis { return dialRedis(t, srv, "pace:") }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tier3 := func() float64 { return 50.0 / 60 }
	a := &Pacer{Base: 2 * time.Second, Rate: tier3, Beat: 100 * time.Millisecond}
	b := &Pacer{Base: 2 * time.Second, Rate: tier3, Beat: 100 * time.Millisecond}
	for range 10 {
		a.Join()
	}
	for range 20 {
		b.Join()
	}
	var wg sync.WaitGroup
	for _, p := range []*Pacer{a, b} {
		store := dial()
		wg.Go(func() { p.Count(ctx, store, "T1", zap.NewNop()) })
	}
	fleet, alone := stretch(2*time.Second, 30, tier3()), stretch(2*time.Second, 10, tier3())
	wait.Eventually(t, "the first replica to pace 30 progress messages", func() bool { return a.Interval() == fleet })
	srv.Down()
	wait.Eventually(t, "the first replica to pace its own 10 alone", func() bool { return a.Interval() == alone })
	cancel()
	wg.Wait()
}

// dialRedis is a client of srv whose keys start with prefix, closed when
// the test ends.
func dialRedis(t *testing.T, srv *redistest.Server, prefix string) *state.Redis {
	t.Helper()
	s, err := state.DialRedis(context.Background(), srv.URL(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
