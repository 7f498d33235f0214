package slack_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// End-to-end load of the headend: the real bot over Socket Mode against the
// emulator, with the fake model behind it, all in this process. A session is
// a mention, its ack, the progress message, one model call answering with a
// final report, and the answer in place of the progress message.
//
// Each iteration is a fixed workload, so figures from -benchtime 1x compare
// across commits:
//
//	go test -run '^$' -bench 'Slack|AckLatency|InFlightMemory' -benchtime 1x ./slack/

const (
	benchChannels = 100  // mentions are spread over this many channels, each its own thread
	loadSessions  = 3000 // sessions per iteration of BenchmarkSlackSessions
	loadWindow    = 200  // sessions in flight at once while measuring throughput
	ackMentions   = 500  // mentions per iteration of BenchmarkAckLatency
	ackRate       = 250  // their pace, per second: well under the throughput
	memSessions   = 1000 // sessions in flight at once in BenchmarkInFlightMemory
	memDelay      = 2 * time.Second
	profileRate   = 16 << 10 // bytes per heap profile sample in BenchmarkInFlightMemory
)

// BenchmarkSlackSessions measures sessions per second end to end with a
// model that answers at once, with loadWindow sessions in flight (a new
// mention as soon as an answer is posted), and the ack latency under that
// load.
func BenchmarkSlackSessions(b *testing.B) {
	w := newLoadWorld(b)
	w.warmUp(b)
	var acks []time.Duration
	b.ResetTimer()
	for range b.N {
		sent := w.mentionClosedLoop(b, loadSessions)
		b.StopTimer()
		acks = append(acks, w.ackLatencies(b, sent)...)
		b.StartTimer()
	}
	elapsed := b.Elapsed()
	b.StopTimer()
	w.check(b)
	b.ReportMetric(float64(loadSessions*b.N)/elapsed.Seconds(), "sessions/s")
	reportAcks(b, acks)
	b.ReportMetric(0, "ns/op")
}

// BenchmarkReplicas runs BenchmarkSlackSessions' load against one bot and
// against two bots sharing one real redis-server, both through the one
// emulator, which deals each envelope to one of its connections at random.
// Both use the Redis store, so the replicas are the only difference; every
// mention must be answered exactly once.
func BenchmarkReplicas(b *testing.B) {
	srv := redistest.Start(b)
	var worlds atomic.Int64
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("bots=%d", n), func(b *testing.B) {
			prefix := fmt.Sprintf("bench%d:", worlds.Add(1)) // event ids start again with each emulator
			stores := make([]state.Store, n)
			for i := range stores {
				s, err := state.DialRedis(context.Background(), srv.URL(), prefix)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.Close() })
				stores[i] = s
			}
			w := newLoadWorldOn(b, stores...)
			w.warmUp(b)
			base := w.answered.Load()
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				w.mentionClosedLoop(b, loadSessions)
			}
			elapsed := b.Elapsed()
			b.StopTimer()
			// CPU per session moves less than sessions/s when other work
			// shares the machine: it shows what a second replica costs.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(loadSessions*b.N), "cpu-µs/session")
			w.check(b)
			if got, want := w.answered.Load()-base, int64(loadSessions*b.N); got != want {
				b.Errorf("%d answers for %d mentions", got, want)
			}
			b.ReportMetric(float64(loadSessions*b.N)/elapsed.Seconds(), "sessions/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system: the
// bots, the emulator and the fake model, not redis-server.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAckLatency measures the time from a mention to its envelope's
// ack at a steady ackRate mentions per second, every one of them a session.
// Latency runs from the envelope's write to the bot's socket (recorded by
// the emulator's writer) to the ack's arrival.
func BenchmarkAckLatency(b *testing.B) {
	w := newLoadWorld(b)
	w.warmUp(b)
	var acks []time.Duration
	b.ResetTimer()
	for range b.N {
		sent := make(map[string]time.Time, ackMentions)
		tick := time.NewTicker(time.Second / ackRate)
		base := w.answered.Load()
		for i := range ackMentions {
			<-tick.C
			t0 := time.Now()
			sent[w.srv.Mention(benchChannel(i), asker, "what is new?")] = t0
		}
		tick.Stop()
		w.waitAnswered(b, base+ackMentions)
		b.StopTimer()
		acks = append(acks, w.ackLatencies(b, sent)...)
		b.StartTimer()
	}
	b.StopTimer()
	w.check(b)
	reportAcks(b, acks)
	b.ReportMetric(0, "ns/op")
}

// BenchmarkInFlightMemory holds memSessions sessions in flight at once
// (each waiting memDelay for the model) and reports the heap and RSS they
// add, per session. The emulator and the fake model run in this process, so
// the totals include their share: what they hold for a session in flight
// (its messages, envelopes, recorded calls, the model's handler and
// connection). A heap profile taken at the same moments splits the heap
// between the bot ("bot-heap-KB/session") and the world around it.
func BenchmarkInFlightMemory(b *testing.B) {
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = profileRate // to split the heap by who made it
	defer func() { runtime.MemProfileRate = rate }()
	for range b.N {
		w := newLoadWorld(b)
		w.warmUp(b)
		base := snapshot()
		answered := w.answered.Load()
		w.delay.Store(int64(memDelay))
		for i := range memSessions {
			w.srv.Mention(benchChannel(i), asker, "what is new?")
			if i%50 == 49 {
				w.drain(b)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := w.model.WaitContext(ctx, int(w.warmed)+memSessions)
		cancel()
		if err != nil {
			b.Fatalf("the model did not see %d sessions: %v", memSessions, err)
		}
		peak := snapshot()
		inFlight := memSessions - int(w.answered.Load()-answered)
		if inFlight < memSessions {
			b.Logf("%d sessions had ended before all %d reached the model: the ramp took longer than %v", memSessions-inFlight, memSessions, memDelay)
		}
		w.waitAnswered(b, answered+memSessions)
		after := snapshot()
		w.delay.Store(0)
		w.check(b)
		w.close(b)

		n := float64(inFlight)
		b.ReportMetric(float64(peak.heap-base.heap)/1024/n, "heap-KB/session")
		b.ReportMetric(float64(peak.bot-base.bot)/1024/n, "bot-heap-KB/session")
		b.ReportMetric(float64(peak.stack-base.stack)/1024/n, "stack-KB/session")
		b.ReportMetric(float64(peak.rss-base.rss)/1024/n, "rss-KB/session")
		b.ReportMetric(float64(peak.goroutines-base.goroutines)/n, "goroutines/session")
		// What stays once the sessions are over: the emulator's and the
		// fake model's records of them, and anything the bot leaked.
		b.ReportMetric(float64(after.heap-base.heap)/1024/memSessions, "retained-KB/session")
		b.ReportMetric(float64(after.bot-base.bot)/1024/memSessions, "bot-retained-KB/session")
	}
	b.ReportMetric(0, "ns/op")
}

// loadWorld is the bot, the emulator and the fake model, set for load: many
// sessions at once, progress refreshes too rare to matter, and no logging
// beyond counting answers.
type loadWorld struct {
	srv      *emulator.Server
	model    *llmtest.Server
	stop     context.CancelFunc // stops every bot
	done     chan error         // one value per bot when it stops
	bots     int
	answered atomic.Int64 // "answered" log lines: the answer has been posted
	tick     chan struct{}
	slots    chan struct{} // the closed loop's window, released per answer (none taken outside it)
	delay    atomic.Int64  // the model's latency
	warmed   int64

	mu       sync.Mutex
	problems []string // warnings the bot logged
}

func newLoadWorld(b *testing.B) *loadWorld {
	b.Helper()
	return newLoadWorldOn(b, state.NewMemory())
}

// newLoadWorldOn starts one bot per store, replicas on the one emulator,
// each with a runner of its own, and waits until all are connected.
func newLoadWorldOn(b *testing.B, stores ...state.Store) *loadWorld {
	b.Helper()
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv.AddUser(asker, "ada")
	for i := range benchChannels {
		srv.AddChannel(benchChannel(i), fmt.Sprintf("load-%03d", i), true)
	}
	w := &loadWorld{srv: srv, model: llmtest.NewServer(b), done: make(chan error, len(stores)), bots: len(stores),
		tick: make(chan struct{}, 1), slots: make(chan struct{}, loadWindow)}
	report, _ := json.Marshal(map[string]any{"status": "success", "report_format": "slack-block-kit", "report_content": "The *fast path* is now the default."})
	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		return llmtest.Reply{Delay: time.Duration(w.delay.Load()),
			ToolCalls: []llmtest.ToolCall{{Name: agent.FinalReportTool, Arguments: string(report)}}}
	})
	cfg := bottest.Config(srv, bottest.Agent())
	cfg.Slack.SlashCommand, cfg.Slack.ProgressInterval = "", config.Duration(time.Minute)
	cfg.Slack.MaxConcurrentSessions, cfg.Slack.ShutdownGrace = 2*memSessions, config.Duration(10*time.Second)
	// One person asks every question of the load, all at once: neither the
	// per-person cap nor the queue's bound may refuse any of them.
	cfg.Slack.MaxSessionsPerUser, cfg.Slack.MaxQueuedSessions = 1<<20, 1<<20
	// The headend's own throughput is measured here, not Slack's budgets:
	// every method gets a budget the load never reaches.
	cfg.Slack.RateLimits = unreachedRateLimits()
	log := zap.New(&answerCounter{w: w})
	ctx, stop := context.WithCancel(context.Background())
	w.stop = stop
	b.Cleanup(func() { w.close(b) })
	for _, st := range stores {
		bot, err := slack.New(slack.Options{Config: cfg, Runner: bottest.Runner(b, w.model, cfg, log), State: st, Log: log})
		if err != nil {
			b.Fatal(err)
		}
		go func() { w.done <- bot.Run(ctx) }()
	}
	w.waitFor(b, "the bots to connect", func() bool { return srv.Connections() >= len(stores) })
	return w
}

// unreachedRateLimits gives every Slack method a budget no load reaches.
func unreachedRateLimits() map[string]config.RateLimit {
	out := map[string]config.RateLimit{}
	for m, l := range config.DefaultSlackRateLimits {
		l.PerMinute, l.Burst = 1e9, 1e6
		out[m] = l
	}
	return out
}

// close stops the bot, waits for it, and stops the emulator (once).
func (w *loadWorld) close(b *testing.B) {
	if w.stop == nil {
		return
	}
	w.stop()
	w.stop = nil
	timeout := time.After(30 * time.Second)
	for range w.bots {
		select {
		case <-w.done:
		case <-timeout:
			b.Error("a bot did not stop within 30 s")
		}
	}
	_ = w.srv.Close()
}

func benchChannel(i int) string { return fmt.Sprintf("C0LOAD%03d", i%benchChannels) }

// warmUp answers one session in every channel, so that what is cached per
// channel (its info) and the connections are there before measuring.
func (w *loadWorld) warmUp(b *testing.B) {
	b.Helper()
	base := w.answered.Load()
	for i := range benchChannels {
		w.srv.Mention(benchChannel(i), asker, "warm up")
	}
	w.waitAnswered(b, base+benchChannels)
	w.warmed = w.answered.Load()
}

// mentionClosedLoop sends n mentions, keeping at most loadWindow sessions in
// flight, and returns when all are answered, with each mention's send time
// by its ts.
func (w *loadWorld) mentionClosedLoop(b *testing.B, n int) map[string]time.Time {
	b.Helper()
	sent := make(map[string]time.Time, n)
	base := w.answered.Load()
	for i := range n {
		w.slots <- struct{}{}
		t0 := time.Now()
		sent[w.srv.Mention(benchChannel(i), asker, "what is new?")] = t0
	}
	w.waitAnswered(b, base+int64(n))
	return sent
}

// drain waits until the emulator has few envelopes awaiting an ack: it
// drops a connection whose outgoing queue fills up, as Slack would.
func (w *loadWorld) drain(b *testing.B) {
	w.waitFor(b, "acks to catch up", func() bool { return w.srv.EnvelopesPending() < 300 })
}

func (w *loadWorld) waitFor(b *testing.B, what string, cond func() bool) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.srv.WaitFor(ctx, cond); err != nil {
		b.Fatalf("timed out waiting for %s", what)
	}
}

// waitAnswered waits until n answers in all have been posted.
func (w *loadWorld) waitAnswered(b *testing.B, n int64) {
	b.Helper()
	deadline := time.After(60 * time.Second)
	for w.answered.Load() < n {
		select {
		case <-w.tick:
		case <-deadline:
			b.Fatalf("%d of %d sessions answered in 60 s; the bot warned: %v", w.answered.Load(), n, w.warnings())
		}
	}
}

// check fails the benchmark when the bot warned of anything (an answer
// not posted, a lost connection) or an envelope had to be redelivered.
func (w *loadWorld) check(b *testing.B) {
	b.Helper()
	if p := w.warnings(); len(p) > 0 {
		b.Errorf("the bot warned under load: %v", p)
	}
	redelivered := 0
	for _, e := range w.srv.Envelopes() {
		if e.Attempt > 0 {
			redelivered++
		}
	}
	if redelivered > 0 {
		b.Errorf("%d envelopes were redelivered: acks came later than Slack waits", redelivered)
	}
}

func (w *loadWorld) warnings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.problems)
}

// ackLatencies pairs each mention's envelopes (app_mention and message)
// with their acks.
func (w *loadWorld) ackLatencies(b *testing.B, sent map[string]time.Time) []time.Duration {
	b.Helper()
	acked := map[string]time.Time{}
	for _, a := range w.srv.Acks() {
		acked[a.EnvelopeID] = a.At
	}
	var out []time.Duration
	for _, e := range w.srv.Envelopes() {
		var p struct {
			Event struct {
				Type string `json:"type"`
				TS   string `json:"ts"`
			} `json:"event"`
		}
		if e.Type != "events_api" || json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		t0, ok := sent[p.Event.TS]
		if !ok {
			continue
		}
		if !e.SentAt.IsZero() {
			// From the envelope's write to the socket: the bot's own
			// latency, without the emulator's queueing before it.
			t0 = e.SentAt
		}
		at, ok := acked[e.ID]
		if !ok {
			b.Fatalf("envelope %s (%s) was never acked", e.ID, p.Event.Type)
		}
		out = append(out, at.Sub(t0))
	}
	if len(out) != 2*len(sent) {
		b.Fatalf("%d acked envelopes for %d mentions, want two each", len(out), len(sent))
	}
	return out
}

func reportAcks(b *testing.B, acks []time.Duration) {
	slices.Sort(acks)
	q := func(p float64) float64 {
		return float64(acks[min(len(acks)-1, int(p*float64(len(acks))))]) / 1e6
	}
	b.ReportMetric(q(0.50), "ack-p50-ms")
	b.ReportMetric(q(0.99), "ack-p99-ms")
	b.ReportMetric(float64(acks[len(acks)-1])/1e6, "ack-max-ms")
}

// answerCounter is the bot's log: it counts the "answered" lines, which the
// bot writes once a session's answer is posted, and keeps warnings.
type answerCounter struct{ w *loadWorld }

func (c *answerCounter) Enabled(l zapcore.Level) bool { return l >= zapcore.InfoLevel }

func (c *answerCounter) With([]zapcore.Field) zapcore.Core { return c }

func (c *answerCounter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == "answered" || e.Level >= zapcore.WarnLevel {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *answerCounter) Write(e zapcore.Entry, fields []zapcore.Field) error {
	w := c.w
	if budgetFallback(e, fields) {
		return nil
	}
	if e.Message != "answered" {
		w.mu.Lock()
		w.problems = append(w.problems, e.Message)
		w.mu.Unlock()
		return nil
	}
	w.answered.Add(1)
	select {
	case <-w.slots:
	default:
	}
	select {
	case w.tick <- struct{}{}:
	default:
	}
	return nil
}

func (c *answerCounter) Sync() error { return nil }

// usage is the process's memory at one moment, after a collection.
type usage struct {
	heap, stack, rss, goroutines int64
	bot                          int64 // heap in use allocated by the bot, by the heap profile
}

func snapshot() usage {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return usage{heap: int64(m.HeapInuse), stack: int64(m.StackInuse), rss: vmRSS(),
		goroutines: int64(runtime.NumGoroutine()), bot: botHeap()}
}

// worldFrames mark an allocation as the emulator's, the fake model's (their
// HTTP servers included) or this benchmark's, not the bot's.
var worldFrames = []string{"/slack/emulator.", "/llm/llmtest.", "net/http.(*conn).serve", "slack_test."}

// botHeap sums the in-use bytes of the heap profile whose allocation stack
// has no frame of the world around the bot.
func botHeap() int64 {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+100)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	var total int64
	for i := range recs {
		r := &recs[i]
		if r.InUseBytes() == 0 || fromWorld(r.Stack()) {
			continue
		}
		// Unsample as pprof does: an object of size s is sampled with
		// probability 1-exp(-s/rate).
		size := float64(r.AllocBytes) / float64(r.AllocObjects)
		total += int64(float64(r.InUseBytes()) / (1 - math.Exp(-size/float64(runtime.MemProfileRate))))
	}
	return total
}

func fromWorld(stack []uintptr) bool {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		for _, w := range worldFrames {
			if strings.Contains(f.Function, w) {
				return true
			}
		}
		if !more {
			return false
		}
	}
}

// vmRSS is the process's resident set in bytes, from /proc (0 elsewhere).
func vmRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// budgetFallback reports whether a line is the limiter giving up on the
// shared rate budget for a moment: a take from the store not answered
// within its 200 ms, which a process saturated by the load's thousands of
// goroutines may cause even on the in-memory store. The limiter then
// budgets alone, as designed; the figures measured here do not depend on it.
func budgetFallback(e zapcore.Entry, fields []zapcore.Field) bool {
	if e.Message == "the shared Slack rate budget is unavailable; budgeting this replica alone" {
		return true
	}
	for _, f := range fields {
		if f.Key == "calls" && f.String == "rate budgets" {
			return true
		}
	}
	return false
}
