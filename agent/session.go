// Package agent runs agent sessions: the loop that calls a model with the
// agent's tools, executes the tool calls it makes, and repeats until the
// model delivers its answer with agent__final_report — or until limits force
// the end, in which case the loop writes a report itself. Every session ends
// with exactly one Report. A session emits Events that headends render as
// progress and the logger writes as lines.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// Runner runs sessions. It holds what sessions share — model providers and
// tools — and is safe for concurrent use.
type Runner struct {
	// Providers are the configured model endpoints by name.
	Providers map[string]llm.Provider
	// Tools are the shared tools (MCP, REST, sub-agents); nil means none.
	// The tools each agent is offered are computed once and cached, so Tools
	// must not be replaced after the first Run: build a new Runner instead.
	// The cache holds one entry per agent name and format, replaced when an
	// agent of that name arrives from a reloaded configuration, so it does
	// not grow with reloads.
	Tools *tools.Orchestrator
	// Log receives one line per event; nil means no logging.
	Log *zap.Logger
	// Backoff overrides the retry backoff between model attempts (tests).
	Backoff func(attempt int) time.Duration
	// Now overrides the clock (tests).
	Now func() time.Time

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
	// Observer receives the session's events (optional).
	Observer Observer
	// SessionID names the session in events and logs ("" makes one up).
	SessionID string
}

// Result is the outcome of a session. Report is never nil.
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
	s, err := r.newSession(in)
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
		return &Result{SessionID: in.SessionID, Report: rep, Err: err, Tree: newTree("session", now).Snapshot()}
	}
	return s.run(ctx)
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
	chain  *llm.Chain
	xml    *xmlFinal

	*toolSet

	msgs  []llm.Message
	guard guard // the context guard's count of msgs

	// work bounds the turns that may still call tools; final the whole
	// session. work ends a little before final, so that a model stopped by
	// the time limit still has time to write its report.
	work, final context.Context

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

	mu        sync.Mutex
	report    *Report
	terminate *terminateNote
	lastTool  string // the latest successful tool result, for last-chance adoption
}

type terminateNote struct {
	note   string // "" when the tool gave none
	finish bool
}

func (r *Runner) newSession(in Input) (*session, error) {
	a := in.Agent
	if a == nil {
		return nil, errors.New("no agent given")
	}
	ts, err := r.toolSet(a, formatOf(in))
	if err != nil {
		return nil, err
	}
	a = withLimits(a)
	s := &session{r: r, a: a, in: in, id: in.SessionID, format: formatOf(in), obs: in.Observer, toolSet: ts}
	if s.id == "" {
		s.id = randomID(8)
	}
	if r.Log != nil {
		s.obs = Tee(s.obs, LogEvents(r.Log))
	}
	targets := make([]llm.Target, 0, len(a.Models))
	for _, ref := range a.Models {
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
	if len(targets) == 0 {
		return nil, fmt.Errorf("agent %s has no models", a.Name)
	}
	s.chain = &llm.Chain{Targets: targets, MaxRetries: a.MaxRetries, Timeout: a.LLMTimeout.D(), Backoff: r.Backoff,
		OnRetry: s.onRetry}
	return s, nil
}

func (s *session) now() time.Time { return s.r.now() }

// emit hands an event to the observer. It must never be called with s.mu
// or the tree's lock held: an observer may be slow, and may read the tree.
func (s *session) emit(e Event) {
	if s.obs == nil {
		return
	}
	e.Session, e.Agent, e.Turn = s.id, s.a.Name, s.turn
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

func (s *session) run(ctx context.Context) *Result {
	start := s.now()
	limit := s.a.MaxSessionDuration.D()
	deadline := time.Now().Add(limit)
	final, cancelFinal := context.WithDeadline(ctx, deadline)
	defer cancelFinal()
	work, cancelWork := context.WithDeadline(final, deadline.Add(-reportGrace(limit)))
	defer cancelWork()
	s.work, s.final = work, final

	s.tree = newTree(s.a.Name, start)
	nonce := randomID(4)
	s.xml = newXMLFinal(nonce)
	s.guard = newGuard(s.budget(), s.toolSet.tokens)
	dynamic := sessionPrompt(s.format, nonce, start)
	s.msgs = append(s.msgs, llm.Message{Role: llm.RoleSystem, Content: s.prompt + dynamic})
	s.guard.addPrompt(&s.msgs[0], len(s.prompt), s.promptTok)
	for _, m := range s.in.History {
		s.appendMsg(m)
	}
	if strings.TrimSpace(s.in.Prompt) != "" {
		s.appendMsg(llm.Message{Role: llm.RoleUser, Content: s.in.Prompt})
	}
	s.emit(Event{Kind: EventSessionStarted, Op: s.tree})

	err := s.loop(ctx)

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
		Messages: s.msgs, Tree: s.tree.Snapshot(), Err: err}
}

// loop runs turns until a report exists; the returned error says why the
// loop had to make the report up, if it did.
func (s *session) loop(ctx context.Context) error {
	for {
		if err := s.stopped(ctx); err != nil {
			return err
		}
		s.turn++
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

		if s.report != nil {
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
	if final {
		defs, choice = s.finalDefs, llm.ToolChoiceRequired
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
	s.guard.reported(len(s.msgs), len(defs) == len(s.defs), resp.Usage)
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

// adoptTerminate builds the report from a terminate result when the model
// did not deliver one: the note, or without one the last text the model
// wrote, or else "Finished".
func (s *session) adoptTerminate() {
	note, src := s.terminate.note, SourceToolMessage
	if s.terminate.finish {
		src = SourceFinish
	}
	if note != "" && src == SourceToolMessage && s.format == config.FormatSlackBlockKit {
		// A tool's note is the tool's words, shown as such.
		s.capture(s.toolDataReport(note, StatusSuccess), nil)
		return
	}
	if note == "" {
		note = strings.TrimSpace(s.lastText)
	}
	if note == "" {
		note = finishedNote
	}
	rep, _ := reportFromText(note, s.format, s.schema, src)
	if rep == nil {
		rep = &Report{Status: StatusSuccess, Format: s.format, Source: src, Content: note}
		if s.format == config.FormatJSON {
			rep.ContentJSON = map[string]any{"note": note}
			rep.SchemaErrors = validateJSON(s.schema, rep.ContentJSON)
		}
	}
	s.capture(rep, nil)
}

// finishedNote is what a terminate result without a note says, to the
// model and, when the model wrote nothing, to the user.
const finishedNote = "Finished"

// adoptLastResort takes the latest successful tool result as a partial
// answer rather than ending with nothing. It is the tool's data, not an
// answer the model wrote: for slack-block-kit it is shown as text (JSON in
// a code block), never read as Block Kit.
func (s *session) adoptLastResort() bool {
	s.mu.Lock()
	last := s.lastTool
	s.mu.Unlock()
	if strings.TrimSpace(last) == "" {
		return false
	}
	var rep *Report
	if s.format == config.FormatSlackBlockKit {
		rep = s.toolDataReport(last, StatusPartial)
	} else if rep, _ = reportFromText(last, s.format, s.schema, SourceToolMessage); rep == nil {
		return false
	}
	rep.Status = StatusPartial
	rep.Metadata = map[string]any{"note": "The model did not write a final report; this is the last tool result it received."}
	return s.capture(rep, []string{"adopted the last tool result"})
}

// toolDataReport is a slack-block-kit report made of a tool's text: JSON
// shown pretty-printed in a code block, other text as Markdown. It is
// converted as Markdown only, since repair would read Block Kit JSON in the
// fallback text as blocks, letting a tool post blocks in the bot's name.
func (s *session) toolDataReport(text, status string) *Report {
	md := asMarkdownData(text)
	return &Report{Status: status, Format: s.format, Source: SourceToolMessage, Content: md, Slack: blockkit.FromMarkdown(md)}
}

func (s *session) fail(err error, reason string) error {
	s.capture(syntheticReport(s.format, reason, s.now()), nil)
	return err
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// unreachable says, for the person waiting, why no model answered. It
// names the kind of failure only: the technical error (hosts, addresses,
// gateway URLs) goes to the log with Result.Err, never to the user.
func unreachable(err error) string {
	var ce *llm.ChainError
	if errors.As(err, &ce) && ce.Wait > 0 {
		return fmt.Sprintf("There is no answer because the model service asked to wait %s before trying again, longer than this request can wait. "+
			"Please try again later.", humanDuration(ce.Wait))
	}
	why := "the model service failed"
	switch llm.KindOf(err) {
	case llm.ErrAuth:
		why = "the model service rejected the configured credentials"
	case llm.ErrQuota:
		why = "the model service's quota or credit is used up"
	case llm.ErrRateLimit:
		why = "the model service is limiting the rate of requests"
	case llm.ErrTimeout:
		why = "the model service did not answer in time"
	case llm.ErrNetwork:
		why = "the model service could not be reached"
	case llm.ErrServer:
		why = "the model service is failing or overloaded"
	case llm.ErrBadRequest:
		why = "the model service refused the request"
	case llm.ErrBadResponse:
		why = "the model service sent answers that could not be read"
	}
	return "There is no answer because " + why + ". Please try again later; if it persists, tell whoever runs this bot."
}

// humanDuration writes d for people: "45 seconds", "10 minutes", "1 hour".
func humanDuration(d time.Duration) string {
	n, name := int64(d.Round(time.Minute)/time.Minute), "minute"
	switch {
	case d < time.Minute-time.Second/2:
		n, name = max(int64(d.Round(time.Second)/time.Second), 1), "second"
	case n%60 == 0 || n >= 120:
		n, name = (n+30)/60, "hour"
	}
	if n == 1 {
		return "1 " + name
	}
	return fmt.Sprintf("%d %ss", n, name)
}

// repairKinds summarises repairs for the log: each kind with its count.
func repairKinds(changes []blockkit.Change) string {
	counts := map[string]int{}
	var order []string
	for _, c := range changes {
		if counts[c.Kind] == 0 {
			order = append(order, c.Kind)
		}
		counts[c.Kind]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s×%d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}
