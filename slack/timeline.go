package slack

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/tools"
)

// A streamed session shows its work as tasks Slack draws as a timeline (or
// a plan): each model turn of the session, each tool call (a batch's inner
// calls each), each sub-agent and each reading of a large result is one
// task with an id that never changes, a title in words, a status that
// only moves forward (pending → in_progress → complete or error), what it
// was asked (details) and how it went (output). The model's own progress
// line (agent__task_status) is the plan's title. A timeline only records:
// the stream takes what changed since it last looked, so one append
// carries every change of its interval.

// Bounds Slack puts on a task's text, in characters.
const (
	maxTaskTitle = 100
	maxTaskLine  = 256
)

// task is one entry of the timeline.
type task struct {
	id      string
	title   string
	status  slackapi.TaskCardStatus
	details string
	output  string
	start   time.Time
	// Where the task stands among those first shown together: by turn,
	// then by the call's place in the turn (the turn itself first), a
	// sub-agent's calls after its own, then by arrival.
	turn, index, depth, seq int
}

// before orders tasks first shown in the same append.
func (t *task) before(u *task) bool {
	if t.turn != u.turn {
		return t.turn < u.turn
	}
	if t.index != u.index {
		return t.index < u.index
	}
	if t.depth != u.depth {
		return t.depth < u.depth
	}
	return t.seq < u.seq
}

// chunk is the task as a task_update chunk. Its words are the model's and
// the tools' (a tool's name, what it was asked): escaped, they cannot be
// read as Slack markup — no <!channel>, no <@U…> ping, no disguised link.
func (t task) chunk() slackapi.TaskUpdateChunk {
	c := slackapi.NewTaskUpdateChunk(t.id, escape(t.title))
	c.Status, c.Details, c.Output = t.status, escape(t.details), escape(t.output)
	return c
}

// timeline turns a session's events into tasks. Its methods are safe for
// concurrent use: tool events come from several goroutines.
type timeline struct {
	mu      sync.Mutex
	tasks   []*task
	byKey   map[string]*task // by the event that opened it
	changed map[*task]bool   // since the last changes
	plan    string
	planNew bool
	turn    map[string]*task // each session's turn task in progress
	turns   int              // the top-level session's turns so far
	calls   map[string]*task // the top-level session's call tasks, by call id
	// A turn's calls start at once, in any order: their tasks are held
	// until every call the model asked for has started, then shown
	// together, in the model's order — a call that fails at once stays
	// held with the others, so it cannot jump the queue. Calls that never
	// start (over the turn's limit) cannot hold the rest for longer than
	// holdGrace.
	expect    int
	held      []*task
	heldSince time.Time
	waits     int // waits on a person still open
	// names names the people a wait is on; nil shows their ids.
	names func(*agent.WaitInfo) []string
}

func newTimeline() *timeline {
	return &timeline{byKey: map[string]*task{}, changed: map[*task]bool{}, turn: map[string]*task{}, calls: map[string]*task{}}
}

// Built-ins that are the session's bookkeeping, not work to show: the
// answer itself, the progress line (shown as the plan's title), a batch
// (its inner calls are shown), finish.
var unshown = map[string]bool{agent.FinalReportTool: true, agent.TaskStatusTool: true, agent.BatchTool: true, agent.FinishTool: true}

// observe records one event.
func (tl *timeline) observe(e agent.Event) {
	title := ""
	if e.Kind == agent.EventWaiting && e.Wait != nil { // named before the lock: a name may be looked up
		who := e.Wait.Who
		if tl.names != nil {
			who = tl.names(e.Wait)
		}
		title = waitTitle(who)
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	top := len(e.Path) <= 1
	switch e.Kind {
	case agent.EventTurnStarted:
		if top { // a sub-agent's turns are its task's
			tl.turnStarted(e)
		}
	case agent.EventLLMCall:
		if top && e.LLM != nil && e.LLM.Purpose == "" {
			tl.modelAnswered(e)
		}
	case agent.EventToolStarted:
		if e.Tool != nil {
			tl.toolStarted(e, top)
		}
	case agent.EventToolFinished:
		if e.Tool != nil {
			tl.toolFinished(e)
		}
	case agent.EventWaiting:
		if e.Wait != nil {
			tl.waitOn(e.Wait, title, e.Time)
		}
	case agent.EventResumed:
		if e.Wait != nil {
			tl.waitOver(e.Wait)
		}
	case agent.EventSessionDone:
		if top && e.Err != "" { // broken off: what was still running did not finish
			tl.settleLocked(false, unfinished)
		}
	case agent.EventTaskStatus:
		if top && e.Status != nil && e.Status.Now != "" {
			if p := clipLine(e.Status.Now, maxTaskLine); p != tl.plan {
				tl.plan, tl.planNew = p, true
			}
		}
	}
}

// turnStarted ends the session's turn before and opens this one; tl.mu held.
func (tl *timeline) turnStarted(e agent.Event) {
	tl.release()
	tl.endTurn(e.Session, true, "")
	title := "Thinking"
	if e.Turn > 1 {
		title = fmt.Sprintf("Thinking (step %d)", e.Turn)
	}
	if e.Final {
		title = "Writing the answer"
	}
	tl.turns = e.Turn
	t := tl.open(fmt.Sprintf("turn:%s/%d", e.Session, e.Turn), title, "", e.Time)
	t.turn, t.index = e.Turn, -1
	tl.turn[e.Session] = t
}

// modelAnswered ends the turn's task with what the model asked for; the
// tool calls it asked for are held until all have started; tl.mu held.
func (tl *timeline) modelAnswered(e agent.Event) {
	if e.LLM.Err != "" {
		tl.endTurn(e.Session, false, "The model did not answer")
		return
	}
	out := "Answered"
	if n := e.LLM.ToolCalls; n > 0 {
		out = fmt.Sprintf("Asked for %d tool call%s", n, plural(n))
		tl.expect = n
	}
	tl.endTurn(e.Session, true, out)
}

// toolStarted opens a call's task, a sub-agent's call under its caller's;
// a search says what it looks for; tl.mu held.
func (tl *timeline) toolStarted(e agent.Event, top bool) {
	if top && e.Tool.Parent == "" && tl.expect > 0 {
		tl.expect--
		defer func() {
			if tl.expect == 0 {
				tl.release()
			}
		}()
	}
	if unshown[e.Tool.Name] {
		return
	}
	title := toolTitle(e.Tool.Name)
	if e.Tool.Status != "" {
		title = clipLine(e.Tool.Status, maxTaskTitle)
	}
	if !top && !isSubAgent(e.Tool.Name) {
		title = clipLine(strings.Join(e.Path[1:], " › ")+" › "+title, maxTaskTitle)
	}
	t := tl.open(toolKey(e), title, e.Tool.Args, e.Time)
	if tl.expect > 0 {
		delete(tl.changed, t)
		if len(tl.held) == 0 {
			tl.heldSince = time.Now()
		}
		tl.held = append(tl.held, t)
	}
	t.turn, t.index = tl.turns, e.Tool.Index
	if top {
		tl.calls[e.Tool.ID] = t
	} else if p := tl.calls[e.Parent]; p != nil {
		t.turn, t.index, t.depth = p.turn, p.index, len(e.Path)-1
	}
}

// toolFinished ends a call's task with its outcome; tl.mu held.
func (tl *timeline) toolFinished(e agent.Event) {
	t := tl.byKey[toolKey(e)]
	if t == nil || done(t.status) {
		return
	}
	t.status, t.output = slackapi.TaskCardStatusComplete, toolOutcome(e.Tool)
	if !e.Tool.OK {
		t.status = slackapi.TaskCardStatusError
	}
	if !slices.Contains(tl.held, t) { // a held task is shown, as it is by then, on its release
		tl.changed[t] = true
	}
}

// holdGrace is the longest a turn's calls are held for those of its calls
// that have not started.
const holdGrace = 250 * time.Millisecond

// open adds a task in progress.
func (tl *timeline) open(key, title, details string, at time.Time) *task {
	if t := tl.byKey[key]; t != nil {
		return t
	}
	t := &task{id: fmt.Sprintf("task-%d", len(tl.tasks)+1), seq: len(tl.tasks), title: clipLine(title, maxTaskTitle),
		status: slackapi.TaskCardStatusInProgress, details: clipLine(details, maxTaskLine), start: at}
	tl.tasks = append(tl.tasks, t)
	tl.byKey[key] = t
	tl.changed[t] = true
	return t
}

// release shows the tasks held back for the rest of their turn's calls.
func (tl *timeline) release() {
	for _, t := range tl.held {
		tl.changed[t] = true
	}
	tl.held, tl.expect = nil, 0
}

// endTurn ends session's turn task, if one is open.
func (tl *timeline) endTurn(session string, ok bool, output string) {
	t := tl.turn[session]
	if t == nil {
		return
	}
	delete(tl.turn, session)
	if done(t.status) {
		return
	}
	t.status = slackapi.TaskCardStatusComplete
	if !ok {
		t.status = slackapi.TaskCardStatusError
	}
	if output != "" {
		t.output = output
	}
	tl.changed[t] = true
}

// changes is what changed since the last call: the tasks, in the order
// the model asked for them (calls that run at once start in any order),
// and the plan's title when it changed (planNew).
func (tl *timeline) changes() (tasks []task, plan string, planNew bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if len(tl.held) > 0 && time.Since(tl.heldSince) >= holdGrace {
		tl.release()
	}
	var changed []*task
	for _, t := range tl.tasks {
		if tl.changed[t] {
			changed = append(changed, t)
		}
	}
	sort.SliceStable(changed, func(i, j int) bool { return changed[i].before(changed[j]) })
	for _, t := range changed {
		tasks = append(tasks, *t)
	}
	clear(tl.changed)
	plan, planNew = tl.plan, tl.planNew
	tl.planNew = false
	return tasks, plan, planNew
}

// settle ends every task still open, as complete when the session
// answered and as error otherwise (with why in output), so that no
// timeline is left "in progress" whatever way the session ended.
func (tl *timeline) settle(ok bool, why string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.settleLocked(ok, why)
}

// unfinished is the output of a task a session broke off (stopped,
// interrupted, failed) while it was in progress.
const unfinished = "Not finished"

// settleLocked is settle with tl.mu held.
func (tl *timeline) settleLocked(ok bool, why string) {
	tl.release()
	for _, t := range tl.tasks {
		if done(t.status) {
			continue
		}
		t.status = slackapi.TaskCardStatusComplete
		if !ok {
			t.status, t.output = slackapi.TaskCardStatusError, clipLine(why, maxTaskLine)
		}
		tl.changed[t] = true
	}
	clear(tl.turn)
	tl.waits = 0
}

// running is the first n tasks not finished, for the stream's record.
func (tl *timeline) running(n int) []state.OpenTask {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []state.OpenTask
	for _, t := range tl.tasks {
		if !done(t.status) && len(out) < n {
			out = append(out, state.OpenTask{ID: t.id, Title: t.title})
		}
	}
	return out
}

// all is every task as it is now.
func (tl *timeline) all() []task {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := make([]task, len(tl.tasks))
	for i, t := range tl.tasks {
		out[i] = *t
	}
	return out
}

func done(s slackapi.TaskCardStatus) bool {
	return s == slackapi.TaskCardStatusComplete || s == slackapi.TaskCardStatusError
}

func toolKey(e agent.Event) string { return "tool:" + e.Session + "/" + e.Tool.ID }

// isSubAgent reports whether a call is a sub-agent's (agent__<name>).
func isSubAgent(name string) bool {
	return strings.HasPrefix(name, "agent__") && !unshown[name]
}

// toolTitle is a tool's name made readable: "github__search_code" →
// "Search code", a sub-agent by its name, tool_output as what it does.
func toolTitle(name string) string {
	switch {
	case name == agent.ToolOutputTool:
		return "Reading a large result"
	case name == agent.HandoffTool:
		return "Handing over to another agent"
	case isSubAgent(name):
		return clipLine(strings.TrimPrefix(name, "agent__"), maxTaskTitle)
	}
	if i := strings.LastIndex(name, "__"); i >= 0 && i+2 < len(name) {
		name = name[i+2:] // the tool, not the server offering it
	}
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ':' || unicode.IsSpace(r):
			r = ' '
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteRune(' ')
			r = unicode.ToLower(r)
		case unicode.IsUpper(r):
			r = unicode.ToLower(r)
		case !unicode.IsPrint(r):
			continue
		}
		b.WriteRune(r)
		prev = r
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if s == "" {
		return "A tool"
	}
	r, n := utf8.DecodeRuneInString(s)
	return clipLine(string(unicode.ToUpper(r))+s[n:], maxTaskTitle)
}

// failureWords says how a call failed, without its error's text (a tool's
// words, possibly a server's internals).
var failureWords = map[tools.Failure]string{
	tools.FailUnknownTool: "Failed: no such tool",
	tools.FailBadJSON:     "Failed: the arguments were not JSON",
	tools.FailInvalidArgs: "Failed: invalid arguments",
	tools.FailTimeout:     "Failed: timed out",
	tools.FailCanceled:    "Stopped",
	tools.FailError:       "Failed",
	tools.FailPanic:       "Failed: the tool crashed",
	tools.FailClosed:      "Failed: the bot is shutting down",
}

// toolOutcome is a finished call's output line.
func toolOutcome(t *agent.ToolInfo) string {
	if !t.OK {
		if w := failureWords[tools.Failure(t.Failure)]; w != "" {
			return w
		}
		return "Failed"
	}
	out := "Done"
	switch {
	case t.Cached:
		out = "Done (from the cache)"
	case t.Oversize:
		out = fmt.Sprintf("Done: a large result (%s) kept for reading", size(t.ResultBytes))
	}
	if t.Latency >= time.Second {
		out += fmt.Sprintf(" in %s", t.Latency.Round(100*time.Millisecond))
	}
	return out
}

// size writes n bytes as people read sizes.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// clipLine makes s one line of at most n characters, without credentials.
func clipLine(s string, n int) string {
	s = redact.String(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// waitKey is the task of a session waiting for its turn.
const waitKey = "wait"

// wait shows that the session waits for its turn, as a pending task.
func (tl *timeline) wait(title string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	t := tl.open(waitKey, title, "", time.Now())
	if t.status == slackapi.TaskCardStatusInProgress {
		t.status = slackapi.TaskCardStatusPending
	}
}

// endWait completes the waiting task, if there is one.
func (tl *timeline) endWait() {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if t := tl.byKey[waitKey]; t != nil && !done(t.status) {
		t.status, t.output = slackapi.TaskCardStatusComplete, "Started"
		tl.changed[t] = true
	}
}

// again marks tasks to be sent again, with the plan's title when planNew:
// an append that failed.
func (tl *timeline) again(tasks []task, planNew bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, c := range tasks {
		for _, t := range tl.tasks {
			if t.id == c.id {
				tl.changed[t] = true
			}
		}
	}
	tl.planNew = tl.planNew || planNew
}
