package slack_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slackbot/slackbot/llm/llmtest"
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
	w := newWorldOn(t, store)
	w.model.Push(textReport("The first answer, never posted."))
	first := w.srv.Mention(channel, asker, "first question")
	thread := w.answered(channel, first, "Something went wrong on the bot")
	if !store.panicked.Load() {
		t.Fatal("the store never panicked: the test did not reach the headend's recovery")
	}
	for _, m := range botMessages(thread) {
		text := messageText(m)
		if strings.Contains(text, "slackbot_stop") {
			t.Errorf("a Stop button stays after the panic: %s", text)
		}
		if strings.Contains(text, "never posted") {
			t.Errorf("the answer of the request that panicked was posted: %s", text)
		}
	}

	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply { return textReport("The second answer.") })
	second := w.srv.Mention(channel, asker, "second question")
	w.answered(channel, second, "The second answer.")

	panics := w.logs.FilterMessage("request panicked").All()
	if len(panics) != 1 {
		t.Fatalf("the panic was logged %d times, want once", len(panics))
	}
	fields := panics[0].ContextMap()
	if !strings.Contains(fields["panic"].(string), "a bug in the state backend") || fields["stack"] == nil || fields["session"] == nil {
		t.Errorf("the panic's line lacks its value, stack or session: %v", fields)
	}
}
