package agent

import (
	"context"
	"testing"

	"github.com/slackbot/slackbot/tools"
)

type noAnswer struct{}

func (noAnswer) Elicit(context.Context, tools.ElicitRequest) (tools.ElicitAnswer, error) {
	return tools.ElicitAnswer{Action: tools.ElicitDecline}, nil
}

// Every call of a session carries the same elicitor, and another
// session's differs: a server's question that names no call (stdio) goes
// to a session with two calls in flight, and not to one of two sessions.
func TestTheCallsOfOneSessionCarryOneElicitor(t *testing.T) {
	t.Parallel()
	front := noAnswer{}
	a, b := &session{in: Input{Elicitor: front}}, &session{in: Input{Elicitor: front}}
	first := tools.ElicitorFrom(a.elicitContext(context.Background()))
	second := tools.ElicitorFrom(a.elicitContext(context.Background()))
	other := tools.ElicitorFrom(b.elicitContext(context.Background()))
	if first == nil || first != second {
		t.Fatalf("two calls of one session carry %v and %v", first, second)
	}
	if first == other {
		t.Fatal("two sessions carry the same elicitor")
	}
}
