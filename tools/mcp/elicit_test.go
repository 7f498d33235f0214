package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/slackbot/slackbot/config"
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

// askingServer serves a tool ask that asks its caller a one-field question
// and returns what came back; answers are recorded.
func askingServer(t *testing.T) (url string, answers chan string) {
	t.Helper()
	answers = make(chan string, 4)
	s := mcpserver.NewMCPServer("asking", "1.0.0", mcpserver.WithToolCapabilities(true), mcpserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("ask"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		var req mcpgo.ElicitationRequest
		req.Params.Message = "Your name?"
		req.Params.RequestedSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}`)
		res, err := s.RequestElicitation(ctx, req)
		if err != nil {
			answers <- "error"
			return mcpgo.NewToolResultText("error"), nil
		}
		answers <- string(res.Action)
		return mcpgo.NewToolResultText(string(res.Action)), nil
	})
	srv := httptest.NewServer(mcpserver.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL, answers
}

func askOnce(ctx context.Context, t *testing.T, url string, elicitation bool) {
	t.Helper()
	reg, err := NewRegistry(map[string]config.MCPServer{"asking": {Type: "http", URL: url}}, Options{Elicitation: elicitation})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	p, err := reg.Acquire("asking")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Warmup(wctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Call(ctx, tools.Call{ID: "1", Name: "asking__ask", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
}

func TestTheClientAsksOnlyWhereItDeclaredItCanAndDeclinesForASessionWithNobodyToAsk(t *testing.T) {
	t.Parallel()
	url, answers := askingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	askOnce(tools.WithElicitor(ctx, someone{"ada"}), t, url, false)
	if got := <-answers; got != "error" {
		t.Errorf("without the capability declared the server could ask: %s", got)
	}
	askOnce(ctx, t, url, true)
	if got := <-answers; got != "decline" {
		t.Errorf("a session with nobody to ask answered %s, want decline", got)
	}
	askOnce(tools.WithElicitor(ctx, someone{"ada"}), t, url, true)
	if got := <-answers; got != "accept" {
		t.Errorf("a session that can ask answered %s, want accept", got)
	}
}
