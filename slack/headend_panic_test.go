package slack_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/state"
)

// panickyRecords is the in-memory store whose first PutSession panics: a
// bug in a state backend, met by the headend itself after the session
// has run and before its answer is posted.
type panickyRecords struct {
	state.Store
	panicked atomic.Bool
}

func (p *panickyRecords) PutSession(ctx context.Context, r state.SessionRecord) error {
	if p.panicked.CompareAndSwap(false, true) {
		panic("a bug in the state backend")
	}
	return p.Store.PutSession(ctx, r)
}

func TestAPanicInTheHeadendConcludesTheProgressMessageWithTheFailureNoteAndTheBotAnswersTheNextQuestion(t *testing.T) {
	t.Parallel()
	store := &panickyRecords{Store: state.NewMemory()}
	w := bottest.Start(t, bottest.OnStore(store))
	w.Model.Push(llmtest.TextReport("The first answer, never posted."))
	first := w.Slack.Mention(channel, asker, "first question")
	thread := w.Answered(channel, first, "Something went wrong on the bot")
	if !store.panicked.Load() {
		t.Fatal("the store never panicked: the test did not reach the headend's recovery")
	}
	for _, m := range bottest.BotMessages(thread) {
		text := bottest.MessageText(m)
		if strings.Contains(text, "slackbot_stop") {
			t.Errorf("a Stop button stays after the panic: %s", text)
		}
		if strings.Contains(text, "never posted") {
			t.Errorf("the answer of the request that panicked was posted: %s", text)
		}
	}

	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("The second answer.") })
	second := w.Slack.Mention(channel, asker, "second question")
	w.Answered(channel, second, "The second answer.")

	panics := w.Logs.FilterMessage("request panicked").All()
	if len(panics) != 1 {
		t.Fatalf("the panic was logged %d times, want once", len(panics))
	}
	fields := panics[0].ContextMap()
	if !strings.Contains(fields["panic"].(string), "a bug in the state backend") || fields["stack"] == nil || fields["session"] == nil {
		t.Errorf("the panic's line lacks its value, stack or session: %v", fields)
	}
}

// panickyProgresses is the in-memory store whose first Progresses panics:
// met by the reaper's start-up sweep, on a goroutine of its own beside
// every request.
type panickyProgresses struct {
	state.Store
	panicked atomic.Bool
}

func (p *panickyProgresses) Progresses(ctx context.Context) ([]state.Progress, error) {
	if p.panicked.CompareAndSwap(false, true) {
		panic("a bug in the state backend")
	}
	return p.Store.Progresses(ctx)
}

func TestAPanicOnAGoroutineBesideTheSessionsIsLoggedAndTheBotGoesOnAnswering(t *testing.T) {
	t.Parallel()
	store := &panickyProgresses{Store: state.NewMemory()}
	w := bottest.Start(t, bottest.OnStore(store))
	w.Eventually("the reaper's panic to be logged", func() bool { return w.Logs.FilterMessage("panic in the reaper").Len() == 1 })
	w.Model.Push(llmtest.TextReport("Still here."))
	ts := w.Slack.Mention(channel, asker, "are you there?")
	w.Answered(channel, ts, "Still here.")
}
