package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// Routers: an agent with router destinations is offered router__handoff-to
// (with those of its destinations the Runner knows).
// A successful handoff ends the router's session without a report, and the
// Runner runs the destination on the same request — history, prompt,
// observer — with the router's message as an advisory note. The
// destination's session hangs under the handoff call in the router's tree,
// and counts as one level deeper, so routers handing off to routers stop at
// the maximum depth.

// HandoffTool is how a router hands the conversation off.
const HandoffTool = "router__handoff-to"

// HandedOff is the SessionSummary.Status of a router's session that handed
// the request off; its session_done Notice names the destination.
const HandedOff = "handed_off"

// routerNote introduces the router's message in the destination's prompt.
const routerNote = "Note from the router: "

// handoff is a router's choice of destination.
type handoff struct {
	agent   string
	message string
	call    string   // the handoff call's id
	op      *Op      // the handoff call's node
	path    []string // the router session's agents, top first
	session string   // the router session's id
	root    *Op      // the router session's node
}

var handoffArgs = mustCompile(json.RawMessage(`{"type":"object","additionalProperties":false,"required":["agent"],` +
	`"properties":{"agent":{"type":"string"},"message":{"type":"string"}}}`))

// handoffDef describes router__handoff-to for a router: its destinations
// as an enum, each with its description.
func handoffDef(dests []string, agents map[string]*config.Agent) llm.ToolDef {
	var b strings.Builder
	b.WriteString("Hand the user's request off to the agent best suited to answer it. That agent gets the whole conversation " +
		"and answers the user itself; your session ends with this call, so do not write a final report after it. Destinations:")
	for _, d := range dests {
		desc := ""
		if a := agents[d]; a != nil {
			desc = strings.TrimSpace(a.Description)
		}
		if desc == "" {
			fmt.Fprintf(&b, "\n- %s", d)
		} else {
			fmt.Fprintf(&b, "\n- %s: %s", d, desc)
		}
	}
	enum, _ := json.Marshal(dests)
	schema := `{"type":"object","additionalProperties":false,"required":["agent"],"properties":{` +
		`"agent":{"type":"string","enum":` + string(enum) + `,"description":"The destination agent."},` +
		`"message":{"type":"string","description":"Optional advice for the destination: what you understood of the request, what to focus on."}}}`
	return llm.ToolDef{Name: HandoffTool, Description: b.String(), Schema: json.RawMessage(schema)}
}

// handOff handles router__handoff-to: a valid destination is recorded, and
// the session ends after this turn.
func (s *session) handOff(c *llm.ToolCall, op *Op, inBatch bool) callOutcome {
	if inBatch {
		return callOutcome{HandoffTool + " cannot be called inside " + BatchTool + "; call it on its own.", true}
	}
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, handoffArgs)
	if msg != "" {
		return callOutcome{msg, true}
	}
	var args struct {
		Agent   string `json:"agent"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &args)
	if !slices.Contains(s.dests, args.Agent) {
		return callOutcome{fmt.Sprintf("There is no destination %q. Hand off to one of: %s.", tools.Snippet(args.Agent, 100), strings.Join(s.dests, ", ")), true}
	}
	if why := s.r.refuse(s.path, args.Agent); why != "" {
		return callOutcome{why, true}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handoff != nil {
		return callOutcome{"The request was already handed off to " + s.handoff.agent + "; this handoff is ignored.", true}
	}
	s.handoff = &handoff{agent: args.Agent, message: strings.TrimSpace(args.Message), call: c.ID, op: op,
		path: s.path, session: s.id, root: s.tree}
	return callOutcome{"Handed off to " + args.Agent + ", which answers the user from here. Your session ends now.", false}
}

// handedOff returns the session's handoff, unless a report was captured
// too: an answer of the router's own stands.
func (s *session) handedOff() *handoff {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.report != nil {
		return nil
	}
	return s.handoff
}

// endHandoff closes a session that handed off: it has no report of its own.
func (s *session) endHandoff(start time.Time, h *handoff) *Result {
	end := s.now()
	s.tree.finish(true, end)
	u := s.usage
	s.emit(Event{Kind: EventSessionDone, Op: s.tree, Notice: "handed off to " + h.agent, Usage: &u, Result: &SessionSummary{
		Turns: s.turn, ToolCalls: s.toolCalls, Duration: end.Sub(start), Status: HandedOff, Source: HandoffTool}})
	return &Result{SessionID: s.id, Turns: s.turn, ToolCalls: s.toolCalls, Usage: s.usage, Messages: s.msgs, Tree: s.tree.Snapshot()}
}

// run runs a request to its answer: one session, and while sessions hand
// off, their destinations. in and l are the first session's.
func (r *Runner) run(ctx context.Context, in Input, l *link) *Result {
	res, h := r.runOne(ctx, in, l)
	if h == nil {
		return res
	}
	first, total := h, *res
	for h != nil {
		dest := r.Agents[h.agent] // checked when the router called
		next := Input{Agent: dest, Format: in.Format, History: in.History, Prompt: routedPrompt(in.Prompt, h.message), Files: in.Files, Tools: in.Tools,
			Observer: in.Observer, Approver: in.Approver, Elicitor: in.Elicitor, SessionID: h.session + ">" + h.agent}
		if l != nil && dest != nil {
			next.Format = subFormat(dest)
		}
		res, h = r.runOne(ctx, next, &link{path: h.path, call: h.call, op: h.op})
		total.Turns += res.Turns
		total.ToolCalls += res.ToolCalls
		total.Usage.Add(res.Usage)
		total.Report, total.Messages, total.Err = res.Report, res.Messages, res.Err
	}
	total.Tree = first.root.Snapshot()
	return &total
}

// routedPrompt is the user's prompt with the router's note after it.
func routedPrompt(prompt, message string) string {
	if message == "" {
		return prompt
	}
	return strings.TrimRight(prompt, "\n") + "\n\n" + routerNote + message
}
