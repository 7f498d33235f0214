package playground_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp"
	"github.com/slackbot/slackbot/tools/rest"
)

// Tools that ask the person first: a REST POST under approval: writes,
// and an MCP tool that asks for its details (elicitation).

// deployTool is a REST tool, rest__deploy, that POSTs over loopback under
// approval: writes; calls counts the requests that reached it.
type deployTool struct {
	calls   atomic.Int32
	options []bottest.Option
}

func newDeployTool(t *testing.T) *deployTool {
	t.Helper()
	d := &deployTool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"deployed":"v42"}`))
	}))
	t.Cleanup(srv.Close)
	p, err := rest.New(map[string]config.RestTool{"deploy": {
		Description: "Deploys the service.", Method: "POST", URL: srv.URL + "/deploy",
		ApprovalPolicy: config.ApprovalPolicy{Approval: config.ApprovalWrites},
	}}, nil, rest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	orch := warm(t, tools.New(context.Background(), tools.Options{}, p))
	d.options = []bottest.Option{
		bottest.WithRunner(func(r *agent.Runner) { r.Tools, r.ApprovalTimeout = orch, time.Minute }),
		bottest.WithConfig(func(c *config.Config) { c.Agents[bottest.AgentName].Tools = []string{"rest__*"} }),
	}
	return d
}

// bookingSchema asks for a name (required, two letters at least), a
// number of guests (default 2) and a table, with titles (default the
// window).
const bookingSchema = `{
  "type": "object",
  "properties": {
    "name":   {"type": "string", "title": "Name on the booking", "minLength": 2},
    "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 8, "default": 2},
    "table":  {"type": "string", "title": "Table", "oneOf": [
                {"const": "window", "title": "By the window"},
                {"const": "garden", "title": "In the garden"}], "default": "window"}
  },
  "required": ["name"]
}`

// bookingTool is an MCP server over loopback whose tool book asks the
// person behind the call for the booking's details.
type bookingTool struct {
	mu      sync.Mutex
	answers []*mcpgo.ElicitationResult
	options []bottest.Option
}

func (b *bookingTool) got() []*mcpgo.ElicitationResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*mcpgo.ElicitationResult(nil), b.answers...)
}

func newBookingTool(t *testing.T) *bookingTool {
	t.Helper()
	b := &bookingTool{}
	s := mcpserver.NewMCPServer("booking", "1.0.0", mcpserver.WithToolCapabilities(true), mcpserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("book", mcpgo.WithDescription("Book a table.")),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			var req mcpgo.ElicitationRequest
			req.Params.Message = "Who is the table for?"
			req.Params.RequestedSchema = json.RawMessage(bookingSchema)
			res, err := s.RequestElicitation(ctx, req)
			if err != nil {
				return mcpgo.NewToolResultError("the elicitation failed: " + err.Error()), nil
			}
			b.mu.Lock()
			b.answers = append(b.answers, res)
			b.mu.Unlock()
			content, _ := json.Marshal(res.Content)
			return mcpgo.NewToolResultText("booking " + string(res.Action) + " " + string(content)), nil
		})
	srv := httptest.NewServer(mcpserver.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	reg, err := mcp.NewRegistry(map[string]config.MCPServer{"booking": {Type: "http", URL: srv.URL}}, mcp.Options{Elicitation: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	orch := warm(t, tools.New(context.Background(), tools.Options{}, reg.Providers()...))
	b.options = []bottest.Option{
		bottest.WithRunner(func(r *agent.Runner) { r.Tools, r.ApprovalTimeout = orch, time.Minute }),
		bottest.WithConfig(func(c *config.Config) { c.Agents[bottest.AgentName].Tools = []string{"booking__*"} }),
	}
	return b
}

// warm warms an orchestrator up and closes it when the test ends.
func warm(t *testing.T, orch *tools.Orchestrator) *tools.Orchestrator {
	t.Helper()
	t.Cleanup(func() { _ = orch.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := orch.Warmup(ctx); err != nil {
		t.Fatal(err)
	}
	return orch
}

// callThenSay has the model call tool, then answer with what the tool
// returned, quoted.
func callThenSay(tool string) func(*llmtest.Recorded) llmtest.Reply {
	return func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				return llmtest.TextReport("The tool said: " + m.Content)
			}
		}
		return llmtest.Call(tool, `{}`)
	}
}

// openModal opens view for user as a bot would: a button posted in
// #general, pressed by user, whose trigger_id opens the view with
// views.open. It returns the view's id.
func openModal(t *testing.T, w *world, user string, view slackapi.ModalViewRequest) string {
	t.Helper()
	api := slackapi.New(w.Slack.BotToken(), slackapi.OptionAPIURL(w.Slack.APIURL()))
	button := slackapi.NewButtonBlockElement("pg_test_open", "open", slackapi.NewTextBlockObject("plain_text", "Open", false, false))
	_, ts, err := api.PostMessage(playground.General, slackapi.MsgOptionText("a form", false),
		slackapi.MsgOptionBlocks(slackapi.NewActionBlock("pg_test", button)))
	if err != nil {
		t.Fatal(err)
	}
	env, err := w.Slack.Click(playground.General, ts, user, "pg_test_open", "")
	if err != nil {
		t.Fatal(err)
	}
	var trigger string
	for _, e := range w.Slack.Envelopes() {
		if e.ID == env {
			var p struct {
				TriggerID string `json:"trigger_id"`
			}
			_ = json.Unmarshal(e.Payload, &p)
			trigger = p.TriggerID
		}
	}
	if trigger == "" {
		t.Fatalf("the click %s carried no trigger_id", env)
	}
	v, err := api.OpenView(trigger, view)
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}

// plain is a plain_text object.
func plain(s string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject("plain_text", s, false, false)
}

// modalEvents follows the "modal" events of the page's stream and returns
// the first drawing for which ok holds, failing the test if none comes.
func modalEvents(t *testing.T, w *world, what string, ok func(html string) bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	last := "(no modal event)"
	for ev := range stream(ctx, t, w.page.URL+"/events?c=C0GENERAL") {
		if ev.name != "modal" {
			continue
		}
		last = ev.data["html"]
		if ok(last) {
			return last
		}
	}
	t.Fatalf("the page never showed %s; last drawn:\n%s", what, last)
	return ""
}

// has tells whether html holds every one of parts.
func has(html string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(html, p) {
			return false
		}
	}
	return true
}
