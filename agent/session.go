// Package agent runs agent sessions: the loop that calls a model with the
// agent's tools, executes the tool calls it makes, and repeats until the
// model delivers its answer with agent__final_report — or until limits force
// the end, in which case the loop writes a report itself. Every session ends
// with exactly one Report. A session emits Events that headends render as
// progress and the logger writes as lines.
package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

// Runner runs sessions. It holds what sessions share — model providers and
// tools — and is safe for concurrent use.
type Runner struct {
	// Providers are the configured model endpoints by name.
	Providers map[string]llm.Provider
	// Tools are the shared tools (MCP, REST); nil means none. The tools
	// each agent is offered are computed once and cached until the tool list
	// changes (Tools.Generation), so Tools must not be replaced after the
	// first Run: build a new Runner instead. The cache holds one entry per
	// agent name and format, replaced when an agent of that name arrives
	// from a reloaded configuration, so it does not grow with reloads.
	Tools *tools.Orchestrator
	// Agents are the configured agents by name, where an agent's
	// sub-agents (agent__<name>) and router destinations are found; those
	// missing here are not offered.
	Agents map[string]*config.Agent
	// MaxDepth bounds how deep sessions nest: a top-level session is depth
	// 1, each sub-agent call and each router handoff one more. 0 means
	// config.DefaultMaxAgentDepth.
	MaxDepth int
	// Log receives one line per event; nil means no logging.
	Log *zap.Logger
	// ToolOutput keeps the tool results too large for a model, per
	// session, for the tool_output tool; nil cuts them to the agent's
	// tool_output.max_bytes instead.
	ToolOutput *tooloutput.Run
	// Backoff overrides the retry backoff between model attempts (tests).
	Backoff func(attempt int) time.Duration
	// Now overrides the clock (tests).
	Now func() time.Time
	// ApprovalTimeout bounds the wait for a person's approval of a tool
	// call; 0 means config.DefaultApprovalTimeout.
	ApprovalTimeout time.Duration

	toolSets sync.Map // toolSetKey → *toolSet (which records the *config.Agent it was built for)
}

// Input is one request to an agent.
type Input struct {
	Agent *config.Agent
	// Format overrides the agent's output format ("" keeps it); the Slack
	// headend fixes slack-block-kit.
	Format string
	// History is the conversation so far (user and assistant messages),
	// oldest first; Prompt is the new user message.
	History []llm.Message
	Prompt  string
	// Files are the files attached to Prompt, downloaded: they join the
	// prompt's turn as pictures, texts (a text too long for the context
	// goes in the session's tool_output store, behind a handle) or a line
	// naming each (see attach.Prepare).
	Files []attach.File
	// Tools are offered to this session alone, beside its agent's tools
	// (see SessionTool).
	Tools []SessionTool
	// Observer receives the session's events (optional).
	Observer Observer
	// Approver is asked about the tool calls that need a person's
	// approval; nil denies them, saying no one can be asked.
	Approver Approver
	// Elicitor answers the questions tools ask mid-call (MCP elicitation)
	// by asking the person behind the session; nil declines them.
	Elicitor tools.Elicitor
	// SessionID names the session in events and logs ("" makes one up).
	SessionID string
	// Started, when set, is when the session's clock started: work the
	// caller did for it first (reading a Slack thread) counts against
	// max_session_duration. Zero starts the clock when Run is called.
	Started time.Time

	// nonce, when set, is the session's final-answer nonce instead of a
	// random one: the read-grep extraction tells its model the nonce of
	// its extraction, and the session must accept that wrapper.
	nonce string
}

// Result is the outcome of a session. Report is never nil. When a router
// hands off, the Result is the whole run's: the destination's Report and
// Messages, the first session's SessionID and Tree (the destination's
// session sits under the handoff call), and Turns, ToolCalls and Usage
// summed over the chain. Usage includes the sub-agents' too.
type Result struct {
	SessionID string
	Report    *Report
	Turns     int
	ToolCalls int
	Usage     llm.Usage
	Messages  []llm.Message // the whole conversation, system prompt first
	Tree      *OpSnapshot   // the operation tree as the session left it
	// Err is why the session ended abnormally (cancelled, model
	// unreachable); the synthetic Report says the same to the user.
	Err error
}

// Run runs one session to its end and returns its result. It never returns
// without a report, and it returns promptly when ctx is cancelled or the
// agent's max_session_duration has passed.
func (r *Runner) Run(ctx context.Context, in Input) *Result {
	return r.run(ctx, in, nil)
}

// runOne runs one session, which l ties to the session that started it
// (nil for a top-level one). When the session hands off, the Result has no
// Report and the handoff says where the run goes on.
func (r *Runner) runOne(ctx context.Context, in Input, l *link) (*Result, *handoff) {
	s, err := r.newSession(in, l)
	if err != nil {
		now := r.now()
		format := in.Format
		if format == "" && in.Agent != nil {
			format = in.Agent.Output.Format
		}
		if r.Log != nil {
			r.Log.Warn("session could not start", zap.String("session", in.SessionID), zap.Error(err))
		}
		// These are mistakes in the agent's set-up (an unknown provider, an
		// output schema that does not compile), not transport errors.
		rep := syntheticReport(format, "The session could not start: "+err.Error(), now)
		tree := l.node(in, now)
		tree.finish(false, now)
		return &Result{SessionID: in.SessionID, Report: rep, Err: err, Tree: tree.Snapshot()}, nil
	}
	return r.runRecovered(ctx, s)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// session is the state of one run; only run's goroutine touches it, except
// where noted (fields under mu, shared with concurrent tool calls).
type session struct {
	r      *Runner
	a      *config.Agent
	in     Input
	id     string
	format string
	obs    Observer
	log    *zap.Logger // r.Log with the session's fields; nil without r.Log
	chain  *llm.Chain
	xml    *xmlFinal
	link   *link    // what started this session; nil for a top-level one
	path   []string // the agents from the top-level session down to this one

	*toolSet

	msgs  []llm.Message
	guard guard // the context guard's count of msgs

	// work bounds the turns that may still call tools; final the whole
	// session. work ends a little before final, so that a model stopped by
	// the time limit still has time to write its report. Both move later
	// by the time the clock stands still while a person is asked.
	work, final context.Context
	clock       *clock

	turn       int
	toolCalls  int
	usage      llm.Usage
	tree       *Op
	turnOp     *Op
	forceFinal string // the message that announces a forced final turn
	lastChance bool   // the one retry after a final turn without a report
	injections int    // restriction reminders since tools last ran
	lastText   string // the latest non-empty text the model wrote
	taskDone   bool   // agent__task_status said only the report remains

	store *tooloutput.Store // the session's oversized results; nil when not kept

	mu        sync.Mutex
	report    *Report
	terminate *terminateNote
	lastTool  string // the latest successful tool result, for last-chance adoption
	handoff   *handoff
	loaded    loadedTools                     // the tools tools__search found
	gates     map[*llm.ToolCall]*approvalGate // the calls waiting for a person, each its own (the model may repeat an id)
	denied    map[string]bool                 // by deniedKey: calls a person denied
}

type terminateNote struct {
	note   string // "" when the tool gave none
	finish bool
}

func (r *Runner) newSession(in Input, l *link) (*session, error) {
	a := in.Agent
	if a == nil {
		return nil, errors.New("no agent given")
	}
	ts, err := r.toolSet(a, formatOf(in))
	if err != nil {
		return nil, err
	}
	a = withLimits(a)
	s := &session{r: r, a: a, in: in, id: in.SessionID, format: formatOf(in), obs: in.Observer, toolSet: ts,
		link: l, path: append(l.above(), a.Name)}
	if s.id == "" {
		s.id = randomID(8)
	}
	if r.Log != nil {
		s.obs = Tee(s.obs, logEvents(r.Log))
		s.log = r.Log.With(zap.String("session", s.id), zap.String("agent", a.Name))
	}
	targets, err := r.targets(a.Models)
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("agent %s has no models", a.Name)
	}
	s.chain = &llm.Chain{Targets: targets, MaxRetries: a.MaxRetries, Timeout: a.LLMTimeout.D(), Backoff: r.Backoff,
		OnRetry: s.onRetry}
	return s, nil
}

// targets resolves provider/model references to the runner's providers.
func (r *Runner) targets(refs []string) ([]llm.Target, error) {
	targets := make([]llm.Target, 0, len(refs))
	for _, ref := range refs {
		pname, model, err := config.ParseModelRef(ref)
		if err != nil {
			return nil, err
		}
		p, ok := r.Providers[pname]
		if !ok {
			return nil, fmt.Errorf("model %s: provider %q is not configured", ref, pname)
		}
		targets = append(targets, llm.Target{Provider: p, Model: model})
	}
	return targets, nil
}

func (s *session) now() time.Time { return s.r.now() }

// emit hands an event to the observer. It must never be called with s.mu
// or the tree's lock held: an observer may be slow, and may read the tree.
func (s *session) emit(e Event) {
	if s.obs == nil {
		return
	}
	e.Session, e.Agent, e.Turn, e.Path = s.id, s.a.Name, s.turn, s.path
	if s.link != nil {
		e.Parent = s.link.call
	}
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	s.obs(e)
}

func (s *session) appendMsg(m llm.Message) {
	s.msgs = append(s.msgs, m)
	s.guard.add(&s.msgs[len(s.msgs)-1])
}

func (s *session) system(text string) {
	s.appendMsg(llm.Message{Role: llm.RoleSystem, Content: text})
}

// reportGrace is how much of max_session_duration is kept for the final
// report: a fifth, at most two minutes.
func reportGrace(limit time.Duration) time.Duration {
	return min(limit/5, 2*time.Minute)
}

func (s *session) run(ctx context.Context) (*Result, *handoff) {
	start := s.now()
	limit := s.a.MaxSessionDuration.D()
	deadline := time.Now().Add(limit)
	if !s.in.Started.IsZero() {
		deadline = s.in.Started.Add(limit)
	}
	if d, ok := ctx.Deadline(); ok && s.link != nil && d.Before(deadline) {
		// A sub-session ends with its parent's time for work: it keeps
		// part of that for its own report, as any session does.
		deadline, limit = d, time.Until(d)
	}
	final := newMovable(ctx, deadline)
	defer final.release()
	work := newMovable(final, deadline.Add(-reportGrace(limit)))
	defer work.release()
	s.work, s.final = work, final
	s.clock = &clock{above: s.link.clockAbove(), ctxs: []*movable{work, final}}

	s.tree = s.link.node(s.in, start)
	s.openStore()
	defer s.closeStore() // whatever the ending: report, failure, cancellation, panic
	nonce := s.in.nonce
	if nonce == "" {
		nonce = randomID(4)
	}
	s.xml = newXMLFinal(nonce)
	s.guard = newGuard(s.budget(), s.toolSet.tokens+toolDefsTokens(s.sessionDefs()))
	dynamic := sessionPrompt(s.format, nonce, start)
	s.msgs = append(s.msgs, llm.Message{Role: llm.RoleSystem, Content: s.prompt + dynamic})
	s.guard.addPrompt(&s.msgs[0], len(s.prompt), s.promptTok)
	for _, m := range s.in.History {
		s.appendMsg(m)
	}
	if strings.TrimSpace(s.in.Prompt) != "" || len(s.in.Files) > 0 {
		s.appendMsg(s.promptMessage())
	}
	s.emit(Event{Kind: EventSessionStarted, Op: s.tree})
	if s.index != nil {
		s.emit(Event{Kind: EventNotice, Notice: "tool search: " + s.fit.String()})
	}

	err := s.loop(ctx)
	if h := s.handedOff(); h != nil && err == nil {
		return s.endHandoff(start, h), h
	}

	rep := s.report
	end := s.now()
	rep.Time = end
	s.tree.finish(!rep.Synthetic(), end)
	s.emit(Event{Kind: EventFinalReport, Op: s.tree, Report: rep})
	notice, raw := "report delivered", ""
	if err != nil {
		notice, raw = rep.Reason, err.Error()
	}
	u := s.usage
	s.emit(Event{Kind: EventSessionDone, Op: s.tree, Notice: notice, Err: raw, Usage: &u, Result: &SessionSummary{
		Turns: s.turn, ToolCalls: s.toolCalls, Duration: end.Sub(start), Status: rep.Status, Source: string(rep.Source)}})
	return &Result{SessionID: s.id, Report: rep, Turns: s.turn, ToolCalls: s.toolCalls, Usage: s.usage,
		Messages: s.msgs, Tree: s.tree.Snapshot(), Err: err}, nil
}

// loop runs turns until a report exists; the returned error says why the
// loop had to make the report up, if it did.
func (s *session) loop(ctx context.Context) error {
	for {
		if err := s.stopped(ctx); err != nil {
			return err
		}
		s.turn++
		_, loadedTok := s.loadedDefs()
		s.guard.tools = s.toolSet.tokens + loadedTok
		final := s.finalTurn()
		s.turnOp = s.tree.child("turn", fmt.Sprintf("turn %d", s.turn), s.now())
		s.emit(Event{Kind: EventTurnStarted, Op: s.turnOp, Final: final})

		tctx := s.work
		if final {
			tctx = s.final
		}
		resp, err := s.callModel(tctx, final)
		if err != nil {
			s.turnOp.finish(false, s.now())
			if err := s.stopped(ctx); err != nil {
				return err
			}
			if s.work.Err() != nil && !final {
				continue // out of time for work: the next turn asks for the report
			}
			return s.fail(err, unreachable(err))
		}
		s.handleReply(tctx, resp, final)
		s.turnOp.finish(true, s.now())

		if s.report != nil || s.handedOff() != nil {
			return nil
		}
		if s.terminate != nil {
			s.adoptTerminate()
			return nil
		}
		if final {
			if s.lastChance {
				if s.adoptLastResort() {
					return nil
				}
				return s.fail(errNoReport, "The model did not deliver a final report, even when asked for it on its last turn.")
			}
			s.lastChance = true
			s.system(finalRetryMessage)
			s.emit(Event{Kind: EventNotice, Notice: "final turn ended without a report; retrying once"})
		}
	}
}

var (
	errNoReport  = errors.New("the model never delivered a final report")
	errTimeLimit = errors.New("max_session_duration reached")
)

// stopped ends the session when the caller gave up or the time limit has
// passed, and returns why; nil while the session may go on.
func (s *session) stopped(ctx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return s.fail(ctx.Err(), "The request was cancelled before an answer was ready.")
	case s.final.Err() != nil:
		return s.fail(errTimeLimit, fmt.Sprintf("There is no answer because the request reached its time limit of %s before the model delivered one.",
			humanDuration(s.a.MaxSessionDuration.D())))
	}
	return nil
}

// finalTurn decides whether this turn may offer only the final report, and
// tells the model so the first time.
func (s *session) finalTurn() bool {
	if s.forceFinal == "" {
		switch {
		case s.taskDone:
			s.forceFinal = taskDoneFinalMessage
		case s.work.Err() != nil:
			s.forceFinal = timeFinalMessage
		case s.turn >= s.a.MaxTurns:
			s.forceFinal = maxTurnsFinalMessage
		case s.guard.over(s.msgs):
			s.forceFinal = contextFinalMessage
		default:
			return false
		}
		s.system(s.forceFinal)
		s.emit(Event{Kind: EventNotice, Notice: "final turn: " + s.forceFinal})
	}
	return true
}

// budget is how many tokens the request may hold: the window less the
// answer and a safety buffer.
func (s *session) budget() int {
	return s.a.ContextWindow - s.a.MaxOutputTokens - s.a.ContextBuffer
}

func (s *session) callModel(ctx context.Context, final bool) (*llm.Response, error) {
	defs, choice := s.defs, llm.ToolChoiceAuto
	if s.index != nil && !final {
		found, _ := s.loadedDefs()
		defs = append(defs[:len(defs):len(defs)], found...)
	}
	switch {
	case final:
		defs, choice = s.finalDefs, llm.ToolChoiceRequired
	case s.storing():
		defs = append(defs[:len(defs):len(defs)], toolOutputDef)
	}
	if !final && len(s.in.Tools) > 0 {
		defs = append(defs[:len(defs):len(defs)], s.sessionDefs()...)
	}
	op := s.turnOp.child("llm", "model call", s.now())
	req := &llm.Request{
		Messages: s.msgs, Tools: defs, ToolChoice: choice, Temperature: s.a.Temperature, TopP: s.a.TopP,
		MaxOutputTokens: s.a.MaxOutputTokens, Stream: true,
	}
	resp, err := s.chain.Complete(ctx, req)
	if err != nil {
		op.finish(false, s.now())
		info := &LLMCallInfo{Err: err.Error()}
		var le *llm.Error
		if errors.As(err, &le) {
			info.Provider, info.Model = le.Provider, le.Model
		}
		s.emit(Event{Kind: EventLLMCall, Op: op, LLM: info})
		return nil, err
	}
	op.rename(resp.Provider + "/" + resp.Model)
	op.finish(true, s.now())
	s.usage.Add(resp.Usage)
	s.guard.reported(len(s.msgs), !final, resp.Usage)
	s.emit(Event{Kind: EventLLMCall, Op: op, LLM: &LLMCallInfo{Provider: resp.Provider, Model: resp.Model, Usage: resp.Usage,
		Latency: resp.Latency, FinishReason: resp.FinishReason, ToolCalls: len(resp.Message.ToolCalls), TextBytes: len(resp.Message.Content)}})
	return resp, nil
}

func (s *session) onRetry(ri llm.RetryInfo) {
	msg := ""
	if ri.Err != nil {
		msg = ri.Err.Error()
	}
	info := &LLMCallInfo{Model: ri.Target.Model, Err: msg, Wait: ri.Wait}
	if ri.Target.Provider != nil {
		info.Provider = ri.Target.Provider.Name()
	}
	s.emit(Event{Kind: EventLLMRetry, Op: s.turnOp, LLM: info})
}

// handleReply appends the model's message and acts on it.
func (s *session) handleReply(ctx context.Context, resp *llm.Response, final bool) {
	msg := resp.Message
	msg.Role = llm.RoleAssistant
	s.appendMsg(msg)
	if strings.TrimSpace(msg.Content) != "" {
		s.lastText = msg.Content
	}

	// The XML wrapper with this session's nonce is a final answer wherever
	// the model writes it. One that cannot be adopted, or one with another
	// nonce, is never taken as a plain-text answer either.
	notice := ""
	if content, attrs, ok := s.xml.find(msg.Content); ok {
		rep, problems := reportFromText(content, s.format, s.schema, SourceXML)
		if rep != nil {
			if st := normStatus(attrs["status"]); st == StatusFailure || st == StatusPartial {
				rep.Status = st
			}
			s.capture(rep, nil)
			return
		}
		s.rejected(SourceXML, problems)
		notice = "The answer in your final-answer wrapper was not accepted: " + strings.Join(problems, " ") +
			"\nDeliver your answer by calling " + FinalReportTool + "."
	} else if hasWrapper(msg.Content) {
		s.emit(Event{Kind: EventNotice, Notice: "ignored a final-answer wrapper with a foreign nonce"})
		// Under restrict_output the text gets the restriction reminder and
		// is never adopted anyway.
		if !s.a.RestrictOutput {
			notice = "The final-answer wrapper in your reply does not carry this session's nonce, so it was ignored. " +
				"Deliver your answer by calling " + FinalReportTool + "."
		}
	}
	switch {
	case len(msg.ToolCalls) > 0:
		s.runTools(ctx, msg.ToolCalls, final)
	case notice == "":
		s.handleText(msg.Content, resp.FinishReason, final)
	}
	if notice != "" && s.report == nil {
		s.system(notice)
	}
}

// handleText acts on a reply without tool calls. Without restrict_output
// the text is adopted as the report where the format allows; with it, the
// restriction reminder is injected instead, at most
// restriction_max_injections times since tools last ran (0 = no limit),
// and then the final turn is forced.
func (s *session) handleText(text string, finish llm.FinishReason, final bool) {
	if strings.TrimSpace(text) == "" {
		s.emit(Event{Kind: EventNotice, Notice: "empty reply"})
		if !final {
			s.system(emptyReplyMessage)
		}
		return
	}
	if s.a.RestrictOutput {
		if final {
			return // the final-turn retry asks for the report
		}
		if s.a.RestrictionMaxInjections == 0 || s.injections < s.a.RestrictionMaxInjections {
			s.injections++
			s.system(s.a.RestrictionMessage)
			s.emit(Event{Kind: EventNotice, Notice: fmt.Sprintf("output restricted: reminder %d injected", s.injections)})
			return
		}
		s.forceFinal = restrictionFinalMessage
		s.system(s.forceFinal)
		s.emit(Event{Kind: EventNotice, Notice: "output restricted: reminders exhausted, final turn forced"})
		return
	}
	rep, problems := reportFromText(text, s.format, s.schema, SourceText)
	if rep != nil {
		if finish == llm.FinishLength {
			// The answer was cut off at max_output_tokens.
			rep.Status = StatusPartial
		}
		s.capture(rep, nil)
		return
	}
	s.rejected(SourceText, problems)
	s.system("Your answer was not accepted: " + strings.Join(problems, "\n") + "\nDeliver it by calling " + FinalReportTool + ".")
}

// rejected records, for the log, why an answer the model gave was not
// taken as the report.
func (s *session) rejected(src Source, problems []string) {
	s.emit(Event{Kind: EventReportRejected, Notice: string(src) + ": " + strings.Join(problems, "; ")})
}

// capture stores the session's report; the first one wins. For
// slack-block-kit the messages are repaired here, so every consumer gets
// messages Slack accepts.
func (s *session) capture(r *Report, notes []string) bool {
	if r.Format == config.FormatSlackBlockKit {
		if r.Slack == nil {
			r.Slack, r.Repairs = blockkit.Repair(r.Messages, r.Content)
		}
		if len(r.Repairs) > 0 {
			notes = append(notes, fmt.Sprintf("Block Kit repaired (%s)", repairKinds(r.Repairs)))
		}
	}
	s.mu.Lock()
	won := s.report == nil
	if won {
		s.report = r
	}
	s.mu.Unlock()
	if won && len(notes) > 0 {
		text := strings.Join(notes, "; ")
		s.emit(Event{Kind: EventNotice, Notice: "final report: " + text, Warn: strings.Contains(text, formatMismatch)})
	}
	return won
}

func (s *session) fail(err error, reason string) error {
	s.capture(syntheticReport(s.format, reason, s.now()), nil)
	return err
}
