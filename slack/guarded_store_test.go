package slack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/slacktest"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// TestAFollowUpCheckOnAHungStoreDoesNotHoldUpTheEnvelopesAfterIt answers a
// mention (its thread becomes the bot's), pauses Redis on a client whose
// calls would wait 30 s for it, and posts a reply in that thread and then
// a new mention: whether the reply is a follow-up is asked of the store on
// the envelope loop, within a bound, so the mention is acknowledged long
// before the store answers again.
func TestAFollowUpCheckOnAHungStoreDoesNotHoldUpTheEnvelopesAfterIt(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	store, err := state.DialRedis(context.Background(), redis.URL()+"?read_timeout=30s&write_timeout=30s", "followup:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	w := newWorldOn(t, store)
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return textReport("Answer to " + lastUserText(r)) })
	first := w.srv.Mention(channel, asker, "first")
	w.answered(channel, first, "Answer to first")
	pauseRedis(t, redis, 20000)
	w.srv.Reply(channel, first, asker, "and another thing")
	ts := w.srv.Mention(channel, asker, "second")
	mention, acked := ackOf(t, w.srv, ts)
	if d := acked.At.Sub(mention.SentAt); d > 10*time.Second {
		t.Errorf("the mention after a follow-up was acknowledged %s after it was sent: the follow-up check held the envelope loop", d.Round(time.Second))
	}
}

// TestFailingQuotaCountersAreAWarningOncePerOutage closes the store under a
// bot with daily budgets and asks three questions: each is answered (a
// broken counter must not silence the bot), and the budgets not being
// enforced is one warning, not one per question.
func TestFailingQuotaCountersAreAWarningOncePerOutage(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	patience := func(o *slack.Options) { o.StorePatience = 300 * time.Millisecond }
	w := newWorldAt(t, nil, dialRedis(t, redis, "quota:"), patience, func(c *config.Config, _ *agent.Runner) {
		c.Quotas = config.Quotas{User: config.Budget{DailyTokens: 100000}, Message: config.DefaultQuotaMessage}
	})
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return textReport("Answer to " + lastUserText(r)) })
	redis.Down()
	for _, q := range []string{"one", "two", "three"} {
		ts := w.srv.Mention(channel, asker, q)
		w.answered(channel, ts, "Answer to "+q)
	}
	if n := w.logs.FilterMessage("quota counters unavailable; not enforcing").FilterLevelExact(zap.WarnLevel).Len(); n != 1 {
		t.Errorf("the budgets not enforced were a warning %d times for one outage, want once", n)
	}
}

// TestAStopIsLookedUpWithOneStoreCallPerSession runs a session for a few
// seconds under a bot with three admins and counts what the store is
// asked about stops: only the session's one key, never a key per asker
// and admin.
func TestAStopIsLookedUpWithOneStoreCallPerSession(t *testing.T) {
	t.Parallel()
	store := &countingMarks{Store: state.NewMemory()}
	w := newWorldOn(t, store, func(c *config.Config, _ *agent.Runner) {
		c.Slack.Admins = []string{"U0BOSS1", "U0BOSS2", "U0BOSS3"}
	})
	g := newGate()
	t.Cleanup(g.open)
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return textReport("Answer to " + lastUserText(r))
	})
	ts := w.srv.Mention(channel, asker, "slow")
	w.model.Wait(1)
	w.waitFor("three Stop lookups", func() bool { return len(store.stopKeys()) >= 3 })
	g.open()
	w.answered(channel, ts, "Answer to slow")
	keys := store.stopKeys()
	for _, k := range keys {
		if strings.Count(k, ":") != 1 {
			t.Errorf("the store was asked %q: a key per person", k)
		}
	}
	if len(keys) == 0 {
		t.Error("no Stop lookups were counted")
	}
}

// countingMarks is a state store that notes the keys Marked is asked.
type countingMarks struct {
	state.Store
	mu     sync.Mutex
	marked []string
}

func (c *countingMarks) Marked(ctx context.Context, key string) (bool, error) {
	c.mu.Lock()
	c.marked = append(c.marked, key)
	c.mu.Unlock()
	return c.Store.Marked(ctx, key)
}

// stopKeys are the keys about stops Marked was asked.
func (c *countingMarks) stopKeys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, k := range c.marked {
		if strings.HasPrefix(k, "stop:") {
			out = append(out, k)
		}
	}
	return out
}

// pauseRedis makes every client call to redis hang for ms milliseconds.
func pauseRedis(t *testing.T, redis *redistest.Server, ms int) {
	t.Helper()
	conn, err := net.Dial("tcp", redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte("CLIENT PAUSE " + strconv.Itoa(ms) + " ALL\r\n")); err != nil {
		t.Fatal(err)
	}
	if reply, err := bufio.NewReader(conn).ReadString('\n'); err != nil || reply != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE: %q, %v", reply, err)
	}
}

// ackOf waits for the first delivery of the mention ts and its ack.
func ackOf(t *testing.T, srv *slacktest.Server, ts string) (slacktest.Envelope, slacktest.Ack) {
	t.Helper()
	var mention slacktest.Envelope
	var acked slacktest.Ack
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := srv.WaitFor(ctx, func() bool {
		for _, e := range srv.Envelopes() {
			var p struct {
				Event struct{ Type, TS string } `json:"event"`
			}
			if e.Attempt == 0 && json.Unmarshal(e.Payload, &p) == nil && p.Event.Type == "app_mention" && p.Event.TS == ts {
				mention = e
			}
		}
		for _, a := range srv.Acks() {
			if mention.ID != "" && a.EnvelopeID == mention.ID {
				acked = a
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal("the mention was never acknowledged")
	}
	return mention, acked
}
