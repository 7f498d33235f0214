package agent

// Helpers for scenarios with several agents — sub-agents and routers —
// sharing one fake model server. Each agent's prompt names it, and a
// responder answers every request from the script of the agent that sent
// it, so agents that run concurrently still get their own replies.

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// member is an agent of a team and what the model answers it, in order.
type member struct {
	agent   *config.Agent
	replies []llmtest.Reply
}

// agentNamed returns a test agent called name, with the given sub-agents.
func agentNamed(name string, subs ...string) *config.Agent {
	a := testAgent()
	a.Name, a.Prompt, a.Agents = name, "You are the agent "+name+".", subs
	a.Description = "The " + name + " of the team."
	return a
}

// routerNamed returns a router agent called name with the destinations.
func routerNamed(name string, dests ...string) *config.Agent {
	a := agentNamed(name)
	a.Router.Destinations = dests
	return a
}

// as gives agent a its replies.
func as(a *config.Agent, replies ...llmtest.Reply) member { return member{a, replies} }

var agentPromptRe = regexp.MustCompile(`You are the agent (\S+)\.`)

// agentOf names the agent a request came from, by its system prompt.
func agentOf(t *testing.T, r *llmtest.Recorded) string {
	t.Helper()
	m := agentPromptRe.FindStringSubmatch(r.System)
	if m == nil {
		t.Fatalf("a request from no team member:\n%s", r.System)
	}
	return m[1]
}

// newTeam returns a harness whose Runner knows every member, running the
// first. Each member's replies answer its requests in order; a member that
// runs out gets an empty reply and fails the test.
func newTeam(t *testing.T, members []member, opts ...option) *harness {
	t.Helper()
	h := newHarness(t, opts...)
	h.agent = members[0].agent
	h.runner.Agents = map[string]*config.Agent{}
	scripts := map[string]func() llmtest.Reply{}
	counts := map[string]int{}
	for _, m := range members {
		h.runner.Agents[m.agent.Name] = m.agent
		scripts[m.agent.Name] = sequence(m.replies...)
		counts[m.agent.Name] = len(m.replies)
	}
	h.srv.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		m := agentPromptRe.FindStringSubmatch(r.System)
		if m == nil || scripts[m[1]] == nil {
			return llmtest.Reply{Status: 500, ErrorMessage: "no team member sent this"}
		}
		return scripts[m[1]]()
	})
	t.Cleanup(func() {
		for name, n := range counts {
			if got := len(h.requestsOf(name)); got > n {
				t.Errorf("%s made %d model calls, more than its %d scripted replies", name, got, n)
			}
		}
	})
	return h
}

// requestsOf returns the requests agent name sent, in order.
func (h *harness) requestsOf(name string) []*llmtest.Recorded {
	h.t.Helper()
	var out []*llmtest.Recorded
	for _, r := range h.requests() {
		if agentOf(h.t, r) == name {
			out = append(out, r)
		}
	}
	return out
}

// subReport is a reply that delivers a sub-agent's report.
func subReport(status, content string) llmtest.Reply {
	return llmtest.Call(FinalReportTool, jsonArgs(map[string]any{"status": status, "report_format": config.FormatSubAgent, "report_content": content}))
}

// ask is a reply that calls sub-agent name with prompt.
func ask(name, prompt string) llmtest.Reply {
	return llmtest.Call(SubAgentPrefix+name, jsonArgs(map[string]any{"prompt": prompt}))
}

// askWithID is ask with a call id of the test's choosing.
func askWithID(id, name, prompt string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: id, Name: SubAgentPrefix + name, Arguments: jsonArgs(map[string]any{"prompt": prompt})}}}
}

// handOffTo is a reply that hands off to dest with message.
func handOffTo(dest, message string) llmtest.Reply {
	args := map[string]any{"agent": dest}
	if message != "" {
		args["message"] = message
	}
	return llmtest.Call(HandoffTool, jsonArgs(args))
}

// eventsOf returns the events agent name emitted.
func (l *eventLog) eventsOf(name string) []Event {
	var out []Event
	for _, e := range l.all() {
		if e.Agent == name {
			out = append(out, e)
		}
	}
	return out
}

// findOp returns the first node of tree, depth first, of kind and name.
func findOp(tree *OpSnapshot, kind, name string) *OpSnapshot {
	if tree.Kind == kind && tree.Name == name {
		return tree
	}
	for _, c := range tree.Children {
		if f := findOp(c, kind, name); f != nil {
			return f
		}
	}
	return nil
}

// opNames lists the kinds and names of a node's children.
func opNames(s *OpSnapshot) []string {
	var out []string
	for _, c := range s.Children {
		out = append(out, fmt.Sprintf("%s %s", c.Kind, c.Name))
	}
	return out
}
