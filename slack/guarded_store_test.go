package slack_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// TestAFollowUpCheckOnAHungStoreDoesNotHoldUpTheEnvelopesAfterIt answers a
// mention (its thread becomes the bot's), then makes the store hang on the
// question whether a thread is the bot's — and only on it, so the event's
// dedup before it still answers — and posts a reply in that thread and
// then a new mention. The follow-up check runs on the envelope loop within
// a bound: the mention is answered while the store still hangs.
func TestAFollowUpCheckOnAHungStoreDoesNotHoldUpTheEnvelopesAfterIt(t *testing.T) {
	t.Parallel()
	store := &hungThreads{Store: state.NewMemory(), hang: make(chan struct{})}
	t.Cleanup(store.release)
	w := bottest.Start(t, bottest.OnStore(store))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	first := w.Slack.Mention(channel, asker, "first")
	w.Answered(channel, first, "Answer to first")
	store.hanging.Store(true)
	w.Slack.Reply(channel, first, asker, "and another thing")
	w.Eventually("the follow-up check to hang", func() bool { return store.hung.Load() > 0 })
	second := w.Slack.Mention(channel, asker, "second")
	w.Answered(channel, second, "Answer to second")
	if store.released() {
		t.Fatal("the store was released before the second answer: the test proves nothing")
	}
}

// hungThreads is a state store whose Marked of a thread's key, once
// hanging is set, waits until its caller gives up or the test ends.
type hungThreads struct {
	state.Store
	hanging atomic.Bool
	hung    atomic.Int32
	hang    chan struct{}
	once    sync.Once
}

func (h *hungThreads) Marked(ctx context.Context, key string) (bool, error) {
	if h.hanging.Load() && strings.HasPrefix(key, "thread:") {
		h.hung.Add(1)
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-h.hang:
		}
	}
	return h.Store.Marked(ctx, key)
}

func (h *hungThreads) release() { h.once.Do(func() { close(h.hang) }) }

func (h *hungThreads) released() bool {
	select {
	case <-h.hang:
		return true
	default:
		return false
	}
}

// TestFailingQuotaCountersAreAWarningOncePerOutage closes the store under a
// bot with daily budgets and asks three questions: each is answered (a
// broken counter must not silence the bot), and the budgets not being
// enforced is one warning, not one per question.
func TestFailingQuotaCountersAreAWarningOncePerOutage(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	patience := bottest.WithBot(func(o *slack.Options) { o.StorePatience = 300 * time.Millisecond })
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, redis, "quota:")), patience, bottest.WithConfig(func(c *config.Config) {
		c.Quotas = config.Quotas{User: config.Budget{DailyTokens: 100000}, Message: config.DefaultQuotaMessage}
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	redis.Down()
	for _, q := range []string{"one", "two", "three"} {
		ts := w.Slack.Mention(channel, asker, q)
		w.Answered(channel, ts, "Answer to "+q)
	}
	if n := w.Logs.FilterMessage("quota counters unavailable; not enforcing").FilterLevelExact(zap.WarnLevel).Len(); n != 1 {
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
	w := bottest.Start(t, bottest.OnStore(store), bottest.WithConfig(func(c *config.Config) {
		c.Slack.Admins = []string{"U0BOSS1", "U0BOSS2", "U0BOSS3"}
	}))
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	ts := w.Slack.Mention(channel, asker, "slow")
	w.Model.Wait(1)
	w.Eventually("three Stop lookups", func() bool { return len(store.stopKeys()) >= 3 })
	g.open()
	w.Answered(channel, ts, "Answer to slow")
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
