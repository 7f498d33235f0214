package slack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// TestAStoreDownPastItsPatienceAnswersFirstDeliveriesAndDropsRedeliveries
// runs the bot on a Redis that is down for longer than the bot waits for
// it. A mention's first delivery is answered all the same (no other
// replica can have it), with this process's own thread lock and cap; its
// redelivery is dropped, since an earlier attempt may have been answered
// elsewhere, unrecorded.
func TestAStoreDownPastItsPatienceAnswersFirstDeliveriesAndDropsRedeliveries(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	w := outageWorld(t, redis, 500*time.Millisecond)
	srv, model, logs := w.Slack, w.Model, w.Logs

	redis.Down()
	ts := srv.Mention(channel, asker, "anyone there?")
	for _, e := range srv.Envelopes() {
		var p struct {
			Event struct{ Type string } `json:"event"`
		}
		if e.Type == "events_api" && json.Unmarshal(e.Payload, &p) == nil && p.Event.Type == "app_mention" {
			if _, err := srv.Redeliver(e.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	said := func(msg string) bool { return logs.FilterMessage(msg).Len() > 0 }
	w.Eventually("the answer and the dropped redelivery", func() bool {
		return said("answered") &&
			said("dedup store unavailable; a redelivered event is dropped rather than risk a second answer")
	})
	for _, msg := range []string{
		"dedup store unavailable; answering a first delivery",
		"thread lease unavailable; answering with this process's lock only",
		"session slots unavailable; counting in this process only",
	} {
		if !said(msg) {
			t.Errorf("not logged: %q", msg)
		}
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model calls for one question", n)
	}
	if n := len(bottest.BotMessages(srv.Thread(channel, ts))); n != 1 {
		t.Errorf("%d bot messages in the thread, want the one answer", n)
	}
	// Every event the bot gets meets the dead store (its own posts come
	// back as message events too), but each kind of failure and each
	// decision taken without the store is a warning once.
	if n := logs.FilterMessage("state store failing; retrying").FilterField(zap.String("calls", "event dedup")).Len(); n != 1 {
		t.Errorf("the failing dedup store was logged %d times, want once", n)
	}
	if n := logs.FilterMessage("dedup store unavailable; answering a first delivery").Len(); n != 1 {
		t.Errorf("answering without dedup was logged %d times at info or above, want once", n)
	}
}

// TestOnceAStoreOutageOutlastedItsPatienceLaterQuestionsDoNotWaitForIt runs
// the bot on a Redis that is down. The first question's decisions wait out
// the store patience; after that the bot remembers the store is down, and
// the next question's decisions (dedup, lease, slot) try it once each and
// go straight to their fallbacks, with no retry, until it answers again.
func TestOnceAStoreOutageOutlastedItsPatienceLaterQuestionsDoNotWaitForIt(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	w := outageWorld(t, redis, 2*time.Second, bottest.WithLogLevel(zap.DebugLevel))
	srv, model, logs := w.Slack, w.Model, w.Logs
	answered := func(ts, want string) func() bool {
		return func() bool {
			for _, m := range bottest.BotMessages(srv.Thread(channel, ts)) {
				if strings.Contains(bottest.MessageText(m), want) {
					return true
				}
			}
			return false
		}
	}

	redis.Down()
	retries := func() int { return logs.FilterMessage("state store call failed; retrying").Len() }
	firstAnswers := func() int { return logs.FilterMessage("dedup store unavailable; answering a first delivery").Len() }
	first := srv.Mention(channel, asker, "first")
	w.Eventually("the first answer", answered(first, "Answer to first"))
	if retries() == 0 {
		t.Fatal("the first question's decisions never retried the store")
	}
	before, answers := retries(), firstAnswers()
	second := srv.Mention(channel, asker, "second")
	w.Eventually("the second answer", answered(second, "Answer to second"))
	if n := retries() - before; n != 0 {
		t.Errorf("the store was retried %d times after one decision had waited out its patience", n)
	}
	if firstAnswers() == answers {
		t.Error("the second question was not answered as a first delivery without the store")
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model calls for two questions", n)
	}
}

// TestAStoreThatHangsIsWaitedForOnlyWithinItsPatience pauses Redis, so that
// every store call hangs: each call is abandoned at its timeout, the
// decisions give up at the patience, and the question is answered without
// the store, once; no call is logged as cancelled, and the store's address
// is in no line.
func TestAStoreThatHangsIsWaitedForOnlyWithinItsPatience(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, redis, "hang:")), bottest.WithBot(func(o *slack.Options) { o.StorePatience = 300 * time.Millisecond }))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	conn, err := net.Dial("tcp", redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("CLIENT PAUSE 60000 ALL\r\n")); err != nil {
		t.Fatal(err)
	}
	if reply, err := bufio.NewReader(conn).ReadString('\n'); err != nil || reply != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE: %q, %v", reply, err)
	}
	ts := w.Slack.Mention(channel, asker, "question")
	w.Answered(channel, ts, "Answer to question")
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls for one question", n)
	}
	if w.Logs.FilterMessage("dedup store unavailable; answering a first delivery").Len() != 1 {
		t.Error("the dedup decision did not give up on the hung store")
	}
	for _, e := range w.Logs.All() {
		text := e.Message + fmt.Sprint(e.ContextMap())
		if strings.Contains(text, "cancel") {
			t.Errorf("a line speaks of a cancelled call: %s", text)
		}
		if strings.Contains(text, redis.Addr) {
			t.Errorf("a line names the store's address: %s", text)
		}
	}
}

// TestASlashCommandsDedupDoesNotHoldUpTheEnvelopesAfterIt pauses Redis, on a
// client whose calls would wait 30 s for it, and sends a slash command and
// then a mention: the slash command's dedup on the envelope loop is bounded
// like an event's, so the mention is acknowledged long before the store
// would have answered.
func TestASlashCommandsDedupDoesNotHoldUpTheEnvelopesAfterIt(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	store, err := state.DialRedis(context.Background(), redis.URL()+"?read_timeout=30s&write_timeout=30s", "slash:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	w := bottest.Start(t, bottest.OnStore(store))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	conn, err := net.Dial("tcp", redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("CLIENT PAUSE 20000 ALL\r\n")); err != nil {
		t.Fatal(err)
	}
	if reply, err := bufio.NewReader(conn).ReadString('\n'); err != nil || reply != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE: %q, %v", reply, err)
	}
	w.Slack.Slash(channel, asker, "/ask", "a question")
	ts := w.Slack.Mention(channel, asker, "another question")
	var mention emulator.Envelope
	var acked emulator.Ack
	w.Eventually("the mention to be acknowledged", func() bool {
		for _, e := range w.Slack.Envelopes() {
			var p struct {
				Event struct{ Type, TS string } `json:"event"`
			}
			if e.Attempt == 0 && json.Unmarshal(e.Payload, &p) == nil && p.Event.Type == "app_mention" && p.Event.TS == ts {
				mention = e
			}
		}
		for _, a := range w.Slack.Acks() {
			if mention.ID != "" && a.EnvelopeID == mention.ID {
				acked = a
				return true
			}
		}
		return false
	}, wait.Within(time.Minute))
	if d := acked.At.Sub(mention.SentAt); d > 10*time.Second {
		t.Errorf("the mention after a slash command was acknowledged %s after it was sent: the slash command's dedup held the envelope loop", d.Round(time.Second))
	}
}

// outageWorld is a world on the store in redis, with the bot waiting
// patience for it, and a model answering "Answer to <question>".
func outageWorld(t *testing.T, redis *redistest.Server, patience time.Duration, opts ...bottest.Option) *bottest.World {
	t.Helper()
	w := bottest.Start(t, append([]bottest.Option{bottest.OnStore(dialRedis(t, redis, "")),
		bottest.WithBot(func(o *slack.Options) { o.StorePatience = patience })}, opts...)...)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	return w
}
