package slack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp"
	"github.com/slackbot/slackbot/tools/rest"
)

// notesPeer is an MCP server over streamable HTTP on loopback whose tools
// carry annotations: read_notes is read-only, delete_note destructive and
// add_note has none (so, for MCP, it may write). It counts the calls that
// reached each tool.
type notesPeer struct {
	URL   string
	mu    sync.Mutex
	calls map[string]int
}

func (p *notesPeer) count(tool string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[tool]
}

func startNotes(t *testing.T) *notesPeer {
	t.Helper()
	p := &notesPeer{calls: map[string]int{}}
	s := mcpserver.NewMCPServer("notes", "1.0.0", mcpserver.WithToolCapabilities(false))
	handler := func(name string) mcpserver.ToolHandlerFunc {
		return func(_ context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			p.mu.Lock()
			p.calls[name]++
			p.mu.Unlock()
			return mcpgo.NewToolResultText(name + " done"), nil
		}
	}
	id := mcpgo.WithString("id", mcpgo.Description("the note"))
	s.AddTool(mcpgo.NewTool("read_notes", mcpgo.WithDescription("Reads the notes."), mcpgo.WithReadOnlyHintAnnotation(true)), handler("read_notes"))
	s.AddTool(mcpgo.NewTool("delete_note", mcpgo.WithDescription("Deletes a note for good.\nIt cannot be undone."), id,
		mcpgo.WithReadOnlyHintAnnotation(false), mcpgo.WithDestructiveHintAnnotation(true)), handler("delete_note"))
	s.AddTool(mcpgo.NewTool("add_note", mcpgo.WithDescription("Adds a note."), id, mcpgo.WithString("text")), handler("add_note"))
	srv := httptest.NewServer(mcpserver.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	p.URL = srv.URL + "/mcp"
	return p
}

// approvalWorld is a bot whose assistant has the notes server's tools
// under approval: writes, and a REST tool pair (GET and POST) alike.
func approvalWorld(t *testing.T, timeout time.Duration, opts ...bottest.Option) (*bottest.World, *notesPeer, *restCounter) {
	t.Helper()
	return approvalWorldFor(t, timeout, nil, opts...)
}

// approvalWorldFor is approvalWorld with the notes server's approvers.
func approvalWorldFor(t *testing.T, timeout time.Duration, approvers []string, opts ...bottest.Option) (*bottest.World, *notesPeer, *restCounter) {
	t.Helper()
	notes := startNotes(t)
	rc := startREST(t)
	reg, err := mcp.NewRegistry(map[string]config.MCPServer{"notes": {URL: notes.URL,
		ApprovalPolicy: config.ApprovalPolicy{Approval: config.ApprovalWrites, Approvers: approvers}}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	policy := config.ApprovalPolicy{Approval: config.ApprovalWrites}
	rp, err := rest.New(map[string]config.RestTool{
		"status": {Description: "Reads the status.", Method: "GET", URL: rc.URL + "/status", ApprovalPolicy: policy},
		"deploy": {Description: "Deploys.", Method: "POST", URL: rc.URL + "/deploy", ApprovalPolicy: policy},
	}, nil, rest.Options{Client: rc.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rp.Close() })
	orch := tools.New(context.Background(), tools.Options{}, append(reg.Providers(), rp)...)
	wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := orch.Warmup(wctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orch.Close() })
	all := append([]bottest.Option{
		bottest.WithConfig(func(c *config.Config) { c.Agents["assistant"].Tools = []string{"notes__*", "rest__*"} }),
		bottest.WithRunner(func(r *agent.Runner) { r.Tools, r.ApprovalTimeout = orch, timeout }),
	}, opts...)
	return bottest.Start(t, all...), notes, rc
}

type restCounter struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int
}

func (c *restCounter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[method]
}

func startREST(t *testing.T) *restCounter {
	c := &restCounter{counts: map[string]int{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.counts[r.Method]++
		c.mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(c.Close)
	return c
}

// approvalMessages are the thread's messages with approval buttons or
// decisions.
func approvalMessages(w *bottest.World, ts string) []emulator.Message {
	var out []emulator.Message
	for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
		if strings.Contains(string(m.Blocks), "needs approval to run") {
			out = append(out, m)
		}
	}
	return out
}

// awaitApproval waits for the thread's n-th approval message to show
// buttons and returns it.
func awaitApproval(w *bottest.World, ts string, n int) emulator.Message {
	w.T.Helper()
	var msg emulator.Message
	w.Eventually("an approval message with buttons", func() bool {
		ms := approvalMessages(w, ts)
		if len(ms) < n || !strings.Contains(string(ms[n-1].Blocks), "slackbot_approve") {
			return false
		}
		msg = ms[n-1]
		return true
	})
	return msg
}

// buttonValues are the values of the approve buttons of m, one per call.
func buttonValues(t *testing.T, m emulator.Message) []string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == "slackbot_approve" {
				out = append(out, e.Value)
			}
		}
	}
	return out
}

// blocksText is m's blocks as JSON with <, > and & unescaped.
func blocksText(m emulator.Message) string {
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(m.Blocks))
}

func click(t *testing.T, w *bottest.World, m emulator.Message, user, action, value string) {
	t.Helper()
	if _, err := w.Slack.Click(channel, m.TS, user, action, value); err != nil {
		t.Fatal(err)
	}
}

// toolMessages are the tool results the model was sent last.
func toolMessages(w *bottest.World) []llm.Message {
	reqs := w.Model.Requests()
	var out []llm.Message
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

// messageNow is the message at ts as the emulator holds it now.
func messageNow(w *bottest.World, ts, msgTS string) emulator.Message {
	for _, m := range w.Slack.Thread(channel, ts) {
		if m.TS == msgTS {
			return m
		}
	}
	return emulator.Message{}
}

func TestApprovalsInSlack(t *testing.T) {
	t.Parallel()

	t.Run("a read-only tool runs at once and a destructive one waits for Approve, then runs", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__read_notes", `{}`), llmtest.Call("notes__delete_note", `{"id":"7"}`), llmtest.TextReport("Deleted."))
		ts := w.Slack.Mention(channel, asker, "delete note 7")
		m := awaitApproval(w, ts, 1)
		if notes.count("read_notes") != 1 || notes.count("delete_note") != 0 {
			t.Fatalf("before the decision: read %d, delete %d", notes.count("read_notes"), notes.count("delete_note"))
		}
		text := string(m.Blocks)
		for _, want := range []string{"notes", "delete_note", "Deletes a note for good.", `\"id\": \"7\"`, "Approve for this thread", "slackbot_deny"} {
			if !strings.Contains(text, want) {
				t.Errorf("the approval message lacks %q: %s", want, text)
			}
		}
		if strings.Contains(text, "cannot be undone") {
			t.Errorf("the message shows more than the description's first line: %s", text)
		}
		click(t, w, m, asker, "slackbot_approve", "")
		w.Answered(channel, ts, "Deleted.")
		if notes.count("delete_note") != 1 {
			t.Fatalf("delete ran %d times", notes.count("delete_note"))
		}
		now := blocksText(messageNow(w, ts, m.TS))
		if !strings.Contains(now, "Approved by <@"+asker+">") || strings.Contains(now, "slackbot_approve") {
			t.Errorf("the approval message was not updated in place with the decision: %s", now)
		}
		if len(approvalMessages(w, ts)) != 1 {
			t.Errorf("%d approval messages", len(approvalMessages(w, ts)))
		}
	})

	t.Run("Deny: the call does not run, the model is told, and the same call is refused without a second message", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__add_note", `{"id":"1","text":"x"}`), llmtest.Call("notes__add_note", `{"text":"x","id":"1"}`), llmtest.TextReport("Not added."))
		ts := w.Slack.Mention(channel, asker, "add a note")
		m := awaitApproval(w, ts, 1)
		click(t, w, m, asker, "slackbot_deny", "")
		w.Answered(channel, ts, "Not added.")
		if notes.count("add_note") != 0 || len(approvalMessages(w, ts)) != 1 {
			t.Fatalf("add ran %d times; %d approval messages", notes.count("add_note"), len(approvalMessages(w, ts)))
		}
		reqs := w.Model.Requests()
		if got := reqs[1].Messages[len(reqs[1].Messages)-1].Content; got != "The user denied this call; do not retry it." {
			t.Errorf("the model read %q", got)
		}
		if got := toolMessages(w); len(got) == 0 || !strings.Contains(got[len(got)-1].Content, "denied earlier") {
			t.Errorf("the retry got %+v", got)
		}
		if now := blocksText(messageNow(w, ts, m.TS)); !strings.Contains(now, "Denied by <@"+asker+">") {
			t.Errorf("not updated: %s", now)
		}
	})

	t.Run("no decision within approval_timeout denies the call and says so in place", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, 300*time.Millisecond)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Nobody answered."))
		ts := w.Slack.Mention(channel, asker, "delete")
		w.Answered(channel, ts, "Nobody answered.")
		if notes.count("delete_note") != 0 {
			t.Fatal("the call ran without approval")
		}
		if got := toolMessages(w); len(got) != 1 || got[0].Content != "No one approved this call in time; do not retry it." {
			t.Errorf("the model read %+v", got)
		}
		ms := approvalMessages(w, ts)
		if len(ms) != 1 || !strings.Contains(string(ms[0].Blocks), "No decision in time") || strings.Contains(string(ms[0].Blocks), "slackbot_approve") {
			t.Errorf("approval message %s", bottest.MessageText(ms[0]))
		}
	})

	t.Run("Approve for this thread runs the tool in a later session of the thread without asking", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("First gone."))
		ts := w.Slack.Mention(channel, asker, "delete 1")
		click(t, w, awaitApproval(w, ts, 1), asker, "slackbot_approve_thread", "")
		w.Answered(channel, ts, "First gone.")
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"2"}`), llmtest.TextReport("Second gone."))
		w.Slack.Reply(channel, ts, asker, "and delete 2")
		w.Answered(channel, ts, "Second gone.")
		if notes.count("delete_note") != 2 || len(approvalMessages(w, ts)) != 1 {
			t.Fatalf("delete ran %d times; %d approval messages", notes.count("delete_note"), len(approvalMessages(w, ts)))
		}
		reqs := w.Model.Requests()
		for _, m := range reqs[len(reqs)-2].Messages {
			if strings.Contains(m.Content, "Approval needed") {
				t.Errorf("the later session's history holds the approval message: %q", m.Content)
			}
		}
		if now := blocksText(approvalMessages(w, ts)[0]); !strings.Contains(now, "Approved for this thread by") {
			t.Errorf("not updated: %s", now)
		}
	})

	t.Run("a click by someone who may not decide is refused to them alone and decides nothing", func(t *testing.T) {
		t.Parallel()
		const stranger = "U0STRANGER"
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Slack.AddUser(stranger, "stranger")
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		click(t, w, m, stranger, "slackbot_approve", "")
		w.Eventually("the stranger to be refused", func() bool {
			for _, e := range w.Slack.Ephemerals() {
				if e.User == stranger && strings.Contains(e.Text, "Only the person who asked") {
					return true
				}
			}
			return false
		})
		if notes.count("delete_note") != 0 || !strings.Contains(blocksText(messageNow(w, ts, m.TS)), "slackbot_approve") {
			t.Fatal("the stranger's click decided")
		}
		click(t, w, m, asker, "slackbot_approve", "")
		w.Answered(channel, ts, "Done.")
		if notes.count("delete_note") != 1 {
			t.Fatalf("delete ran %d times", notes.count("delete_note"))
		}
	})

	t.Run("listed approvers and admins decide, and the asker may not when the list leaves them out", func(t *testing.T) {
		t.Parallel()
		const ops, boss = "U0OPS", "U0BOSS"
		w, notes, _ := approvalWorldFor(t, time.Minute, []string{ops}, bottest.WithConfig(func(c *config.Config) { c.Slack.Admins = []string{boss} }))
		w.Slack.AddUser(ops, "ops")
		w.Slack.AddUser(boss, "boss")
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.Call("notes__delete_note", `{"id":"2"}`), llmtest.TextReport("Both gone."))
		ts := w.Slack.Mention(channel, asker, "delete two")
		m := awaitApproval(w, ts, 1)
		click(t, w, m, asker, "slackbot_approve", "")
		w.Eventually("the asker to be refused", func() bool {
			for _, e := range w.Slack.Ephemerals() {
				if e.User == asker && strings.Contains(e.Text, "Only the person who asked") {
					return true
				}
			}
			return false
		})
		click(t, w, m, ops, "slackbot_approve", "")
		click(t, w, awaitApproval(w, ts, 2), boss, "slackbot_approve", "")
		w.Answered(channel, ts, "Both gone.")
		if notes.count("delete_note") != 2 {
			t.Fatalf("delete ran %d times", notes.count("delete_note"))
		}
		ms := approvalMessages(w, ts)
		// Named without a ping: neither wrote in the thread.
		if !strings.Contains(blocksText(ms[0]), "Approved by @ops") || !strings.Contains(blocksText(ms[1]), "Approved by @boss") {
			t.Errorf("decisions: %s / %s", blocksText(ms[0]), blocksText(ms[1]))
		}
	})

	t.Run("a member of an approvers user group decides", func(t *testing.T) {
		t.Parallel()
		const member = "U0ONCALL"
		w, notes, _ := approvalWorldFor(t, time.Minute, []string{"S0ONCALL"})
		w.Slack.AddUserGroup("S0ONCALL", member)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Gone."))
		ts := w.Slack.Mention(channel, asker, "delete")
		click(t, w, awaitApproval(w, ts, 1), member, "slackbot_approve", "")
		w.Answered(channel, ts, "Gone.")
		if notes.count("delete_note") != 1 {
			t.Fatalf("delete ran %d times", notes.count("delete_note"))
		}
	})

	t.Run("two calls of one turn are asked in one message and decided one by one", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Calls(llmtest.ToolCall{Name: "notes__delete_note", Arguments: `{"id":"1"}`},
			llmtest.ToolCall{Name: "notes__add_note", Arguments: `{"id":"2","text":"hi"}`}), llmtest.TextReport("Half done."))
		ts := w.Slack.Mention(channel, asker, "both")
		m := awaitApproval(w, ts, 1)
		values := buttonValues(t, m)
		if len(values) != 2 || !strings.Contains(string(m.Blocks), "these 2 tool calls") {
			t.Fatalf("values %v in %s", values, m.Blocks)
		}
		click(t, w, m, asker, "slackbot_deny", values[1])
		click(t, w, m, asker, "slackbot_approve", values[0])
		w.Answered(channel, ts, "Half done.")
		if notes.count("delete_note") != 1 || notes.count("add_note") != 0 || len(approvalMessages(w, ts)) != 1 {
			t.Fatalf("delete %d, add %d, %d messages", notes.count("delete_note"), notes.count("add_note"), len(approvalMessages(w, ts)))
		}
		now := blocksText(messageNow(w, ts, m.TS))
		if !strings.Contains(now, "Approved by") || !strings.Contains(now, "Denied by") {
			t.Errorf("decisions not shown: %s", now)
		}
		var recs []state.SessionRecord
		w.Eventually("the session's record", func() bool {
			recs, _ = w.Store.Sessions(context.Background(), state.SessionFilter{})
			return len(recs) == 1
		})
		got := recs[0].Approvals
		if len(got) != 2 || got[0].Tool != "notes__delete_note" || got[0].Decision != "approved" || got[0].By != asker ||
			got[1].Tool != "notes__add_note" || got[1].Decision != "denied" {
			t.Errorf("the record keeps %+v", got)
		}
	})

	t.Run("a click delivered to the replica not running the session decides there", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Replica()
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		other := otherConn(w, mentionConn(w, ts))
		if _, err := w.Slack.ClickOn(other, channel, m.TS, asker, "slackbot_approve", ""); err != nil {
			t.Fatal(err)
		}
		w.Answered(channel, ts, "Done.")
		if notes.count("delete_note") != 1 {
			t.Fatalf("delete ran %d times", notes.count("delete_note"))
		}
		w.Logged("decision recorded by another replica")
	})

	t.Run("on Redis, a click delivered to the replica not running the session decides there", func(t *testing.T) {
		t.Parallel()
		const colleague = "U0COLLEAGUE" // of the bot's organisation, not an approver
		srv := redistest.Start(t)
		w, notes, _ := approvalWorld(t, time.Minute, bottest.OnStore(dialRedis(t, srv, "approvals:")))
		w.Replica(bottest.OnStore(dialRedis(t, srv, "approvals:")))
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		other := otherConn(w, mentionConn(w, ts))
		if _, err := w.Slack.ClickOn(other, channel, m.TS, colleague, "slackbot_approve", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Slack.ClickOn(other, channel, m.TS, asker, "slackbot_deny", ""); err != nil {
			t.Fatal(err)
		}
		w.Answered(channel, ts, "Done.")
		if notes.count("delete_note") != 0 {
			t.Fatalf("delete ran %d times: a colleague's approval on the other replica was honoured", notes.count("delete_note"))
		}
		now := blocksText(messageNow(w, ts, m.TS))
		if !strings.Contains(now, "Denied by <@"+asker+">") {
			t.Errorf("the asker's denial on the other replica is not shown: %s", now)
		}
	})

	t.Run("a REST GET runs at once and a POST waits", func(t *testing.T) {
		t.Parallel()
		w, _, rc := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("rest__status", `{}`), llmtest.Call("rest__deploy", `{}`), llmtest.TextReport("Deployed."))
		ts := w.Slack.Mention(channel, asker, "deploy")
		m := awaitApproval(w, ts, 1)
		if rc.count("GET") != 1 || rc.count("POST") != 0 {
			t.Fatalf("GET %d, POST %d before the decision", rc.count("GET"), rc.count("POST"))
		}
		click(t, w, m, asker, "slackbot_approve", "")
		w.Answered(channel, ts, "Deployed.")
		if rc.count("POST") != 1 {
			t.Fatalf("POST %d", rc.count("POST"))
		}
	})
}

func TestApprovalMessagesResistAttack(t *testing.T) {
	t.Parallel()

	t.Run("arguments with pings, links and secrets are shown inert and redacted", func(t *testing.T) {
		t.Parallel()
		w, _, _ := approvalWorld(t, time.Minute)
		args := `{"id":"1","text":"<!channel> <@U0BOSS> log in at <https://evil.example/login|slack.com> or https://evil.example ` + "```" + ` xoxb-1234567890-abcdefghijkl","token":"hunter2"}`
		w.Model.Push(llmtest.Call("notes__add_note", args), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "add")
		m := awaitApproval(w, ts, 1)
		text := blocksText(m)
		for _, bad := range []string{"<!channel>", "<@U0BOSS>", "<https://", "xoxb-1234567890", "hunter2"} {
			if strings.Contains(text, bad) {
				t.Errorf("the approval message carries %q: %s", bad, text)
			}
		}
		if strings.Count(text, "```") != 2 {
			t.Errorf("the arguments broke out of their code block: %s", text)
		}
		click(t, w, m, asker, "slackbot_deny", "")
		w.Answered(channel, ts, "Done.")
	})

	t.Run("a forged button value decides nothing", func(t *testing.T) {
		t.Parallel()
		w, notes, _ := approvalWorld(t, time.Minute)
		w.Model.Push(llmtest.Call("notes__delete_note", `{"id":"1"}`), llmtest.TextReport("Done."))
		ts := w.Slack.Mention(channel, asker, "delete")
		m := awaitApproval(w, ts, 1)
		real := buttonValues(t, m)[0]
		wait, _, _ := strings.Cut(real, "|")
		for _, forged := range []string{"madeup-wait|" + asker + "|notes__delete_note", wait + "x|" + asker + "|notes__delete_note", "another-session/call_1-ab|" + asker + "|notes__delete_note"} {
			click(t, w, m, asker, "slackbot_approve", forged)
		}
		w.Eventually("the forged clicks to be recorded for the replica running the session", func() bool {
			return w.Logs.FilterMessage("approval recorded for the replica running the session").Len() >= 3
		})
		// Recorded decisions are looked up once a second: give the running
		// replica two looks before saying none of them decided.
		time.Sleep(2 * time.Second)
		if notes.count("delete_note") != 0 || !strings.Contains(blocksText(messageNow(w, ts, m.TS)), "slackbot_approve") {
			t.Fatal("a forged value decided the call")
		}
		click(t, w, m, asker, "slackbot_deny", "")
		w.Answered(channel, ts, "Done.")
		if notes.count("delete_note") != 0 {
			t.Fatal("the denied call ran")
		}
	})
}
