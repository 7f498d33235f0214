package slack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// dialRedis opens a store on srv under prefix, closed when t ends: each
// replica has a connection of its own.
func dialRedis(t *testing.T, srv *redistest.Server, prefix string) state.Store {
	t.Helper()
	s, err := state.DialRedis(context.Background(), srv.URL(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// mentionConn is the emulator connection the mention ts was first dealt
// to (the replica answering it), once it was.
func mentionConn(w *bottest.World, ts string) int {
	w.T.Helper()
	conn := 0
	w.Eventually("the mention "+ts+" to be delivered", func() bool {
		for _, e := range w.Slack.Envelopes() {
			var p struct {
				Event struct {
					Type, TS string
				} `json:"event"`
			}
			if e.Conn != 0 && e.Attempt == 0 && json.Unmarshal(e.Payload, &p) == nil && p.Event.Type == "app_mention" && p.Event.TS == ts {
				conn = e.Conn
				return true
			}
		}
		return false
	})
	return conn
}

func TestTwoReplicasOnRedisQueueBehindOneAnothersSessionAndAnswerEachMentionOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "replicas:")), bottest.WithConfig(func(c *config.Config) { c.Slack.MaxConcurrentSessions = 1 }))
	w.Replica(bottest.OnStore(dialRedis(t, srv, "replicas:")))
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open) // before the bots stop, so a failed test cannot leave a session waiting
	var inFlight, peak atomic.Int64
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		n := inFlight.Add(1)
		for old := peak.Load(); n > old && !peak.CompareAndSwap(old, n); old = peak.Load() {
		}
		<-gate
		inFlight.Add(-1)
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	first := w.Slack.Mention(channel, asker, "question 0")
	w.Model.Wait(1) // the first session holds the only slot, and waits
	firstConn := mentionConn(w, first)

	// Mentions until one goes to the other replica: it must queue behind
	// the first replica's session, whose slot is in Redis.
	threads := []string{first}
	for i := 1; ; i++ {
		if i > 40 {
			t.Fatalf("%d mentions all went to connection %d", i-1, firstConn)
		}
		ts := w.Slack.Mention(channel, asker, "question "+strconv.Itoa(i))
		threads = append(threads, ts)
		if mentionConn(w, ts) != firstConn {
			w.Eventually("the other replica's session to queue", func() bool {
				for _, m := range w.Slack.Thread(channel, ts) {
					if m.BotID != "" && strings.Contains(bottest.MessageText(m), "Queued") {
						return true
					}
				}
				return false
			})
			break
		}
	}
	open()
	for i, ts := range threads {
		w.Answered(channel, ts, "Answer to question "+strconv.Itoa(i))
		// An answer posted below its progress message, when chat.update had
		// no token free, removes that message just after.
		w.Eventually(fmt.Sprintf("thread %d to hold the answer alone", i), func() bool {
			return len(bottest.BotMessages(w.Slack.Thread(channel, ts))) == 1
		})
	}
	if peak.Load() != 1 {
		t.Errorf("%d sessions ran at once across two replicas with a cap of 1", peak.Load())
	}
	if n := len(w.Model.Requests()); n != len(threads) {
		t.Errorf("%d model calls for %d mentions: one was answered twice or not at all", n, len(threads))
	}
}

// otherConn is an open emulator connection other than conn.
func otherConn(w *bottest.World, conn int) int {
	w.T.Helper()
	for _, id := range w.Slack.ConnectionIDs() {
		if id != conn {
			return id
		}
	}
	w.T.Fatalf("no connection other than %d", conn)
	return 0
}

// TestAStopClickDeliveredToTheOtherReplicaStopsTheSessionForTheAskerOnly
// delivers Stop clicks to the replica that is not running the session, as
// Slack may: someone else's click is refused there, and the asker's stops
// the session on the replica running it.
func TestAStopClickDeliveredToTheOtherReplicaStopsTheSessionForTheAskerOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "stops:")))
	w.Replica(bottest.OnStore(dialRedis(t, srv, "stops:")))
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.Slack.Mention(channel, asker, "take your time")
	progress := w.ProgressMessage(channel, ts)
	w.Model.Wait(1)
	other := otherConn(w, mentionConn(w, ts))
	value := stopValue(t, progress)
	if _, err := w.Slack.ClickOn(other, channel, progress.TS, "U0EVE", "slackbot_stop", value); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the refusal to someone else", func() bool {
		for _, e := range w.Slack.Ephemerals() {
			if e.User == "U0EVE" && strings.Contains(e.Text, "Only the person who asked") {
				return true
			}
		}
		return false
	})
	if _, err := w.Slack.ClickOn(other, channel, progress.TS, asker, "slackbot_stop", value); err != nil {
		t.Fatal(err)
	}
	w.Answered(channel, ts, "Stopped by <@"+asker+">")
	for _, e := range w.Slack.Envelopes() {
		if e.Type == "interactive" && e.Conn != other {
			t.Errorf("a click went to connection %d, not %d", e.Conn, other)
		}
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls for one question", n)
	}
}

// TestTheSlotTakenWithTheLeaseIsRenewedWhileTheProgressMessageIsPosted
// holds a session in its first progress post (Slack answers 429 with a
// Retry-After longer than state.lease_ttl) after it claimed its thread's
// lease and the fleet's only slot, and checks from another client of the
// same Redis that the slot stays taken all that while: a slot left to
// expire there would let another replica exceed the fleet's cap.
func TestTheSlotTakenWithTheLeaseIsRenewedWhileTheProgressMessageIsPosted(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "renew:")), bottest.WithConfig(func(c *config.Config) {
		c.Slack.MaxConcurrentSessions = 1
		c.State.LeaseTTL = config.Duration(ttl)
	}))
	probe := dialRedis(t, srv, "renew:")
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	w.Slack.RateLimit("chat.postMessage", 1, 2*ttl)
	ts := w.Slack.Mention(channel, asker, "question")
	posts := func() []emulator.Call { return w.Slack.Calls("chat.postMessage") }
	w.Eventually("the progress message to be refused with a 429", func() bool { return len(posts()) > 0 })
	if posts()[0].Status != http.StatusTooManyRequests {
		t.Fatalf("the first post was answered %d", posts()[0].Status)
	}
	// Until the post is retried, more than a lease_ttl later, the slot must
	// stay the session's.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	probes := 0
	for len(posts()) < 2 {
		ok, err := probe.Acquire(ctx, "sessions", "probe", 1, ttl)
		if err != nil {
			t.Fatal(err)
		}
		probes++
		if ok {
			_ = probe.Release(ctx, "sessions", "probe")
			t.Fatalf("the session's slot expired %s after its first progress post was refused, while it was still posting it", time.Since(posts()[0].At).Round(100*time.Millisecond))
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the progress message was never posted again")
		}
	}
	if probes < 2 {
		t.Errorf("the slot was checked %d times while the post waited", probes)
	}
	w.Answered(channel, ts, "Answer to question")
}

// TestAQueuedSessionIsStoppedByAClickDeliveredToTheOtherReplica queues a
// session on one replica behind the other's (the fleet's cap is one) and
// delivers its Stop click to the replica not running it: it is stopped
// before it ever reaches the model.
func TestAQueuedSessionIsStoppedByAClickDeliveredToTheOtherReplica(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "queuedstop:")), bottest.WithConfig(func(c *config.Config) { c.Slack.MaxConcurrentSessions = 1 }))
	w.Replica(bottest.OnStore(dialRedis(t, srv, "queuedstop:")))
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	first := w.Slack.Mention(channel, asker, "question 0")
	w.Model.Wait(1)
	firstConn := mentionConn(w, first)
	var queued emulator.Message
	var ts, question string
	for i := 1; queued.TS == ""; i++ {
		if i > 40 {
			t.Fatalf("%d mentions all went to connection %d", i-1, firstConn)
		}
		question = "question " + strconv.Itoa(i)
		ts = w.Slack.Mention(channel, asker, question)
		if mentionConn(w, ts) == firstConn {
			continue // queued on the same replica: not this test's case
		}
		w.Eventually("the other replica's session to queue", func() bool {
			for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
				if strings.Contains(bottest.MessageText(m), "Queued") {
					queued = m
					return true
				}
			}
			return false
		})
	}
	if _, err := w.Slack.ClickOn(firstConn, channel, queued.TS, asker, "slackbot_stop", stopValue(t, queued)); err != nil {
		t.Fatal(err)
	}
	w.Answered(channel, ts, "Stopped by <@"+asker+">")
	g.open()
	w.Answered(channel, first, "Answer to question 0")
	for _, r := range w.Model.Requests() {
		if q := lastUserText(r); q == question || strings.HasSuffix(q, ": "+question) {
			t.Errorf("the stopped %q reached the model", question)
		}
	}
}
