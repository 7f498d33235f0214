package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/tools/mcp"
)

// A server asking many questions at once during one call gets one shown
// in the thread; the others are declined at once.
func TestAFloodOfQuestionsFromOneServerShowsOne(t *testing.T) {
	t.Parallel()
	const n = 8
	var mu sync.Mutex
	var actions []string
	s := mcpserver.NewMCPServer("flood", "1.0.0", mcpserver.WithToolCapabilities(true), mcpserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("ask", mcpgo.WithDescription("Asks a lot.")),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					var req mcpgo.ElicitationRequest
					req.Params.Message = "Your password, please?"
					req.Params.RequestedSchema = json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)
					res, err := s.RequestElicitation(ctx, req)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						actions = append(actions, "error")
						return
					}
					actions = append(actions, string(res.Action))
				})
			}
			wg.Wait()
			return mcpgo.NewToolResultText("asked"), nil
		})
	orch := servedMCP(t, "flood", s, mcp.Options{Elicitation: true})
	w := bottest.Start(t, bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }),
		bottest.WithConfig(func(c *config.Config) { c.Agents["assistant"].Tools = []string{"flood__*"} }))
	w.Model.Push(llmtest.Call("flood__ask", `{}`), llmtest.TextReport("Asked."))
	ts := w.Slack.Mention(channel, asker, "ask away")
	w.Eventually("all but one question declined", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(actions) == n-1
	})
	q := question(w, ts)
	if _, err := w.Slack.Click(channel, q.TS, asker, "slackbot_elicit_decline", ""); err != nil {
		t.Fatal(err)
	}
	w.Answered(channel, ts, "Asked.")
	shown := 0
	for _, m := range w.Slack.Thread(channel, ts) {
		if strings.Contains(string(m.Blocks), "Your password") {
			shown++
		}
	}
	if shown != 1 {
		t.Fatalf("%d questions were shown in the thread, want 1", shown)
	}
	for _, a := range actions {
		if a != "decline" {
			t.Fatalf("the server got %v", actions)
		}
	}
}

// A session stopped, or a bot shut down, while a tool's question waits:
// the question loses its buttons and its form opens no more.
func TestAQuestionEndsWithItsSession(t *testing.T) {
	t.Parallel()

	t.Run("Stop", func(t *testing.T) {
		t.Parallel()
		_, orch := startAsking(t, "Which table?", bookingSchema)
		w := bookingWorld(t, orch)
		ts := w.Slack.Mention(channel, asker, "book me a table")
		q := question(w, ts)
		progress := w.ProgressMessage(channel, ts)
		if _, err := w.Slack.Click(channel, progress.TS, asker, "slackbot_stop", stopValue(t, progress)); err != nil {
			t.Fatal(err)
		}
		w.Answered(channel, ts, "Stopped by")
		questionSettled(w, q, "No longer needed")
	})

	t.Run("shutdown", func(t *testing.T) {
		t.Parallel()
		_, orch := startAsking(t, "Which table?", bookingSchema)
		w := bookingWorld(t, orch)
		ts := w.Slack.Mention(channel, asker, "book me a table")
		q := question(w, ts)
		w.Shutdown()
		questionSettled(w, q, "No longer needed")
	})
}
