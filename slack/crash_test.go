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
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
)

// leaseTTL sets state.lease_ttl.
func leaseTTL(d time.Duration) bottest.Option {
	return bottest.WithConfig(func(c *config.Config) { c.State.LeaseTTL = config.Duration(d) })
}

// deadProgress posts, as the bot, a progress message with a Stop button
// for session in thread ts (a new message when ts is ""), and records it
// in store as owned by a replica that is not alive: what a replica killed
// mid-session leaves behind. It returns the message's ts.
func deadProgress(w *bottest.World, store state.Store, session, ts string) string {
	w.T.Helper()
	api := slackapi.New(w.Slack.BotToken(), slackapi.OptionAPIURL(w.Slack.APIURL()))
	stop := slackapi.NewButtonBlockElement("slackbot_stop", session+"|"+asker, slackapi.NewTextBlockObject(slackapi.PlainTextType, "Stop", false, false))
	opts := []slackapi.MsgOption{slackapi.MsgOptionText("Working on it…", false), slackapi.MsgOptionBlocks(
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, "Working on it…", false, false), nil, nil),
		slackapi.NewActionBlock("slackbot_progress", stop))}
	if ts != "" {
		opts = append(opts, slackapi.MsgOptionTS(ts))
	}
	_, posted, err := api.PostMessage(channel, opts...)
	if err != nil {
		w.T.Fatal(err)
	}
	if err := store.PutProgress(context.Background(), state.Progress{Session: session, Channel: channel, TS: posted, Owner: "slackbot-dead"}); err != nil {
		w.T.Fatal(err)
	}
	return posted
}

// message is the channel's message at ts, as it reads now.
func message(w *bottest.World, ts string) emulatorMessage {
	for _, m := range w.Slack.Messages(channel) {
		if m.TS == ts {
			return emulatorMessage{text: bottest.MessageText(m), deleted: m.Deleted}
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
func settled(w *bottest.World, ts string) {
	w.T.Helper()
	w.Eventually("the dead session's progress message to be settled", func() bool {
		m := message(w, ts)
		return strings.Contains(m.text, "No answer: the bot stopped") && !strings.Contains(m.text, "slackbot_stop")
	})
}

// noProgressRecords waits until store holds no progress record.
func noProgressRecords(w *bottest.World, store state.Store) {
	w.T.Helper()
	w.Eventually("the progress records to be forgotten", func() bool {
		list, err := store.Progresses(context.Background())
		return err == nil && len(list) == 0
	})
}

func TestAReplicaStartingSettlesTheProgressMessageOfAReplicaThatDied(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store), leaseTTL(time.Hour)) // no periodic sweep within the test
	ts := deadProgress(w, store, "dead-session", "")
	w.Replica() // its start-up sweep finds the dead replica's message
	settled(w, ts)
	noProgressRecords(w, store)
}

func TestAProgressMessageIsSettledOnceItsReplicasLivenessExpires(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store), leaseTTL(config.MinLeaseTTL))
	// The replica was alive a moment ago: its mark expires with its lease.
	if err := store.Mark(context.Background(), "replica:slackbot-dead", config.MinLeaseTTL); err != nil {
		t.Fatal(err)
	}
	ts := deadProgress(w, store, "dead-session", "")
	settled(w, ts)
	noProgressRecords(w, store)
}

func TestStopOnASessionNoLiveReplicaRunsSettlesItsMessageAtOnce(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store), leaseTTL(time.Hour)) // the sweeps will not do it
	ts := deadProgress(w, store, "dead-session", "")
	if _, err := w.Slack.Click(channel, ts, asker, "slackbot_stop", "dead-session|"+asker); err != nil {
		t.Fatal(err)
	}
	settled(w, ts)
	noProgressRecords(w, store)
}

func TestALiveSessionsProgressIsRecordedWhileItRunsAndForgottenWithItsAnswer(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store))
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Done.")
	})
	ts := w.Slack.Mention(channel, asker, "a long one")
	progress := w.ProgressMessage(channel, ts)
	w.Eventually("the progress message to be recorded", func() bool {
		list, err := store.Progresses(context.Background())
		return err == nil && len(list) == 1 && list[0].TS == progress.TS && list[0].Channel == channel
	})
	w.Replica() // a second replica's start-up sweep leaves a live replica's message alone
	g.open()
	w.Answered(channel, ts, "Done.")
	noProgressRecords(w, store)
}

func TestAFollowUpWaitingForADeadReplicasThreadShowsQueuedAndIsAnsweredWhenTheLeaseExpires(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store), leaseTTL(config.MinLeaseTTL))
	root := w.Slack.Reply(channel, "", asker, "first question")
	// A replica was answering in this thread when it died: it still holds
	// the thread's lease, until the lease expires, and left its progress.
	if ok, err := store.Lock(context.Background(), "lease:thread:"+channel+"/"+root, "slackbot-dead", config.MinLeaseTTL); err != nil || !ok {
		t.Fatalf("taking the lease as the dead replica: %v %v", ok, err)
	}
	dead := deadProgress(w, store, "dead-session", root)
	w.Model.Push(llmtest.TextReport("The answer to the follow-up."))
	followUp := w.Slack.Reply(channel, root, asker, "<@"+w.Slack.BotUserID()+"> and the follow-up?")
	w.Eventually("the follow-up to show it is queued", func() bool {
		for _, m := range bottest.BotMessages(w.Slack.Thread(channel, root)) {
			if m.TS != dead && strings.Contains(bottest.MessageText(m), "Queued") && strings.Contains(bottest.MessageText(m), "slackbot_stop") {
				return true
			}
		}
		return false
	})
	w.Answered(channel, root, "The answer to the follow-up.")
	settled(w, dead)
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls for one follow-up", n)
	}
	_ = followUp
}

func TestAPanicMidSessionEndsItWithTheFailureNoteAndTheBotAnswersTheNextQuestion(t *testing.T) {
	t.Parallel()
	var panicked atomic.Bool
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) {
		o.Observer = func(_ slack.Thread, e agent.Event) {
			if e.Kind == agent.EventTurnStarted && panicked.CompareAndSwap(false, true) {
				panic("a bug in an observer")
			}
		}
	}))
	first := w.Slack.Mention(channel, asker, "first question")
	thread := w.Answered(channel, first, "internal error")
	for _, m := range bottest.BotMessages(thread) {
		if strings.Contains(bottest.MessageText(m), "slackbot_stop") {
			t.Errorf("a Stop button stays after the panic: %s", bottest.MessageText(m))
		}
	}
	w.Model.Push(llmtest.TextReport("The second answer."))
	second := w.Slack.Mention(channel, asker, "second question")
	w.Answered(channel, second, "The second answer.")
}

func TestAPanicInOneOfATurnsToolCallsBecomesThatCallsErrorAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	var panicked atomic.Bool
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) {
		o.Observer = func(_ slack.Thread, e agent.Event) {
			if e.Kind == agent.EventToolStarted && e.Tool != nil && e.Tool.Name == agent.TaskStatusTool && panicked.CompareAndSwap(false, true) {
				panic("a bug while a tool runs")
			}
		}
	}), bottest.WithRunner(func(r *agent.Runner) {
		for _, a := range r.Agents {
			a.Tools = append(a.Tools, agent.TaskStatusTool)
		}
	}))
	w.Model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: agent.TaskStatusTool, Arguments: `{"now":"looking"}`},
		{Name: agent.TaskStatusTool, Arguments: `{"now":"still looking"}`},
	}})
	var toolResults string
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				toolResults += m.Content + "\n"
			}
		}
		return llmtest.TextReport("Answered after the crash.")
	})
	ts := w.Slack.Mention(channel, asker, "look it up")
	w.Answered(channel, ts, "Answered after the crash.")
	if !strings.Contains(toolResults, "internal error") {
		t.Errorf("the model was not told the call failed; tool results:\n%s", toolResults)
	}
}

func TestSlashCommandSessionsHaveRandomIDs(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store))
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answered.") })
	for i := range 3 {
		w.Slack.Slash(channel, asker, "/ask", fmt.Sprintf("question %d", i))
	}
	var records []state.SessionRecord
	w.Eventually("three session records", func() bool {
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
	w := bottest.Start(t, bottest.OnStore(store), leaseTTL(time.Hour)) // no periodic sweep within the test
	ts := deadProgress(w, store, "answered-session", "")
	// Its replica answered while the store was out of its reach, so the
	// record stayed and the replica's liveness mark lapsed.
	api := slackapi.New(w.Slack.BotToken(), slackapi.OptionAPIURL(w.Slack.APIURL()))
	if _, _, _, err := api.UpdateMessage(channel, ts, slackapi.MsgOptionText("The answer.", false), slackapi.MsgOptionBlocks(
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, "The answer.", false, false), nil, nil))); err != nil {
		t.Fatal(err)
	}
	w.Replica() // its start-up sweep finds the record of a replica that is not alive
	noProgressRecords(w, store)
	if m := message(w, ts); !strings.Contains(m.text, "The answer.") || strings.Contains(m.text, "No answer") {
		t.Fatalf("the answer was replaced: %q", m.text)
	}
}

func TestAProgressRecordTheStoreCouldNotForgetIsForgottenOnceItAnswersAgain(t *testing.T) {
	t.Parallel()
	redis := redistest.StartPersistent(t)
	store := dialRedis(t, redis, "undropped:")
	w := bottest.Start(t, bottest.OnStore(store), bottest.WithBot(func(o *slack.Options) { o.StorePatience = 300 * time.Millisecond }), leaseTTL(config.MinLeaseTTL))
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Done.")
	})
	ts := w.Slack.Mention(channel, asker, "a long one")
	w.Eventually("the progress message's record", func() bool {
		list, err := store.Progresses(context.Background())
		return err == nil && len(list) == 1
	})
	redis.Down()
	g.open()
	w.Answered(channel, ts, "Done.")
	w.Eventually("the bot to find it cannot forget the record", func() bool {
		for _, e := range w.Logs.FilterMessage("state store failing; retrying").All() {
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
	noProgressRecords(w, store)
}
