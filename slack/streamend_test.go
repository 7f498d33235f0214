package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
)

// No way a session ends leaves a stream open or a task in progress.

// noTaskInProgress fails the test for each task of s left pending or in
// progress.
func noTaskInProgress(t *testing.T, s emulator.Stream) {
	t.Helper()
	for _, task := range s.Tasks {
		if task.Status == "in_progress" || task.Status == "pending" {
			t.Errorf("task %+v is left %s", task, task.Status)
		}
	}
}

// noStreamOpen fails the test for each stream of channel still open.
func noStreamOpen(t *testing.T, w *bottest.World, ch string) {
	t.Helper()
	for _, s := range w.Slack.Streams(ch) {
		if s.Open {
			t.Errorf("stream %s in thread %s is left open", s.TS, s.ThreadTS)
		}
	}
}

// A stream left open in a thread by a replica that died is ended by the
// next session in that thread, without waiting for a reaper's sweep.
func TestTheNextSessionInAThreadEndsTheOpenStreamOfAReplicaThatDied(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store), streamed, leaseTTL(time.Hour)) // no sweep after the start-up one
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	root := w.Slack.Mention(channel, asker, "first")
	streamOf(w, channel, root, "the first answer's stream to end", ended)
	api := slackapi.New(w.Slack.BotToken(), slackapi.OptionAPIURL(w.Slack.APIURL()))
	running := slackapi.NewTaskUpdateChunk("dead-call", "Searching code")
	running.Status = slackapi.TaskCardStatusInProgress
	_, dead, err := api.StartStream(channel, slackapi.MsgOptionTS(root), slackapi.MsgOptionRecipientUserID(asker),
		slackapi.MsgOptionRecipientTeamID("T0EMULATOR"), slackapi.MsgOptionChunks(running))
	if err != nil {
		t.Fatal(err)
	}
	// The record names the task the dead replica last showed running.
	rec := state.Progress{Session: "stream|thread:" + channel + "/" + root + "|dead-session", Channel: channel, TS: dead, Owner: "slackbot-dead",
		Tasks: []state.OpenTask{{ID: "dead-call", Title: "Searching code"}}}
	if err := store.PutProgress(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	w.Slack.Reply(channel, root, asker, "<@"+w.Slack.BotUserID()+"> second")
	w.Answered(channel, root, "Answer to second")
	var s emulator.Stream
	for _, st := range w.Slack.Streams(channel) {
		if st.TS == dead {
			s = st
		}
	}
	if s.Open || !strings.Contains(string(s.Blocks), "the bot stopped") {
		t.Errorf("the dead replica's stream %+v; want it ended with the abandoned note", s)
	}
	if len(s.Tasks) != 1 || s.Tasks[0].Status != "error" || s.Tasks[0].Output != "Not finished" {
		t.Errorf("the dead replica's tasks %+v; want its running task ended as not finished", s.Tasks)
	}
	noStreamOpen(t, w, channel)
	noProgressRecords(w, store)
}

// A question the daily budget refuses never shows a stream: its asker is
// told why, and nothing is left open.
func TestAQuestionOverItsBudgetOpensNoStream(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed, bottest.WithConfig(func(c *config.Config) {
		c.Quotas = config.Quotas{User: config.Budget{DailyTokens: 100}, Message: config.DefaultQuotaMessage}
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		reply := llmtest.TextReport("Answer to " + lastUserText(r))
		reply.Usage = &llmtest.Usage{Input: 300, Output: 100}
		return reply
	})
	first := w.Slack.Mention(channel, asker, "first")
	streamOf(w, channel, first, "the first answer's stream to end", ended)
	w.Eventually("the agent session to close", agentStatus(w, first, "closed"))
	second := w.Slack.Mention(channel, asker, "second")
	w.Eventually("the quota message", func() bool { return ephemeralsTo(w, asker, config.DefaultQuotaMessage) == 1 })
	if n := len(w.Slack.Calls("chat.startStream")); n != 1 {
		t.Errorf("%d chat.startStream calls; the refused question must not start one", n)
	}
	if n := len(bottest.BotMessages(w.Slack.Thread(channel, second))); n != 0 {
		t.Errorf("%d bot messages under the refused question; want none", n)
	}
	noStreamOpen(t, w, channel)
}

// A session the model service refuses for its spent quota ends its
// stream with the note saying so, no task left in progress.
func TestAModelQuotaRefusalEndsTheStreamWithItsNote(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{ErrorType: "insufficient_quota"} })
	ts := w.Slack.Mention(channel, asker, "anything")
	s := streamOf(w, channel, ts, "the stream to end", ended)
	if !strings.Contains(string(s.Blocks), "quota or credit is used up") {
		t.Errorf("the stream ended with %s; want the quota note", s.Blocks)
	}
	if n := holding(w, channel, ts, "quota or credit"); n != 1 {
		t.Errorf("the quota note shows %d times; want once", n)
	}
	if len(s.Tasks) == 0 {
		t.Error("no tasks: the model's turn should show")
	}
	noTaskInProgress(t, s)
	w.Eventually("the agent session to close", agentStatus(w, ts, "closed"))
}

// Slack's Stop delivered to the replica running the session: Slack halts
// the stream, the session stops, its note goes below once, the agent
// session closes, and nothing is left open.
func TestSlacksStopOnTheRunningReplicaStopsTheSessionAndClosesItsAgentSession(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	_, ts := heldSession(t, w)
	streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })
	w.Slack.StopAgentSession(0, channel, ts, asker)
	w.Answered(channel, ts, "Stopped by")
	if n := holding(w, channel, ts, `Stopped by`); n != 1 {
		t.Errorf("the stop's note shows %d times; want once", n)
	}
	w.Eventually("the agent session to close", agentStatus(w, ts, "closed"))
	s := streamOf(w, channel, ts, "the stream", ended)
	if s.StoppedBy != asker {
		t.Errorf("the stream was stopped by %q; want Slack's Stop by the asker", s.StoppedBy)
	}
	noStreamOpen(t, w, channel)
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls; the stopped session must not go on", n)
	}
}

// A stopped session that was queued behind another in its thread ends its
// stream with the note, and no task left waiting.
func TestAQueuedStreamStoppedBySlackLeavesNothingOpen(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed, oneAtATime)
	g, ts, _ := queuedBehindStream(t, w)
	w.Slack.StopAgentSession(0, channel, ts, asker)
	w.Answered(channel, ts, "Stopped by")
	g.open()
	w.Eventually("both agent sessions to close", func() bool {
		for _, st := range w.Slack.Streams(channel) {
			if a, ok := w.Slack.AgentSession(channel, st.ThreadTS); !ok || a.Status != "closed" {
				return false
			}
		}
		return true
	})
	noStreamOpen(t, w, channel)
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls; the stopped question must never reach the model", n)
	}
}

// A panic in the headend ends the session's stream with the failure note,
// no task left in progress, and the bot answers the next question.
func TestAPanicInTheHeadendEndsTheStreamWithTheFailureNote(t *testing.T) {
	t.Parallel()
	store := &panickyRecords{Store: state.NewMemory()}
	w := bottest.Start(t, bottest.OnStore(store), streamed)
	w.Model.Push(llmtest.TextReport("The first answer, never posted."))
	first := w.Slack.Mention(channel, asker, "first question")
	s := streamOf(w, channel, first, "the stream to end", ended)
	if !store.panicked.Load() {
		t.Fatal("the store never panicked: the test did not reach the headend's recovery")
	}
	if !strings.Contains(string(s.Blocks), "Something went wrong on the bot") || strings.Contains(string(s.Blocks), "never posted") {
		t.Errorf("the stream ended with %s; want the failure note and not the answer", s.Blocks)
	}
	noTaskInProgress(t, s)
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("The second answer.") })
	second := w.Slack.Mention(channel, asker, "second question")
	w.Answered(channel, second, "The second answer.")
	noStreamOpen(t, w, channel)
	noProgressRecords(w, store)
}

// The shutdown ends the stream of a session still waiting for its turn
// with the interrupted note, its wait not left pending.
func TestShutdownEndsAQueuedStreamWithTheInterruptedNote(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed, oneAtATime, bottest.WithConfig(func(c *config.Config) {
		c.Slack.ShutdownGrace = config.Duration(100 * time.Millisecond)
	}))
	_, ts, _ := queuedBehindStream(t, w)
	w.Shutdown()
	s := streamOf(w, channel, ts, "the queued stream to end", ended)
	if !strings.Contains(string(s.Blocks), "Interrupted") {
		t.Errorf("the queued stream ended with %s; want the interrupted note", s.Blocks)
	}
	if len(s.Tasks) == 0 || s.Tasks[0].Title != "Waiting for a turn" || s.Tasks[0].Status != "error" {
		t.Errorf("tasks %+v; want the wait for a turn ended in error", s.Tasks)
	}
	noTaskInProgress(t, s)
	noStreamOpen(t, w, channel)
}
