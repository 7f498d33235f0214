package mcp

import (
	"context"
	"testing"

	"github.com/slackbot/slackbot/tools"
)

type someone struct{ name string }

func (someone) Elicit(context.Context, tools.ElicitRequest) (tools.ElicitAnswer, error) {
	return tools.ElicitAnswer{Action: tools.ElicitAccept}, nil
}

func TestAQuestionWithoutItsCallGoesOnlyToTheOneSessionWithCallsInFlight(t *testing.T) {
	ada, bob := someone{"ada"}, someone{"bob"}
	adaCtx := tools.WithElicitor(context.Background(), ada)
	bobCtx := tools.WithElicitor(context.Background(), bob)
	background := context.Background() // a stdio request: no call in its context

	var cs calls
	if c, why := cs.owner(background); c != nil || why == "" {
		t.Fatalf("with no call in flight: %v %q", c, why)
	}
	first, end1 := cs.begin(adaCtx)
	if c, _ := cs.owner(background); c == nil || c.e != ada {
		t.Fatalf("one call in flight: the question went to %v", c)
	}
	_, end2 := cs.begin(adaCtx)
	if c, _ := cs.owner(background); c == nil || c.e != ada {
		t.Fatalf("two calls of one session: the question went to %v", c)
	}
	_, end3 := cs.begin(bobCtx)
	if c, why := cs.owner(background); c != nil || why == "" {
		t.Fatalf("calls of two sessions in flight: the question went to %v (%q)", c, why)
	}
	// Over streamable HTTP the question comes in its call's own context.
	if c, _ := cs.owner(first); c == nil || c.e != ada {
		t.Fatalf("a question in its call's context went to %v", c)
	}
	end3()
	end2()
	end1()
	if c, _ := cs.owner(background); c != nil {
		t.Fatalf("after the calls ended the question went to %v", c)
	}
	// A session without an elicitor sharing the server with one that has
	// one: it cannot be told whose the question is.
	_, e1 := cs.begin(context.Background())
	_, e2 := cs.begin(bobCtx)
	defer e1()
	defer e2()
	if c, _ := cs.owner(background); c != nil {
		t.Fatalf("a session that cannot answer and one that can: the question went to %v", c)
	}
}
