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
	EventNotice         EventKind = "notice" // something the loop told the model or decided (final turn forced, restriction injected)
	EventFinalReport    EventKind = "final_report"
	EventSessionDone    EventKind = "session_done"
)

// Event is one thing that happened in a session. Headends render them as
// progress; the logger writes each as one line. Only the fields of its kind
// are set. Events never carry credentials, and never the tool arguments or
// results themselves — only their sizes.
type Event struct {
	Kind    EventKind
	Session string
	Agent   string
	Time    time.Time
	Turn    int
	// Op is the node of the session's operation tree the event belongs to.
	Op *Op

	LLM    *LLMCallInfo    // EventLLMCall, EventLLMRetry
	Tool   *ToolInfo       // EventToolStarted, EventToolFinished
	Status *TaskStatus     // EventTaskStatus
	Report *Report         // EventFinalReport
	Notice string          // EventNotice, EventSessionDone (why it ended)
	Usage  *llm.Usage      // EventSessionDone: the session's total
	Final  bool            // EventTurnStarted: only the final report is offered
	Result *SessionSummary // EventSessionDone
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
}

// ToolInfo describes one tool call.
type ToolInfo struct {
	ID          string
	Name        string
	Namespace   string
	ArgBytes    int
	ResultBytes int
	Latency     time.Duration
	OK          bool
	Failure     string // a tools.Failure, or "" when the tool ran
	Err         string // for logs: the underlying error
	Oversize    bool
	Parent      string // the batch call's ID when run inside agent__batch
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
// Observer must be safe for concurrent use). It must not block for long.
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

// Op is a node of a session's operation tree: the session, its turns, and
// within a turn the model call and the tool calls (a batch holds its inner
// calls; a sub-agent call will hold the child session's tree).
type Op struct {
	Kind     string // session | turn | llm | tool
	Name     string
	Start    time.Time
	End      time.Time
	OK       bool
	Children []*Op
	mu       *sync.Mutex // the tree's lock, shared by every node
}

func newTree(name string, now time.Time) *Op {
	return &Op{Kind: "session", Name: name, Start: now, mu: &sync.Mutex{}}
}

// child starts a child operation; safe from concurrent tool goroutines.
func (o *Op) child(kind, name string, now time.Time) *Op {
	c := &Op{Kind: kind, Name: name, Start: now, mu: o.mu}
	o.mu.Lock()
	o.Children = append(o.Children, c)
	o.mu.Unlock()
	return c
}

func (o *Op) finish(ok bool, now time.Time) {
	o.mu.Lock()
	o.End, o.OK = now, ok
	o.mu.Unlock()
}

// Duration is how long the operation took (0 while it runs).
func (o *Op) Duration() time.Duration {
	if o.End.IsZero() {
		return 0
	}
	return o.End.Sub(o.Start)
}
