package slack_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// leaseTTL sets state.lease_ttl.
func leaseTTL(d time.Duration) worldOption {
	return func(c *config.Config, _ *agent.Runner) { c.State.LeaseTTL = config.Duration(d) }
}

// deadProgress posts, as the bot, a progress message with a Stop button
// for session in thread ts (a new message when ts is ""), and records it
// in store as owned by a replica that is not alive: what a replica killed
// mid-session leaves behind. It returns the message's ts.
func (w *world) deadProgress(store state.Store, session, ts string) string {
	w.t.Helper()
	api := slackapi.New(w.srv.BotToken(), slackapi.OptionAPIURL(w.srv.APIURL()))
	stop := slackapi.NewButtonBlockElement("slackbot_stop", session+"|"+asker, slackapi.NewTextBlockObject(slackapi.PlainTextType, "Stop", false, false))
	opts := []slackapi.MsgOption{slackapi.MsgOptionText("Working on it…", false), slackapi.MsgOptionBlocks(
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, "Working on it…", false, false), nil, nil),
		slackapi.NewActionBlock("slackbot_progress", stop))}
	if ts != "" {
		opts = append(opts, slackapi.MsgOptionTS(ts))
	}
	_, posted, err := api.PostMessage(channel, opts...)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := store.PutProgress(context.Background(), state.Progress{Session: session, Channel: channel, TS: posted, Owner: "slackbot-dead"}); err != nil {
		w.t.Fatal(err)
	}
	return posted
}

// message is the channel's message at ts, as it reads now.
func (w *world) message(ts string) emulatorMessage {
	for _, m := range w.srv.Messages(channel) {
		if m.TS == ts {
			return emulatorMessage{text: messageText(m), deleted: m.Deleted}
		}
	}
	return emulatorMessage{}
}

type emulatorMessage struct {
	text    string
	deleted bool
}

// settled waits until the message at ts no longer shows a Stop button and
// says why no answer came.
func (w *world) settled(ts string) {
	w.t.Helper()
	w.waitFor("the dead session's progress message to be settled", func() bool {
		m := w.message(ts)
		return strings.Contains(m.text, "No answer: the bot stopped") && !strings.Contains(m.text, "slackbot_stop")
	})
}

// noProgressRecords waits until store holds no progress record.
func (w *world) noProgressRecords(store state.Store) {
	w.t.Helper()
	w.waitFor("the progress records to be forgotten", func() bool {
		list, err := store.Progresses(context.Background())
		return err == nil && len(list) == 0
	})
}

func TestAReplicaStartingSettlesTheProgressMessageOfAReplicaThatDied(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := newWorldOn(t, store, leaseTTL(time.Hour)) // no periodic sweep within the test
	ts := w.deadProgress(store, "dead-session", "")
	w.replica() // its start-up sweep finds the dead replica's message
	w.settled(ts)
	w.noProgressRecords(store)
}

func TestAProgressMessageIsSettledOnceItsReplicasLivenessExpires(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := newWorldOn(t, store, leaseTTL(config.MinLeaseTTL))
	// The replica was alive a moment ago: its mark expires with its lease.
	if err := store.Mark(context.Background(), "replica:slackbot-dead", config.MinLeaseTTL); err != nil {
		t.Fatal(err)
	}
	ts := w.deadProgress(store, "dead-session", "")
	w.settled(ts)
	w.noProgressRecords(store)
}

func TestStopOnASessionNoLiveReplicaRunsSettlesItsMessageAtOnce(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := newWorldOn(t, store, leaseTTL(time.Hour)) // the sweeps will not do it
	ts := w.deadProgress(store, "dead-session", "")
	if _, err := w.srv.Click(channel, ts, asker, "slackbot_stop", "dead-session|"+asker); err != nil {
		t.Fatal(err)
	}
	w.settled(ts)
	w.noProgressRecords(store)
}

func TestALiveSessionsProgressIsRecordedWhileItRunsAndForgottenWithItsAnswer(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := newWorldOn(t, store)
	g := newGate()
	t.Cleanup(g.open)
	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return textReport("Done.")
	})
	ts := w.srv.Mention(channel, asker, "a long one")
	progress := w.progressMessage(ts)
	w.waitFor("the progress message to be recorded", func() bool {
		list, err := store.Progresses(context.Background())
		return err == nil && len(list) == 1 && list[0].TS == progress.TS && list[0].Channel == channel
	})
	w.replica() // a second replica's start-up sweep leaves a live replica's message alone
	g.open()
	w.answered(channel, ts, "Done.")
	w.noProgressRecords(store)
}

func TestAFollowUpWaitingForADeadReplicasThreadShowsQueuedAndIsAnsweredWhenTheLeaseExpires(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := newWorldOn(t, store, leaseTTL(config.MinLeaseTTL))
	root := w.srv.Reply(channel, "", asker, "first question")
	// A replica was answering in this thread when it died: it still holds
	// the thread's lease, until the lease expires, and left its progress.
	if ok, err := store.Lock(context.Background(), "lease:thread:"+channel+"/"+root, "slackbot-dead", config.MinLeaseTTL); err != nil || !ok {
		t.Fatalf("taking the lease as the dead replica: %v %v", ok, err)
	}
	dead := w.deadProgress(store, "dead-session", root)
	w.model.Push(textReport("The answer to the follow-up."))
	followUp := w.srv.Reply(channel, root, asker, "<@"+w.srv.BotUserID()+"> and the follow-up?")
	w.waitFor("the follow-up to show it is queued", func() bool {
		for _, m := range botMessages(w.srv.Thread(channel, root)) {
			if m.TS != dead && strings.Contains(messageText(m), "Queued") && strings.Contains(messageText(m), "slackbot_stop") {
				return true
			}
		}
		return false
	})
	w.answered(channel, root, "The answer to the follow-up.")
	w.settled(dead)
	if n := len(w.model.Requests()); n != 1 {
		t.Errorf("%d model calls for one follow-up", n)
	}
	_ = followUp
}

func TestAPanicMidSessionEndsItWithTheFailureNoteAndTheBotAnswersTheNextQuestion(t *testing.T) {
	t.Parallel()
	var panicked atomic.Bool
	w := newWorldWith(t, func(o *slack.Options) {
		o.Observer = func(_ slack.Thread, e agent.Event) {
			if e.Kind == agent.EventTurnStarted && panicked.CompareAndSwap(false, true) {
				panic("a bug in an observer")
			}
		}
	})
	first := w.srv.Mention(channel, asker, "first question")
	thread := w.answered(channel, first, "internal error")
	for _, m := range botMessages(thread) {
		if strings.Contains(messageText(m), "slackbot_stop") {
			t.Errorf("a Stop button stays after the panic: %s", messageText(m))
		}
	}
	w.model.Push(textReport("The second answer."))
	second := w.srv.Mention(channel, asker, "second question")
	w.answered(channel, second, "The second answer.")
}

func TestAPanicInOneOfATurnsToolCallsBecomesThatCallsErrorAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	var panicked atomic.Bool
	w := newWorldWith(t, func(o *slack.Options) {
		o.Observer = func(_ slack.Thread, e agent.Event) {
			if e.Kind == agent.EventToolStarted && e.Tool != nil && e.Tool.Name == agent.TaskStatusTool && panicked.CompareAndSwap(false, true) {
				panic("a bug while a tool runs")
			}
		}
	}, func(_ *config.Config, r *agent.Runner) {
		for _, a := range r.Agents {
			a.Tools = append(a.Tools, agent.TaskStatusTool)
		}
	})
	w.model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: agent.TaskStatusTool, Arguments: `{"now":"looking"}`},
		{Name: agent.TaskStatusTool, Arguments: `{"now":"still looking"}`},
	}})
	var toolResults string
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				toolResults += m.Content + "\n"
			}
		}
		return textReport("Answered after the crash.")
	})
	ts := w.srv.Mention(channel, asker, "look it up")
	w.answered(channel, ts, "Answered after the crash.")
	if !strings.Contains(toolResults, "internal error") {
		t.Errorf("the model was not told the call failed; tool results:\n%s", toolResults)
	}
}

func TestSlashCommandSessionsHaveRandomIDs(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := newWorldOn(t, store)
	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply { return textReport("Answered.") })
	for i := range 3 {
		w.srv.Slash(channel, asker, "/ask", fmt.Sprintf("question %d", i))
	}
	var records []state.SessionRecord
	w.waitFor("three session records", func() bool {
		var err error
		records, err = store.Sessions(context.Background(), state.SessionFilter{})
		return err == nil && len(records) == 3
	})
	random := regexp.MustCompile(`-[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for _, r := range records {
		if !random.MatchString(r.ID) {
			t.Errorf("session id %q does not end in 64 random bits", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("two sessions share the id %q", r.ID)
		}
		seen[r.ID] = true
	}
}

func TestARecordedMessageThatAlreadyShowsItsAnswerKeepsItWhenItsReplicaLooksDead(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := newWorldOn(t, store, leaseTTL(time.Hour)) // no periodic sweep within the test
	ts := w.deadProgress(store, "answered-session", "")
	// Its replica answered while the store was out of its reach, so the
	// record stayed and the replica's liveness mark lapsed.
	api := slackapi.New(w.srv.BotToken(), slackapi.OptionAPIURL(w.srv.APIURL()))
	if _, _, _, err := api.UpdateMessage(channel, ts, slackapi.MsgOptionText("The answer.", false), slackapi.MsgOptionBlocks(
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, "The answer.", false, false), nil, nil))); err != nil {
		t.Fatal(err)
	}
	w.replica() // its start-up sweep finds the record of a replica that is not alive
	w.noProgressRecords(store)
	if m := w.message(ts); !strings.Contains(m.text, "The answer.") || strings.Contains(m.text, "No answer") {
		t.Fatalf("the answer was replaced: %q", m.text)
	}
}

func TestAProgressRecordTheStoreCouldNotForgetIsForgottenOnceItAnswersAgain(t *testing.T) {
	t.Parallel()
	redis := redistest.StartPersistent(t)
	store := dialRedis(t, redis, "undropped:")
	w := newWorldAt(t, nil, store, func(o *slack.Options) { o.StorePatience = 300 * time.Millisecond }, leaseTTL(config.MinLeaseTTL))
	g := newGate()
	t.Cleanup(g.open)
	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return textReport("Done.")
	})
	ts := w.srv.Mention(channel, asker, "a long one")
	w.waitFor("the progress message's record", func() bool {
		list, err := store.Progresses(context.Background())
		return err == nil && len(list) == 1
	})
	redis.Down()
	g.open()
	w.answered(channel, ts, "Done.")
	w.waitFor("the bot to find it cannot forget the record", func() bool {
		for _, e := range w.logs.FilterMessage("state store failing; retrying").All() {
			if e.ContextMap()["calls"] == "progress records" {
				return true
			}
		}
		return false
	})
	// The forgetting is bounded to 2 s (progressCallTimeout); past that it
	// has given up, and only the retry can forget the record.
	time.Sleep(3 * time.Second)
	redis.Up(t)
	w.noProgressRecords(store)
}
