package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state/redistest"
)

// The tests in this file run several `slackbot run` processes against one
// Slack emulator, one fake model and one redis-server, the way a fleet of
// replicas shares a workspace. Every question carries a thread tag (t07)
// and a question tag (q017) in its text, so the fake model can tell threads
// apart, and every replica calls the model by a name of its own, so the
// model can tell replicas apart.

// fleet is the shared world of a multi-replica test.
type fleet struct {
	t     *testing.T
	bin   string
	srv   *emulator.Server
	model *llmtest.Server
	redis *redistest.Server
	gauge *gauge
	// conf is the slack and state configuration every replica gets.
	conf string
}

// newFleet builds the binary and starts the emulator, the model and
// redis. The model answers each question with "answer-<question tag>"
// after hold, measuring what runs at once meanwhile; block, when it
// returns a channel for a request, holds that request until the channel
// closes.
func newFleet(t *testing.T, redis *redistest.Server, maxSessions int, leaseTTL string, hold time.Duration, block func(question string) <-chan struct{}) *fleet {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "slackbot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	f := &fleet{t: t, bin: bin, srv: srv, model: llmtest.NewServer(t), redis: redis, gauge: newGauge()}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	f.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		q := lastUser(r)
		thread, question := threadTag.FindString(q), questionTag.FindString(q)
		f.gauge.enter(thread, question, r.Model)
		defer f.gauge.leave(thread)
		var gate <-chan struct{}
		if block != nil {
			gate = block(q)
		}
		// The model's own latency, so that sessions overlap when nothing
		// stops them; a gated question waits for its gate besides.
		select {
		case <-time.After(hold):
		case <-done:
		}
		if gate != nil {
			select {
			case <-gate:
			case <-done:
			}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "agent__final_report",
			Arguments: `{"status":"success","report_format":"slack-block-kit","report_content":"Here is answer-` + question + `."}`}}}
	})
	f.conf = fmt.Sprintf("slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  agent: helper\n  max_concurrent_sessions: %d\n  shutdown_grace: 30s\n"+
		"  max_sessions_per_user: 100\n"+ // one asker asks every question
		"  display: message\n"+ // the fleet's tests read progress messages: queued, working, settled
		"state:\n  backend: redis\n  redis_url: %s\n  lease_ttl: %s\nlog:\n  format: json\n",
		srv.BotToken(), srv.AppToken(), srv.APIURL(), maxSessions, redis.URL(), leaseTTL)
	return f
}

var (
	threadTag   = regexp.MustCompile(`\bt\d\d\b`)
	questionTag = regexp.MustCompile(`\bq\d\d\d\b`)
)

// lastUser is the text of the request's last user message: the question
// (earlier ones are the thread's history).
func lastUser(r *llmtest.Recorded) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// replica is one `slackbot run` process.
type replica struct {
	name   string // the model it calls, "m-<name>"
	cmd    *exec.Cmd
	log    *logBuffer
	exited chan struct{}
}

// start runs a replica whose agent calls the model "m-<name>".
func (f *fleet) start(name string) *replica {
	f.t.Helper()
	agent := "---\ndescription: Test agent\nmodels: [fake/m-" + name + "]\nmax_turns: 3\noutput:\n  format: markdown\n---\nYou answer questions.\n"
	cfg := setupAgent(f.t, f.model, agent, f.conf)
	r := &replica{name: name, cmd: exec.Command(f.bin, "run", "--config", cfg), log: newLogBuffer(), exited: make(chan struct{})}
	r.cmd.Stderr = r.log
	if err := r.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	f.t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.exited
	})
	return r
}

// connected waits until n replicas hold a Socket Mode connection.
func (f *fleet) connected(n int, rs ...*replica) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.srv.WaitFor(ctx, func() bool { return f.srv.Connections() == n }); err != nil {
		f.t.Fatalf("%d replicas connected, want %d:%s", f.srv.Connections(), n, logs(rs...))
	}
}

// redeliver sends the app_mention envelopes whose question matches again,
// as Slack does after an ack it did not get; the emulator prefers another
// connection than the first delivery's. It returns how many it sent.
func (f *fleet) redeliver(match func(question string) bool) int {
	f.t.Helper()
	n := 0
	for _, e := range f.srv.Envelopes() {
		var p struct {
			Event struct{ Type, Text string } `json:"event"`
		}
		if e.Type != "events_api" || e.Attempt != 0 || json.Unmarshal(e.Payload, &p) != nil || p.Event.Type != "app_mention" {
			continue
		}
		if !match(questionTag.FindString(p.Event.Text)) {
			continue
		}
		if _, err := f.srv.Redeliver(e.ID); err != nil {
			f.t.Fatal(err)
		}
		n++
	}
	return n
}

// duplicates is how many Events API deliveries carried an event_id an
// earlier delivery had: the test's redeliveries, and the emulator's own
// when an ack came late.
func (f *fleet) duplicates() int {
	seen := map[string]bool{}
	n := 0
	for _, e := range f.srv.Envelopes() {
		var p struct {
			EventID string `json:"event_id"`
		}
		if e.Type != "events_api" || json.Unmarshal(e.Payload, &p) != nil || p.EventID == "" {
			continue
		}
		if seen[p.EventID] {
			n++
		}
		seen[p.EventID] = true
	}
	return n
}

// settled waits until every delivery has reached its end in a replica: the
// questions answered, and every other delivery of their events ignored as
// a duplicate.
func (f *fleet) settled(t *testing.T, questions int, rs ...*replica) {
	t.Helper()
	count := func(msg string) int {
		n := 0
		for _, r := range rs {
			n += r.log.count(msg)
		}
		return n
	}
	waitLogs(t, 3*time.Minute, fmt.Sprintf("%d answers and every duplicate ignored", questions), func() bool {
		return count("answered")+count("duplicate event ignored") >= questions+f.duplicates()
	}, rs...)
}

// answers counts the bot's messages in the thread that carry the answer
// to question.
func (f *fleet) answers(channel, ts, question string) int {
	n := 0
	for _, m := range f.srv.Thread(channel, ts) {
		if m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), "answer-"+question) {
			n++
		}
	}
	return n
}

// working lists the bot's messages in the thread that still say the bot is
// at work (a progress message with its Stop button).
func (f *fleet) working(channel, ts string) []string {
	var out []string
	for _, m := range f.srv.Thread(channel, ts) {
		if m.BotID != "" && strings.Contains(string(m.Blocks), "slackbot_stop") {
			out = append(out, m.Text)
		}
	}
	return out
}

// question is one mention the test sent and where its answer goes.
type question struct {
	tag, channel, thread string
}

// waitLogs waits until cond holds over the replicas' logs.
func waitLogs(t *testing.T, d time.Duration, what string, cond func() bool, rs ...*replica) {
	t.Helper()
	deadline := time.After(d)
	for {
		var changed []<-chan struct{}
		for _, r := range rs {
			changed = append(changed, r.log.changed())
		}
		if cond() {
			return
		}
		done := make(chan struct{})
		select {
		case <-deadline:
			close(done)
			t.Fatalf("%s did not happen within %s:%s", what, d, logs(rs...))
		case <-anyOf(changed, done):
		}
		close(done)
	}
}

// anyOf returns a channel closed when any of chans is; its goroutines end
// then, or when done closes.
func anyOf(chans []<-chan struct{}, done <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	var once sync.Once
	for _, c := range chans {
		go func() {
			select {
			case <-c:
				once.Do(func() { close(out) })
			case <-out:
			case <-done:
			}
		}()
	}
	return out
}

func logs(rs ...*replica) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n--- replica %s:\n%s", r.name, r.log.String())
	}
	return b.String()
}

// TestReplicasAnswerEveryMentionOnceOneSessionPerThreadWithinTheCap runs two
// replicas on one Redis. Forty mentions in four channels, a follow-up
// mention in ten of their threads sent at once, and half of the mentions
// delivered again to the other connection: every question is answered
// exactly once, no thread ever has two sessions at the model at once, no
// more than max_concurrent_sessions run across both processes, and both
// processes answer some.
func TestReplicasAnswerEveryMentionOnceOneSessionPerThreadWithinTheCap(t *testing.T) {
	t.Parallel()
	const limit = 3
	f := newFleet(t, redistest.Start(t), limit, "3s", 150*time.Millisecond, nil)
	a, b := f.start("a"), f.start("b")
	f.connected(2, a, b)

	channels := []string{"C0ONE", "C0TWO", "C0THREE", "C0FOUR"}
	for i, c := range channels {
		f.srv.AddChannel(c, fmt.Sprintf("team-%d", i), true)
	}
	var qs []question
	for i := range 40 {
		c := channels[i%len(channels)]
		tag := fmt.Sprintf("q%03d", i)
		ts := f.srv.Mention(c, "U0ASKER", fmt.Sprintf("t%02d %s what is new?", i, tag))
		qs = append(qs, question{tag, c, ts})
		if i%4 == 0 {
			// A follow-up in the same thread before the first is answered.
			tag := fmt.Sprintf("q%03d", 100+i)
			f.srv.Reply(c, ts, "U0OTHER", fmt.Sprintf("<@%s> t%02d %s and also this?", f.srv.BotUserID(), i, tag))
			qs = append(qs, question{tag, c, ts})
		}
	}
	redelivered := f.redeliver(func(q string) bool { return q[len(q)-1]%2 == 0 })

	// Every envelope reaches an end: answered, or ignored as a duplicate.
	f.settled(t, len(qs), a, b)

	for _, q := range qs {
		if n := f.answers(q.channel, q.thread, q.tag); n != 1 {
			t.Errorf("question %s in %s/%s was answered %d times: %+v", q.tag, q.channel, q.thread, n, f.srv.Thread(q.channel, q.thread))
		}
		if w := f.working(q.channel, q.thread); len(w) > 0 {
			t.Errorf("thread %s/%s still shows progress: %q", q.channel, q.thread, w)
		}
	}
	g := f.gauge.snapshot()
	if len(g.overlaps) > 0 {
		t.Errorf("two sessions were at the model at once in threads %v", g.overlaps)
	}
	if g.peak > limit {
		t.Errorf("%d sessions were at the model at once across both replicas; max_concurrent_sessions is %d", g.peak, limit)
	}
	if g.calls != len(qs) {
		t.Errorf("%d model calls for %d questions", g.calls, len(qs))
	}
	if g.byModel["m-a"] == 0 || g.byModel["m-b"] == 0 || a.log.count("answered") == 0 || b.log.count("answered") == 0 {
		t.Errorf("one replica served nothing: model calls by replica %v; answers a=%d b=%d",
			g.byModel, a.log.count("answered"), b.log.count("answered"))
	}
	if n, want := a.log.count("duplicate event ignored")+b.log.count("duplicate event ignored"), f.duplicates(); n != want || want < redelivered {
		t.Errorf("%d deliveries of events already delivered (%d sent by the test), %d recognised as duplicates", want, redelivered, n)
	}
	t.Logf("%d questions, %d redelivered; peak %d at once; calls by replica %v", len(qs), redelivered, g.peak, g.byModel)
	if t.Failed() {
		t.Log(logs(a, b))
	}
}

// TestAKilledReplicasThreadIsServedByAnotherOnceItsLeaseExpires kills the
// replica running a session with SIGKILL (after it has noticed its lease
// taken by someone else, and gone on). Its thread lease and its
// session slot (the only one: max_concurrent_sessions is 1) expire after
// state.lease_ttl, and a follow-up in the thread is then answered once, by
// the other replica, which also closes the dead session's progress message.
func TestAKilledReplicasThreadIsServedByAnotherOnceItsLeaseExpires(t *testing.T) {
	t.Parallel()
	never := make(chan struct{}) // the first question is never answered
	f := newFleet(t, redistest.Start(t), 1, "3s", 0, func(q string) <-chan struct{} {
		if strings.Contains(q, "q001") {
			return never
		}
		return nil
	})
	a, b := f.start("a"), f.start("b")
	f.connected(2, a, b)
	f.srv.AddChannel("C0ONE", "team", true)
	ts := f.srv.Mention("C0ONE", "U0ASKER", "t01 q001 a long one")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.gauge.waitFor(ctx, func(g gaugeState) bool { return g.calls == 1 }); err != nil {
		t.Fatalf("the first question never reached the model:%s", logs(a, b))
	}
	victim, survivor := a, b
	if f.gauge.snapshot().byModel["m-b"] == 1 {
		victim, survivor = b, a
	}
	// Someone else takes the thread's lease for a moment, as a replica
	// would after an outage longer than the lease: the victim notices when
	// it next renews, and its session goes on.
	rc := redis.NewClient(&redis.Options{Addr: f.redis.Addr})
	defer rc.Close()
	if err := rc.Set(ctx, "slackbot:key:lease:thread:C0ONE/"+ts, "intruder", 1500*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	waitLogs(t, time.Minute, "the lost lease noticed", func() bool {
		return victim.log.count("thread lease lost to another replica; two sessions may answer in it") == 1
	}, victim)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	f.connected(1, survivor)

	f.srv.Reply("C0ONE", ts, "U0ASKER", fmt.Sprintf("<@%s> t01 q002 are you there?", f.srv.BotUserID()))
	if err := f.srv.WaitFor(ctx, func() bool { return f.answers("C0ONE", ts, "q002") > 0 }); err != nil {
		t.Fatalf("the follow-up was never answered:%s", logs(survivor))
	}
	// The dead session's progress message is settled by the follow-up's
	// session when the dead replica's liveness mark is gone by then, else
	// by the survivor's next sweep, within half a lease.
	settled := func() bool {
		for _, m := range f.srv.Thread("C0ONE", ts) {
			if m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), "the bot stopped while working on this") {
				return len(f.working("C0ONE", ts)) == 0
			}
		}
		return false
	}
	if err := f.srv.WaitFor(ctx, settled); err != nil {
		t.Errorf("the dead session's progress message was not settled: %+v", f.srv.Thread("C0ONE", ts))
	}
	// Let the survivor finish, so a second answer would have been posted.
	waitLogs(t, time.Minute, "the follow-up's session end", func() bool { return survivor.log.count("answered") == 1 }, survivor)
	if n := f.answers("C0ONE", ts, "q002"); n != 1 {
		t.Errorf("the follow-up was answered %d times", n)
	}
	if n := f.answers("C0ONE", ts, "q001"); n != 0 {
		t.Errorf("the killed session's question was answered %d times", n)
	}
	g := f.gauge.snapshot()
	if g.calls != 2 || g.byModel["m-"+survivor.name] != 1 {
		t.Errorf("model calls %d by replica %v; want the follow-up from the survivor %s only", g.calls, g.byModel, survivor.name)
	}
	if t.Failed() {
		t.Log(logs(survivor))
	}
}

// TestAFollowUpOnAnotherReplicaWaitsForTheThreadsSession sends follow-ups
// in a thread whose session is held at the model until one of them lands on
// the other replica's connection. That replica must wait for the thread's
// lease (and says so) instead of starting a second session in the thread;
// once the first session ends, every follow-up is answered once, one
// session at a time.
func TestAFollowUpOnAnotherReplicaWaitsForTheThreadsSession(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	f := newFleet(t, redistest.Start(t), 3, "3s", 0, func(q string) <-chan struct{} {
		if strings.Contains(q, "q001") {
			return gate
		}
		return nil
	})
	a, b := f.start("a"), f.start("b")
	f.connected(2, a, b)
	f.srv.AddChannel("C0ONE", "team", true)
	ts := f.srv.Mention("C0ONE", "U0ASKER", "t01 q001 the first question")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.gauge.waitFor(ctx, func(g gaugeState) bool { return g.calls == 1 }); err != nil {
		t.Fatalf("the first question never reached the model:%s", logs(a, b))
	}
	first, other := a, b
	if f.gauge.snapshot().byModel["m-b"] == 1 {
		first, other = b, a
	}
	firstConn := f.conn("q001")
	sent := 1
	for {
		if sent > 30 {
			t.Fatal("thirty follow-ups all went to the connection of the thread's session")
		}
		sent++
		tag := fmt.Sprintf("q%03d", sent)
		f.srv.Reply("C0ONE", ts, "U0ASKER", fmt.Sprintf("<@%s> t01 %s and then?", f.srv.BotUserID(), tag))
		if f.conn(tag) != firstConn {
			break
		}
	}
	// Either the other replica waits for the lease, or — the failure this
	// test exists for — its session reaches the model beside the first.
	waitLogs(t, time.Minute, "the other replica waiting for the thread", func() bool {
		return other.log.count("another replica holds this thread; waiting") > 0 || len(f.gauge.snapshot().overlaps) > 0
	}, a, b)
	close(gate)
	waitLogs(t, 2*time.Minute, fmt.Sprintf("%d answers", sent), func() bool {
		return a.log.count("answered")+b.log.count("answered") >= sent
	}, a, b)
	g := f.gauge.snapshot()
	if len(g.overlaps) > 0 {
		t.Errorf("two sessions were at the model at once in thread %v", g.overlaps)
	}
	for i := 1; i <= sent; i++ {
		if n := f.answers("C0ONE", ts, fmt.Sprintf("q%03d", i)); n != 1 {
			t.Errorf("q%03d was answered %d times", i, n)
		}
	}
	if g.calls != sent {
		t.Errorf("%d model calls for %d questions", g.calls, sent)
	}
	t.Logf("%d follow-ups; the first session ran in %s", sent-1, first.name)
	if t.Failed() {
		t.Log(logs(a, b))
	}
}

// conn is the connection the first delivery of the app_mention with
// question tag went to; the emulator picks one when it sends.
func (f *fleet) conn(tag string) int {
	f.t.Helper()
	for _, e := range f.srv.Envelopes() {
		var p struct {
			Event struct{ Type, Text string } `json:"event"`
		}
		if e.Type == "events_api" && e.Attempt == 0 && json.Unmarshal(e.Payload, &p) == nil && p.Event.Type == "app_mention" &&
			questionTag.FindString(p.Event.Text) == tag {
			return e.Conn
		}
	}
	f.t.Fatalf("no envelope carries %s", tag)
	return 0
}

// TestReplicasRideOutARedisOutageWithoutAnsweringTwice takes Redis away
// (SIGKILL) while three sessions are at the model, three wait for a slot,
// and new mentions and redeliveries arrive, then brings it back on the same
// port with its data (an append-only file, as a production Redis keeps).
// Neither replica crashes; each logs a failing kind of call once, not per
// call, and its recovery; every question is answered exactly once, and
// every redelivery, of an event answered before the outage or during it,
// is recognised.
func TestReplicasRideOutARedisOutageWithoutAnsweringTwice(t *testing.T) {
	t.Parallel()
	redis := redistest.StartPersistent(t)
	release := make(chan struct{})
	f := newFleet(t, redis, 3, "3s", 0, func(q string) <-chan struct{} {
		if strings.Contains(q, "before") {
			return release
		}
		return nil
	})
	a, b := f.start("a"), f.start("b")
	f.connected(2, a, b)
	channels := []string{"C0ONE", "C0TWO", "C0THREE"}
	for i, c := range channels {
		f.srv.AddChannel(c, fmt.Sprintf("team-%d", i), true)
	}
	var qs []question
	ask := func(i int, when string) {
		c := channels[i%len(channels)]
		tag := fmt.Sprintf("q%03d", i)
		qs = append(qs, question{tag, c, f.srv.Mention(c, "U0ASKER", fmt.Sprintf("t%02d %s asked %s the outage", i, tag, when))})
	}
	for i := range 6 {
		ask(i, "before")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.gauge.waitFor(ctx, func(g gaugeState) bool { return g.inFlight == 3 }); err != nil {
		t.Fatalf("three sessions never reached the model:%s", logs(a, b))
	}

	redis.Down()
	for i := 10; i < 16; i++ {
		ask(i, "during")
	}
	redelivered := f.redeliver(func(q string) bool { return q[len(q)-1]%2 == 0 })
	// Redis stays away until the replicas have met it failing for every
	// kind of call: new events, queued sessions asking for a slot, the
	// running sessions renewing their thread leases — which goes on — and
	// then, once those sessions end, recording them.
	noticed := func(kinds ...string) bool {
		seen := map[any]bool{}
		for _, r := range []*replica{a, b} {
			for _, l := range r.log.lines("state store failing; retrying") {
				seen[l["calls"]] = true
			}
		}
		for _, k := range kinds {
			if !seen[k] {
				return false
			}
		}
		return true
	}
	waitLogs(t, time.Minute, "the outage noticed by events, slots and leases",
		func() bool { return noticed("event dedup", "session slots", "thread lease") }, a, b)
	close(release)
	waitLogs(t, time.Minute, "three sessions ending during the outage", func() bool {
		return noticed("session records") && a.log.count("answered")+b.log.count("answered") == 3
	}, a, b)
	redis.Up(t)

	f.settled(t, len(qs), a, b)

	for _, r := range []*replica{a, b} {
		select {
		case <-r.exited:
			t.Errorf("replica %s exited during the outage", r.name)
		default:
		}
	}
	for _, q := range qs {
		if n := f.answers(q.channel, q.thread, q.tag); n != 1 {
			t.Errorf("question %s was answered %d times", q.tag, n)
		}
		if w := f.working(q.channel, q.thread); len(w) > 0 {
			t.Errorf("thread of %s still shows progress: %q", q.tag, w)
		}
	}
	if g := f.gauge.snapshot(); g.calls != len(qs) {
		t.Errorf("%d model calls for %d questions: %v", g.calls, len(qs), g.byQuestion)
	}
	if n, want := a.log.count("duplicate event ignored")+b.log.count("duplicate event ignored"), f.duplicates(); n != want || want < redelivered {
		t.Errorf("%d deliveries of events already delivered (%d sent by the test), %d recognised as duplicates", want, redelivered, n)
	}
	recovered := 0
	for _, r := range []*replica{a, b} {
		perKind := map[string]int{}
		for _, l := range r.log.lines("state store failing; retrying") {
			kind, _ := l["calls"].(string)
			perKind[kind]++
			if strings.Contains(fmt.Sprint(l), redis.URL()) {
				t.Errorf("replica %s logged the Redis URL: %v", r.name, l)
			}
		}
		// One line when a kind starts failing, whatever flaps follow
		// within the minute. A line per call would be dozens: a queued
		// session asks for a slot five times a second.
		for kind, n := range perKind {
			if n > 1 {
				t.Errorf("replica %s logged %d failures of %s calls for one outage", r.name, n, kind)
			}
		}
		recovered += r.log.count("state store answering again")
		if n := r.log.count("dedup store unavailable; answering a first delivery") + r.log.count("dedup store unavailable; a redelivered event is dropped rather than risk a second answer"); n > 0 {
			t.Errorf("replica %s gave up on the store during a short outage", r.name)
		}
		t.Logf("replica %s: failures logged by kind %v", r.name, perKind)
	}
	if recovered == 0 {
		t.Error("no replica logged that the store answers again")
	}
	if t.Failed() {
		t.Log(logs(a, b))
	}
}
