package slack

import (
	"context"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

func TestChannelsMatchByIDOrNameGlob(t *testing.T) {
	t.Parallel()
	cases := []struct {
		patterns []string
		id, name string
		want     bool
	}{
		{[]string{"C1"}, "C1", "general", true},
		{[]string{"support-*"}, "C2", "support-eu", true},
		{[]string{"#support-*"}, "C2", "support-eu", true},
		{[]string{"support-*"}, "C3", "general", false},
		{[]string{"support-*"}, "D1", "", false}, // a DM has no name
		{nil, "C1", "general", false},
	}
	for _, c := range cases {
		if got := matchChannel(c.patterns, c.id, c.name); got != c.want {
			t.Errorf("matchChannel(%v, %s, %s) = %v", c.patterns, c.id, c.name, got)
		}
	}
}

func TestTheProgressMessageShowsStepToolsAndCostWithAStopButton(t *testing.T) {
	t.Parallel()
	b := &Bot{cfg: config.Slack{ProgressInterval: config.Duration(1)}}
	p := newProgress(b, request{channel: "C1", threadTS: "1.0", user: "U1"}, "sess-1")
	p.observe(agent.Event{Kind: agent.EventTurnStarted, Turn: 2, Path: []string{"helper"}})
	p.observe(agent.Event{Kind: agent.EventTaskStatus, Status: &agent.TaskStatus{Now: "Reading <the> logs"}, Path: []string{"helper"}})
	p.observe(agent.Event{Kind: agent.EventToolStarted, Session: "s", Tool: &agent.ToolInfo{ID: "c1", Name: "github__search"}, Path: []string{"helper", "researcher"}})
	p.observe(agent.Event{Kind: agent.EventLLMCall, LLM: &agent.LLMCallInfo{Usage: llmUsage(1200, 34, 0.0021)}})
	m := p.render("")
	if err := blockkit.Validate(m); err != nil {
		t.Fatalf("progress message is not valid Block Kit: %v", err)
	}
	text := blockText(m)
	for _, want := range []string{"step 2", "Reading &lt;the&gt; logs", "researcher › `github__search`", "1,234 tokens", "$0.0021"} {
		if !strings.Contains(text, want) {
			t.Errorf("progress lacks %q:\n%s", want, text)
		}
	}
	actions, ok := m.Blocks[len(m.Blocks)-1].(*slackapi.ActionBlock)
	if !ok || len(actions.Elements.ElementSet) != 1 {
		t.Fatalf("the last block is not the Stop button: %#v", m.Blocks[len(m.Blocks)-1])
	}
	btn := actions.Elements.ElementSet[0].(*slackapi.ButtonBlockElement)
	if session, asker := parseStopValue(btn.Value); btn.ActionID != stopAction || session != "sess-1" || asker != "U1" {
		t.Fatalf("stop button %+v", btn)
	}
	p.observe(agent.Event{Kind: agent.EventToolFinished, Session: "s", Tool: &agent.ToolInfo{ID: "c1", Name: "github__search"}})
	if strings.Contains(blockText(p.render("")), "github__search") {
		t.Error("a finished tool is still shown running")
	}
}

func llmUsage(in, out int, cost float64) llm.Usage {
	return llm.Usage{InputTokens: in, OutputTokens: out, CostUSD: cost}
}

func TestSlackTransportErrorsLoseTheirURLAndAddress(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Post", URL: "http://10.1.2.3:8080/api/chat.postMessage", Err: context.Canceled}, "slack: chat.postMessage: cancelled"},
		{&url.Error{Op: "Post", URL: "http://10.1.2.3:8080/api/chat.update", Err: context.DeadlineExceeded}, "slack: chat.update: timed out"},
		{&url.Error{Op: "Post", URL: "http://10.1.2.3:8080/api/chat.update",
			Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8080}, Err: syscall.ECONNREFUSED}}, "slack: chat.update: connection refused"},
		{slackapi.SlackErrorResponse{Err: "channel_not_found"}, "slack: channel_not_found"},
	} {
		got := slackError(c.err)
		if got.Error() != c.want {
			t.Errorf("slackError(%v) = %q, want %q", c.err, got, c.want)
		}
		if strings.Contains(got.Error(), "10.1.2.3") {
			t.Errorf("%q names the address", got)
		}
	}
}
