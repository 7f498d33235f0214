package playground

import (
	"fmt"
	"html/template"
	"strings"
	"sync"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/slack"
)

// sessions keeps, per thread, the operation trees of the sessions that
// answered in it, with the figures the tree itself does not hold: a model
// call's tokens and cost, a tool call's argument size and outcome.
type sessions struct {
	mu      sync.Mutex
	threads map[slack.Thread][]*session
	changed chan struct{} // closed and replaced on every event
}

// session is one top-level session and what its events said about its
// operations, by operation id.
type session struct {
	id      string
	agent   string
	root    *agent.Op
	llm     map[int]agent.LLMCallInfo
	tools   map[int]agent.ToolInfo
	agents  map[int][]string // a sub-agent's session node → its path
	status  string           // the latest task_status
	usage   *totals
	done    bool
	outcome string
}

// totals is a session's usage, once it is done.
type totals struct {
	in, out int
	cost    float64
}

func newSessions() *sessions {
	return &sessions{threads: map[slack.Thread][]*session{}, changed: make(chan struct{})}
}

// observe records one event; it is the bot's Observer.
func (s *sessions) observe(t slack.Thread, e agent.Event) {
	if e.Op == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	root := e.Op.Root()
	var ss *session
	for _, x := range s.threads[t] {
		if x.root == root {
			ss = x
		}
	}
	if ss == nil {
		ss = &session{id: e.Session, agent: e.Agent, root: root, llm: map[int]agent.LLMCallInfo{},
			tools: map[int]agent.ToolInfo{}, agents: map[int][]string{}}
		s.threads[t] = append(s.threads[t], ss)
	}
	switch e.Kind {
	case agent.EventSessionStarted:
		if len(e.Path) > 1 {
			ss.agents[e.Op.ID()] = append([]string(nil), e.Path...)
		}
	case agent.EventLLMCall:
		if e.LLM != nil {
			ss.llm[e.Op.ID()] = *e.LLM
		}
	case agent.EventToolStarted, agent.EventToolFinished:
		if e.Tool != nil {
			ss.tools[e.Op.ID()] = *e.Tool
		}
	case agent.EventTaskStatus:
		if e.Status != nil && len(e.Path) <= 1 {
			ss.status = e.Status.Now
		}
	case agent.EventSessionDone:
		if len(e.Path) <= 1 {
			ss.done = true
			ss.outcome = e.Notice
			if e.Result != nil && e.Result.Status != "" {
				ss.outcome = e.Result.Status
			}
			if e.Usage != nil {
				ss.usage = &totals{in: e.Usage.InputTokens, out: e.Usage.OutputTokens, cost: e.Usage.CostUSD}
			}
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Changed returns a channel closed at the next event.
func (s *sessions) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// html draws the operation trees of a thread's sessions, newest last.
func (s *sessions) html(t slack.Thread) template.HTML {
	s.mu.Lock()
	list := append([]*session(nil), s.threads[t]...)
	s.mu.Unlock()
	if len(list) == 0 {
		return template.HTML(`<p class="pg-empty">No session in this thread yet.</p>`)
	}
	var b strings.Builder
	for _, ss := range list {
		s.mu.Lock()
		snap := ss.root.Snapshot()
		head := fmt.Sprintf("%s · %s", ss.agent, ss.id)
		status, done, outcome, usage := ss.status, ss.done, ss.outcome, ss.usage
		s.mu.Unlock()
		b.WriteString(`<section class="pg-session" data-testid="session" data-session="` + esc(ss.id) + `">`)
		b.WriteString(`<h3>` + esc(head) + `</h3>`)
		switch {
		case done:
			line := "done: " + outcome
			if usage != nil {
				line += fmt.Sprintf(" · %d in / %d out tokens · $%.4f", usage.in, usage.out, usage.cost)
			}
			b.WriteString(`<p class="pg-outcome">` + esc(line) + `</p>`)
		case status != "":
			b.WriteString(`<p class="pg-now">` + esc(status) + `</p>`)
		}
		b.WriteString(`<ul class="pg-tree">`)
		s.mu.Lock()
		s.node(&b, ss, snap)
		s.mu.Unlock()
		b.WriteString(`</ul></section>`)
	}
	return template.HTML(b.String())
}

// node writes one operation and its children; s.mu held.
func (s *sessions) node(b *strings.Builder, ss *session, n *agent.OpSnapshot) {
	state := "running"
	if !n.End.IsZero() {
		state = "ok"
		if !n.OK {
			state = "failed"
		}
	}
	fmt.Fprintf(b, `<li class="pg-op pg-%s pg-%s" data-kind="%s"><span class="pg-kind">%s</span> <span class="pg-name">%s</span>`,
		esc(n.Kind), state, esc(n.Kind), esc(n.Kind), esc(label(ss, n)))
	var facts []string
	if info, ok := ss.llm[n.ID]; ok && n.Kind == "llm" {
		facts = append(facts, fmt.Sprintf("%d in / %d out tokens", info.Usage.InputTokens, info.Usage.OutputTokens),
			fmt.Sprintf("$%.4f", info.Usage.CostUSD), dur(info.Latency))
		if info.Err != "" {
			facts = append(facts, info.Err)
		}
	}
	if info, ok := ss.tools[n.ID]; ok && n.Kind == "tool" {
		facts = append(facts, fmt.Sprintf("args %d B", info.ArgBytes))
		if !n.End.IsZero() {
			out := "ok"
			if !info.OK {
				out = "failed"
				if info.Failure != "" {
					out = info.Failure
				}
			}
			facts = append(facts, dur(info.Latency), out, fmt.Sprintf("result %d B", info.ResultBytes))
		}
	} else if n.Kind != "llm" && !n.End.IsZero() {
		facts = append(facts, dur(n.Duration()))
	}
	if len(facts) > 0 {
		b.WriteString(` <span class="pg-facts">` + esc(strings.Join(facts, " · ")) + `</span>`)
	}
	if len(n.Children) > 0 {
		b.WriteString(`<ul>`)
		for _, c := range n.Children {
			s.node(b, ss, c)
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(`</li>`)
}

// label names an operation: a sub-agent's session by its path.
func label(ss *session, n *agent.OpSnapshot) string {
	if p, ok := ss.agents[n.ID]; ok {
		return strings.Join(p, " › ")
	}
	return n.Name
}

func dur(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func esc(s string) string { return template.HTMLEscapeString(s) }
