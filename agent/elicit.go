package agent

import (
	"context"
	"errors"

	"github.com/slackbot/slackbot/tools"
)

// waitingElicitor is the session's elicitor as its tool calls see it: the
// front end's, with the wait shown to the observers (EventWaiting, then
// EventResumed with the outcome) through the asking call's waiter. Every
// call of a session holds the same value, so a server's question that
// names no call is still known to be that session's.
type waitingElicitor struct {
	s    *session
	next tools.Elicitor
}

// answerers is implemented by an elicitor that knows who may answer (the
// asker); the waiting event names them.
type answerers interface {
	Answerers() []string
}

// Elicit asks the front end's elicitor and reports the wait: the
// session's clock and the call's timeout stand still while a person
// answers.
func (w waitingElicitor) Elicit(ctx context.Context, req tools.ElicitRequest) (tools.ElicitAnswer, error) {
	var who []string
	if a, ok := w.next.(answerers); ok {
		who = a.Answerers()
	}
	done := func(string) {}
	if wt := tools.WaiterFrom(ctx); wt != nil { // the asking call's
		done = wt.Waiting("answer to "+req.Server+"'s question", who)
	}
	resume := tools.PauseTimeout(ctx)
	ans, err := w.next.Elicit(ctx, req)
	resume()
	done(elicitOutcome(ans, err))
	return ans, err
}

// elicitOutcome names how an elicitation ended, in the words of
// WaitInfo.Outcome.
func elicitOutcome(ans tools.ElicitAnswer, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case err != nil:
		return "cancelled"
	case ans.Action == tools.ElicitAccept:
		return "answered"
	case ans.Action == tools.ElicitDecline:
		return "declined"
	case ans.Reason == ReasonTimedOut:
		return "timed out"
	}
	return "cancelled"
}

// ReasonTimedOut is the ElicitAnswer.Reason of a cancel because nobody
// answered in time.
const ReasonTimedOut = "nobody answered in time"

// elicitContext gives a tool call's context the session's elicitor, when
// the session has one.
func (s *session) elicitContext(ctx context.Context) context.Context {
	if s.in.Elicitor == nil {
		return ctx
	}
	return tools.WithElicitor(ctx, waitingElicitor{s: s, next: s.in.Elicitor})
}
