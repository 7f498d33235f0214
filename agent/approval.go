package agent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// Approvals: a shared tool whose Approval is set runs only after a person
// says yes. The session asks its Input's Approver (the Slack headend, the
// terminal); the calls of one turn that need approval are asked together,
// each decided on its own, while the turn's other calls run. The clock of
// the session (and of the sessions above it) stands still while it waits;
// approval_timeout bounds the wait. A call denied, or not decided in
// time, is never run again in the session: the same tool with the same
// arguments gets the denial at once.

// Decision outcomes, as EventResumed's Wait.Outcome says them.
const (
	OutcomeApproved  = "approved"
	OutcomeDenied    = "denied"
	OutcomeTimedOut  = "timed out"
	OutcomeCancelled = "cancelled"
)

// What the model is told about a call that did not run.
const (
	deniedMessage    = "The user denied this call; do not retry it."
	timedOutMessage  = "No one approved this call in time; do not retry it."
	noApproverMsg    = "This call needs a person's approval and no one can be asked here, so it was not run; do not retry it."
	deniedAgainMsg   = "This call was denied earlier in this session and was not run again; do not retry it."
	cancelledMessage = "This call was not run: the request was cancelled while it waited for approval."
)

// Approver asks people whether tool calls may run. One Approver serves a
// request (a Slack thread's question, a terminal run) and every session of
// it, sub-agents included; it must be safe for concurrent use.
type Approver interface {
	// Standing reports whether tool (its full name) was approved for the
	// rest of the thread, or the run, by an earlier decision.
	Standing(ctx context.Context, tool string) bool
	// Deciders is who may decide on a tool whose approvers are these
	// ("asker", user ids, user-group ids): people's ids, the asker first.
	Deciders(approvers []string) []string
	// Approve asks about the calls of req together and waits. It returns
	// one Decision per call, in order; a call still undecided when ctx
	// ends has the zero Decision.
	Approve(ctx context.Context, req ApprovalRequest) []Decision
}

// ApprovalRequest is the calls of one turn that wait for approval.
type ApprovalRequest struct {
	Session string
	Agent   string
	Calls   []PendingCall
	// Deadline is when no decision counts as a denial.
	Deadline time.Time
}

// PendingCall is one call that waits. Arguments are the model's: untrusted
// text, to be shown inert and redacted.
type PendingCall struct {
	ID        string // the wait's id (Event.Wait.ID), unique to this call
	CallID    string // the model's tool-call id
	Tool      string // full name, as offered
	Approval  tools.Approval
	Arguments string
}

// Decision is what a person decided on one call.
type Decision struct {
	Outcome string // OutcomeApproved or OutcomeDenied; "" when undecided
	// Thread approves the tool for the rest of the thread (or run): the
	// Approver keeps it, and Standing reports it.
	Thread bool
	By     string // who decided
	At     time.Time
	// Reason, on a denial no person made, says why; the model is told it.
	Reason string
}

// approvalTimeout is how long a call waits for a decision.
func (r *Runner) approvalTimeout() time.Duration {
	if r.ApprovalTimeout > 0 {
		return r.ApprovalTimeout
	}
	return config.DefaultApprovalTimeout
}

// approvalGate is the decisions of the calls asked together, ready when
// done is closed.
type approvalGate struct {
	done      chan struct{}
	decisions map[*llm.ToolCall]Decision
}

// approvalOf is the tool's Approval when c is a shared tool's call that
// must wait for one, else nil (arguments its schema refuses fail without
// asking anyone).
func (s *session) approvalOf(c *llm.ToolCall) *tools.Approval {
	if s.r.Tools == nil || !s.offered[c.Name] || (s.searchable[c.Name] != nil && !s.isLoaded(c.Name)) {
		return nil // a call that fails anyway is asked about by no one
	}
	return s.r.Tools.Approval(c.Name, c.Arguments)
}

// deniedKey names a call by tool and arguments, whatever their spacing
// and key order.
func deniedKey(c *llm.ToolCall) string {
	args := strings.TrimSpace(c.Arguments)
	var v any
	if json.Unmarshal([]byte(args), &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = string(b)
		}
	}
	return c.Name + "\x00" + args
}

// dropGates forgets the approvals asked for cs once their turn (or
// batch) is over, whether or not each call came to run.
func (s *session) dropGates(cs []*llm.ToolCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		delete(s.gates, c)
	}
}

// askApprovals starts asking, together, about the calls among cs that wait
// for a person; each call's dispatch waits for its decision. Calls that
// need no asking (no approval needed, approved for the thread, denied
// before, no approver) are left to clearance.
func (s *session) askApprovals(ctx context.Context, cs []*llm.ToolCall) {
	s.askApprovalsBy(ctx, cs, s.approvalOf)
}

// approvalNow is the Approval of c, a call about to run. Unlike
// approvalOf it does not depend on tools__search still holding the tool
// loaded: a search running beside the call may evict it after dispatch
// found it loaded, and the call runs all the same.
func (s *session) approvalNow(c *llm.ToolCall) *tools.Approval {
	if s.r.Tools == nil {
		return nil
	}
	return s.r.Tools.Approval(c.Name, c.Arguments)
}

// askApprovalsBy is askApprovals with need telling which calls wait.
func (s *session) askApprovalsBy(ctx context.Context, cs []*llm.ToolCall, need func(*llm.ToolCall) *tools.Approval) {
	ap := s.in.Approver
	if ap == nil {
		return
	}
	var pending []PendingCall
	var whos [][]string
	var asked []*llm.ToolCall
	for _, c := range cs {
		a := need(c)
		if a == nil || s.wasDenied(c) || ap.Standing(ctx, c.Name) {
			continue
		}
		pending = append(pending, PendingCall{ID: s.id + "/" + c.ID + "-" + randomID(2), CallID: c.ID, Tool: c.Name, Approval: *a, Arguments: c.Arguments})
		whos = append(whos, ap.Deciders(a.Approvers))
		asked = append(asked, c)
	}
	if len(pending) == 0 {
		return
	}
	g := &approvalGate{done: make(chan struct{}), decisions: map[*llm.ToolCall]Decision{}}
	s.mu.Lock()
	if s.gates == nil {
		s.gates = map[*llm.ToolCall]*approvalGate{}
	}
	for _, c := range asked {
		s.gates[c] = g
	}
	s.mu.Unlock()
	resume := s.clock.pause()
	for i, p := range pending {
		s.emit(Event{Kind: EventWaiting, Op: s.turnOp, Wait: &WaitInfo{ID: p.ID, Who: whos[i], What: waitWhat(p.Approval)}})
	}
	timeout := s.r.approvalTimeout()
	go func() {
		defer close(g.done)
		defer resume()
		actx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		got := ap.Approve(actx, ApprovalRequest{Session: s.id, Agent: s.a.Name, Calls: pending, Deadline: time.Now().Add(timeout)})
		for i, p := range pending {
			var d Decision
			if i < len(got) {
				d = got[i]
			}
			switch {
			case d.Outcome == OutcomeApproved || d.Outcome == OutcomeDenied:
			case ctx.Err() != nil:
				d.Outcome = OutcomeCancelled
			default:
				d.Outcome = OutcomeTimedOut
			}
			if d.At.IsZero() {
				d.At = s.now()
			}
			g.decisions[asked[i]] = d
			s.emit(Event{Kind: EventResumed, Op: s.turnOp, Wait: &WaitInfo{ID: p.ID, Who: whos[i], What: waitWhat(p.Approval), Outcome: d.Outcome},
				Notice: decisionNote(p, d)})
		}
	}()
}

// waitWhat is a wait in words: "approval of github create_issue".
func waitWhat(a tools.Approval) string {
	return "approval of " + a.Server + " " + a.Tool
}

// decisionNote is a decision in words, for the log and the session's
// record: "github__create_issue approved by U1 for this thread".
func decisionNote(p PendingCall, d Decision) string {
	note := p.Tool + " " + d.Outcome
	if d.By != "" {
		note += " by " + d.By
	}
	if d.Thread {
		note += " for this thread"
	}
	return note
}

// clearance decides whether c, a call about to run, may: "" when it may,
// else what the model is told.
func (s *session) clearance(ctx context.Context, c *llm.ToolCall) (string, error) {
	if s.approvalNow(c) == nil {
		return "", nil
	}
	if s.wasDenied(c) {
		return deniedAgainMsg, errDenied
	}
	ap := s.in.Approver
	if ap == nil {
		s.deny(c)
		s.emit(Event{Kind: EventNotice, Notice: c.Name + " denied: it needs approval and no one can be asked"})
		return noApproverMsg, errDenied
	}
	s.mu.Lock()
	g := s.gates[c]
	s.mu.Unlock()
	if g == nil {
		if ap.Standing(ctx, c.Name) {
			return "", nil
		}
		s.askApprovalsBy(ctx, []*llm.ToolCall{c}, s.approvalNow) // a call no turn asked about
		s.mu.Lock()
		g = s.gates[c]
		s.mu.Unlock()
		switch {
		case g == nil && s.wasDenied(c):
			return deniedAgainMsg, errDenied
		case g == nil:
			return "", nil // approved for the thread meanwhile
		}
	}
	<-g.done
	s.mu.Lock()
	d := g.decisions[c]
	delete(s.gates, c)
	s.mu.Unlock()
	switch d.Outcome {
	case OutcomeApproved:
		return "", nil
	case OutcomeDenied:
		s.deny(c)
		if d.Reason != "" {
			return d.Reason + " The call was not run; do not retry it.", errDenied
		}
		return deniedMessage, errDenied
	case OutcomeTimedOut:
		s.deny(c)
		return timedOutMessage, errDenied
	}
	return cancelledMessage, errDenied
}

var errDenied = errors.New("not approved")

// failNotApproved is ToolInfo.Failure for a call no one approved.
const failNotApproved = "not_approved"

func (s *session) wasDenied(c *llm.ToolCall) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.denied[deniedKey(c)]
}

func (s *session) deny(c *llm.ToolCall) {
	s.mu.Lock()
	if s.denied == nil {
		s.denied = map[string]bool{}
	}
	s.denied[deniedKey(c)] = true
	s.mu.Unlock()
}

// isLoaded reports whether tools__search loaded name for the session.
func (s *session) isLoaded(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.loaded.order, name)
}
