package agent

import (
	"sync"
	"time"

	"github.com/slackbot/slackbot/llm"
)

// EventKind names what happened in a session.
type EventKind string

// Event kinds, in the order a session emits them.
const (
	EventSessionStarted EventKind = "session_started"
	EventTurnStarted    EventKind = "turn_started"
	EventLLMRetry       EventKind = "llm_retry"
	EventLLMCall        EventKind = "llm_call"
	EventToolStarted    EventKind = "tool_started"
	EventToolFinished   EventKind = "tool_finished"
	EventTaskStatus     EventKind = "task_status"
	EventWaiting        EventKind = "waiting"               // the session waits on a person (an approval, a form); Wait says for whom and why
	EventResumed        EventKind = "resumed"               // the wait of the EventWaiting with the same Wait.ID is over
	EventNotice         EventKind = "notice"                // something the loop told the model or decided (final turn forced, restriction injected)
	EventReportRejected EventKind = "final_report_rejected" // an answer the loop refused, and why (the model is told and may retry)
	EventFinalReport    EventKind = "final_report"
	EventSessionDone    EventKind = "session_done"
)

// Event is one thing that happened in a session. Headends render them as
// progress; the logger writes each as one line. Only the fields of its kind
// are set. Events never carry credentials, and never the tool arguments or
// results themselves — only their sizes and, for arguments, a short
// redacted summary (ToolInfo.Args).
type Event struct {
	Kind    EventKind
	Session string
	Agent   string
	Time    time.Time
	Turn    int
	// Path is the chain of agents from the top-level session down to the
	// one that emitted the event, that one last: ["tester"] for a top-level
	// session, ["planner", "researcher"] for the sub-agent researcher called
	// by planner, ["triage", "billing"] for billing after the router triage
	// handed off to it. It must not be modified.
	Path []string
	// Parent is the id of the tool call (agent__<name> or
	// router__handoff-to) in the session above that started this one; ""
	// for the top-level session. A headend showing progress tells nested
	// sessions by it; the run's answer is the Report that Runner.Run
	// returns, not any EventFinalReport.
	Parent string
	// Op is the node of the session's operation tree the event belongs to.
	// It is live: read it with Op.Snapshot (Op.Root().Snapshot() for the
	// whole tree), which is safe while tools still run.
	Op *Op

	LLM    *LLMCallInfo    // EventLLMCall, EventLLMRetry
	Tool   *ToolInfo       // EventToolStarted, EventToolFinished
	Status *TaskStatus     // EventTaskStatus
	Report *Report         // EventFinalReport
	Notice string          // EventNotice, EventReportRejected (why), EventSessionDone (why it ended, in words), EventResumed (the decision: "github__merge approved by U1 for this thread")
	Err    string          // EventSessionDone: the technical cause of an abnormal end, for the log only
	Warn   bool            // EventNotice: worth a warning in the log (a report in the wrong format, normalised)
	Usage  *llm.Usage      // EventSessionDone: the session's total
	Final  bool            // EventTurnStarted: only the final report is offered
	Result *SessionSummary // EventSessionDone
	Wait   *WaitInfo       // EventWaiting, EventResumed
}

// WaitInfo is what a session waits on a person for. A headend shows it
// (the agent session suspended, a "Waiting for …" task) until the
// EventResumed with the same ID; the time waited does not count against
// the session's duration.
type WaitInfo struct {
	ID string
	// Who are the Slack user ids that may answer, the asker first; empty
	// when anyone the headend allows may.
	Who []string
	// What is the wait in words, for people: "approval of github
	// create_issue". Never the call's arguments.
	What string
	// Outcome, on EventResumed: "approved", "denied", "timed out",
	// "answered", "declined", "cancelled".
	Outcome string
}

// LLMCallInfo describes one model call.
type LLMCallInfo struct {
	Provider     string
	Model        string
	Usage        llm.Usage
	Latency      time.Duration
	FinishReason llm.FinishReason
	ToolCalls    int
	TextBytes    int
	Err          string // EventLLMRetry: what failed; EventLLMCall: set when every attempt failed
	Wait         time.Duration
	// Purpose is "" for the session's own turns and PurposeExtraction for
	// the calls that read a stored tool result.
	Purpose string
}

// ToolInfo describes one tool call.
type ToolInfo struct {
	ID        string
	Name      string
	Namespace string
	// Index is the call's position among its turn's calls (or its
	// batch's): calls run at once, so their events may come in any order.
	Index    int
	ArgBytes int
	// Args is what the call was asked, for people watching it: one line of
	// at most 200 characters naming the argument values, secret-looking
	// keys masked, credentials redacted.
	Args        string
	ResultBytes int
	Latency     time.Duration
	OK          bool
	Failure     string // a tools.Failure, or "" when the tool ran
	Err         string // for logs: the underlying error
	Oversize    bool
	Parent      string // the batch call's ID when run inside agent__batch
	// Remote is the tool as its source knows it ("github:search_code"),
	// for calls the shared tools ran.
	Remote string
	// Queue is the queue the call waited in ("" for none) and QueueWait
	// how long it waited there for its turn.
	Queue     string
	QueueWait time.Duration
	// Cached is set when the result came from the response cache.
	Cached bool
	// Status, when set, says in words what the call does, for a person
	// watching ("Looking for a tool to list the issues of a repository");
	// it may quote model output.
	Status string
}

// SessionSummary closes a session.
type SessionSummary struct {
	Turns     int
	ToolCalls int
	Duration  time.Duration
	Status    string
	Source    string
}

// Observer receives a session's events, synchronously and in order, from
// the session's goroutines (tool events may come from several at once, so an
// Observer must be safe for concurrent use). It is never called with a lock
// of the session held, so a slow observer delays only the goroutine that
// emitted the event; each event's pointers are its own copies, never
// changed afterwards.
type Observer func(Event)

// Tee returns an Observer that hands each event to every non-nil observer.
func Tee(obs ...Observer) Observer {
	var live []Observer
	for _, o := range obs {
		if o != nil {
			live = append(live, o)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return func(e Event) {
		for _, o := range live {
			o(e)
		}
	}
}

// Op is a live node of a session's operation tree: the session, its turns,
// and within a turn the model call and the tool calls (a batch holds its
// inner calls; a sub-agent's session, or a router's destination, hangs
// under the call that started it, in the same tree). The session changes
// nodes while tools run in parallel, so an Op is read only through its
// methods, which take the tree's lock: Snapshot copies the node and
// everything under it as it is at that moment.
type Op struct {
	mu       *sync.Mutex // the tree's lock, shared by every node
	id       int
	next     *int // the tree's id counter, under mu
	parent   *Op
	kind     string
	name     string
	start    time.Time
	end      time.Time
	ok       bool
	children []*Op
}

// OpSnapshot is an Op and its subtree at one moment: a copy that nothing
// changes afterwards, safe to keep and to read from any goroutine.
type OpSnapshot struct {
	ID       int    // unique within the tree; the top-level session is 0
	Kind     string // session | turn | llm | tool (a sub-agent's session sits under its call)
	Name     string
	Start    time.Time
	End      time.Time // zero while the operation runs
	OK       bool
	Children []*OpSnapshot
}

// Duration is how long the operation took (0 while it runs).
func (s *OpSnapshot) Duration() time.Duration {
	if s.End.IsZero() {
		return 0
	}
	return s.End.Sub(s.Start)
}

func newTree(name string, now time.Time) *Op {
	return &Op{kind: "session", name: name, start: now, mu: &sync.Mutex{}, next: new(int)}
}

// child starts a child operation; safe from concurrent tool goroutines.
func (o *Op) child(kind, name string, now time.Time) *Op {
	o.mu.Lock()
	defer o.mu.Unlock()
	*o.next++
	c := &Op{kind: kind, name: name, start: now, mu: o.mu, next: o.next, id: *o.next, parent: o}
	o.children = append(o.children, c)
	return c
}

func (o *Op) finish(ok bool, now time.Time) {
	o.mu.Lock()
	o.end, o.ok = now, ok
	o.mu.Unlock()
}

// ended reports whether the node has finished.
func (o *Op) ended() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.end.IsZero()
}

func (o *Op) rename(name string) {
	o.mu.Lock()
	o.name = name
	o.mu.Unlock()
}

// ID identifies the node within its tree (the top-level session is 0).
func (o *Op) ID() int { return o.id }

// Parent returns the node o hangs under: the session for a turn, the turn
// for a model or tool call, the batch for its inner calls, the call for a
// sub-agent's session; nil for the top-level session. It never changes.
func (o *Op) Parent() *Op { return o.parent }

// Kind is session, turn, llm or tool; it never changes.
func (o *Op) Kind() string { return o.kind }

// Root returns the root of the tree o belongs to: the top-level session's
// node, also for the nodes of sub-agents' sessions.
func (o *Op) Root() *Op {
	for o.parent != nil {
		o = o.parent
	}
	return o
}

// Snapshot returns a copy of o and its subtree as they are now.
func (o *Op) Snapshot() *OpSnapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.snapshot()
}

func (o *Op) snapshot() *OpSnapshot {
	s := &OpSnapshot{ID: o.id, Kind: o.kind, Name: o.name, Start: o.start, End: o.end, OK: o.ok}
	if len(o.children) > 0 {
		s.Children = make([]*OpSnapshot, len(o.children))
		for i, c := range o.children {
			s.Children[i] = c.snapshot()
		}
	}
	return s
}
