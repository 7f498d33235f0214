package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// callOutcome is what one tool call gives back to the model.
type callOutcome struct {
	content string
	isError bool
}

// runTools executes a turn's tool calls — concurrently, since the model
// asked for them together — and appends one tool message per call, in the
// model's order. Calls beyond max_tool_calls_per_turn are refused, and on
// the final turn only the final report is accepted.
func (s *session) runTools(ctx context.Context, calls []llm.ToolCall, final bool) {
	results := make([]callOutcome, len(calls))
	room := s.resultRoom(len(calls))
	limit := s.a.MaxToolCallsPerTurn
	var asked []*llm.ToolCall
	for i := range calls {
		if !final && (i < limit || calls[i].Name == FinalReportTool) {
			asked = append(asked, &calls[i])
		}
	}
	s.askApprovals(ctx, asked)
	defer s.dropGates(asked)
	var wg sync.WaitGroup
	for i := range calls {
		c := &calls[i]
		switch {
		case final && c.Name != FinalReportTool:
			results[i] = callOutcome{"Only " + FinalReportTool + " can be called now. Deliver your answer with it.", true}
			continue
		case i >= limit && c.Name != FinalReportTool:
			results[i] = callOutcome{fmt.Sprintf("Not run: at most %d tool calls are run per turn. Call it again in the next turn if you still need it.", limit), true}
			continue
		}
		// Final reports run in the model's order, so that of two the
		// first wins; they are quick and touch no tool.
		if len(calls) == 1 || c.Name == FinalReportTool {
			results[i] = s.dispatchRecovered(ctx, c, s.turnOp, "", i, room)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.dispatchRecovered(ctx, c, s.turnOp, "", i, room)
		}()
	}
	wg.Wait()
	ran := false
	for i := range calls {
		s.appendMsg(llm.Message{Role: llm.RoleTool, ToolCallID: calls[i].ID, ToolName: calls[i].Name,
			Content: results[i].content, IsError: results[i].isError})
		if calls[i].Name != FinalReportTool && !results[i].isError {
			ran = true
		}
	}
	if ran {
		s.injections = 0 // the reminder limit counts reminders since tools last ran
	}
}

// dispatch runs one call — a built-in or a shared tool — and reports it as
// events; op is the call's node in the operation tree. parent is the
// batch's call ID for calls inside agent__batch; index is the call's
// position among the turn's (or the batch's) calls.
//
// room is the tokens the call's result may take in the next request; a
// larger result is stored behind a handle (see resultPolicy).
func (s *session) dispatch(ctx context.Context, c *llm.ToolCall, op *Op, parent string, index, room int) callOutcome {
	info := ToolInfo{ID: c.ID, Name: c.Name, Index: index, ArgBytes: len(c.Arguments), Args: argsSummary(c.Arguments), Parent: parent}
	if c.Name == SearchTool && s.index != nil {
		info.Namespace, info.Status = nsTools, searchStatus(c.Arguments)
	}
	started := info
	s.emit(Event{Kind: EventToolStarted, Op: op, Tool: &started})

	var out callOutcome
	start := s.now()
	switch {
	case c.Name == ToolOutputTool && s.storing():
		info.Namespace = nsAgent
		out = s.toolOutput(ctx, c, op)
	case s.sessionTool(c.Name) != nil:
		info.Namespace = nsAgent
		out = s.runSessionTool(ctx, s.sessionTool(c.Name), c)
	case !s.offered[c.Name]:
		info.Failure = string(tools.FailUnknownTool)
		out = callOutcome{s.unknownTool(c.Name), true}
	case c.Name == SearchTool:
		out = s.searchTools(c)
	case s.searchable[c.Name] != nil && !s.touch(c.Name):
		info.Failure = string(tools.FailUnknownTool)
		out = callOutcome{notLoaded(c.Name), true}
	case c.Name == FinalReportTool:
		info.Namespace = nsAgent
		out = s.finalReport(c, parent != "")
	case c.Name == TaskStatusTool, c.Name == FinishTool:
		info.Namespace = nsAgent
		out = s.simpleBuiltin(c)
	case c.Name == BatchTool:
		info.Namespace = nsAgent
		out = s.batch(ctx, c, op, parent != "", room)
	case s.subAgents[c.Name] != "":
		info.Namespace = nsSubagent
		out = s.callSubAgent(ctx, c, op)
	case c.Name == HandoffTool:
		info.Namespace = nsRouter
		out = s.handOff(c, op, parent != "")
	default:
		if msg, err := s.clearance(ctx, c); err != nil {
			info.Failure = failNotApproved
			out = callOutcome{msg, true}
			break
		}
		if s.log != nil {
			ctx = tools.WithLogger(ctx, s.log)
		}
		ctx = tools.WithWaiter(ctx, callWaiter{s: s, op: op})
		ctx = s.elicitContext(ctx)
		if s.store != nil || s.a.ToolOutput.MaxBytes > 0 {
			// Else (an agent built in code without tool_output) the
			// orchestrator's own size cap applies.
			ctx = tools.WithResultPolicy(ctx, s.resultPolicy(room))
		}
		o := s.r.Tools.Execute(ctx, c.ID, c.Name, c.Arguments, s.a.ToolTimeout.D())
		info.Namespace, info.Failure, info.Oversize = o.Namespace, string(o.Failure), o.Oversize
		info.Remote, info.Queue, info.QueueWait, info.Cached = o.Remote, o.Queue, o.QueueWait, o.Cached
		if o.Err != nil {
			info.Err = o.Err.Error()
		}
		out = callOutcome{o.Content, o.IsError}
		if o.Terminate {
			note := strings.TrimSpace(o.Content)
			s.setTerminate(note, false)
			if note == "" {
				out.content = finishedNote
			}
		}
		if o.OK() && !o.Oversize { // a handle is no answer to adopt
			s.mu.Lock()
			s.lastTool = o.Content
			s.mu.Unlock()
		}
	}
	end := s.now()
	info.Latency, info.ResultBytes, info.OK = end.Sub(start), len(out.content), !out.isError
	op.finish(info.OK, end)
	s.mu.Lock()
	s.toolCalls++
	s.mu.Unlock()
	s.emit(Event{Kind: EventToolFinished, Op: op, Tool: &info})
	return out
}

func (s *session) unknownTool(name string) string {
	var list []tools.Tool
	for _, d := range s.defs {
		list = append(list, tools.Tool{Name: d.Name})
	}
	msg := tools.UnknownToolMessage(name, list, nil)
	if s.index != nil {
		msg += " More tools are found with " + SearchTool + ": describe what you want to do."
	}
	return msg
}

// finalReport handles agent__final_report: it validates the arguments in
// the call, so the model gets the diagnostics this turn and can fix them.
func (s *session) finalReport(c *llm.ToolCall, inBatch bool) callOutcome {
	if inBatch {
		return callOutcome{FinalReportTool + " cannot be called inside " + BatchTool + "; call it on its own.", true}
	}
	args, msg := decodeArgs(c)
	if msg != "" {
		return callOutcome{msg, true}
	}
	s.mu.Lock()
	done := s.report != nil
	s.mu.Unlock()
	if done {
		return callOutcome{"A final report was already delivered in this session; this one is ignored.", true}
	}
	rep, notes, problems := parseReport(args, s.format, s.schema, s.lastChance)
	if len(problems) > 0 {
		s.rejected(SourceToolCall, problems)
		return callOutcome{"The final report was not accepted:\n- " + strings.Join(problems, "\n- ") +
			"\nFix these and call " + FinalReportTool + " again.", true}
	}
	if !s.capture(rep, notes) {
		return callOutcome{"A final report was already delivered in this session; this one is ignored.", true}
	}
	return callOutcome{"Final report captured.", false}
}

// simpleBuiltin handles agent__task_status and finish.
func (s *session) simpleBuiltin(c *llm.ToolCall) callOutcome {
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, builtinSchemas[c.Name])
	if msg != "" {
		return callOutcome{msg, true}
	}
	if c.Name == FinishTool {
		var a struct {
			Note string `json:"note"`
		}
		_ = json.Unmarshal(raw, &a)
		note := strings.TrimSpace(a.Note)
		s.setTerminate(note, true)
		if note == "" {
			note = finishedNote
		}
		return callOutcome{note, false}
	}
	var ts TaskStatus
	_ = json.Unmarshal(raw, &ts)
	s.emit(Event{Kind: EventTaskStatus, Op: s.turnOp, Status: &ts})
	if ts.Complete() {
		s.mu.Lock()
		s.taskDone = true
		s.mu.Unlock()
		return callOutcome{"Status recorded. The task is complete: call " + FinalReportTool + " next.", false}
	}
	return callOutcome{"Status recorded.", false}
}

func (s *session) setTerminate(note string, finish bool) {
	s.mu.Lock()
	if s.terminate == nil {
		s.terminate = &terminateNote{note: note, finish: finish}
	}
	s.mu.Unlock()
}

// batch runs agent__batch: its calls in parallel, each through dispatch, so
// they are validated, time-bounded and reported like any other call.
func (s *session) batch(ctx context.Context, c *llm.ToolCall, op *Op, inBatch bool, room int) callOutcome {
	if inBatch {
		return callOutcome{BatchTool + " cannot be nested.", true}
	}
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, builtinSchemas[BatchTool])
	if msg != "" {
		return callOutcome{msg, true}
	}
	var a struct {
		Calls []batchCall `json:"calls"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return callOutcome{"The arguments for " + BatchTool + " could not be read: " + err.Error(), true}
	}
	if n := s.a.MaxToolCallsPerTurn; len(a.Calls) > n {
		return callOutcome{fmt.Sprintf("%s accepts at most %d calls; you sent %d. Split them over several turns.", BatchTool, n, len(a.Calls)), true}
	}
	results := make([]callOutcome, len(a.Calls))
	inners := make([]*llm.ToolCall, len(a.Calls))
	for i, bc := range a.Calls {
		inners[i] = &llm.ToolCall{ID: fmt.Sprintf("%s.%d", c.ID, i+1), Name: bc.Tool, Arguments: string(bc.Parameters)}
	}
	s.askApprovals(ctx, inners)
	defer s.dropGates(inners)
	var wg sync.WaitGroup
	for i := range a.Calls {
		inner := inners[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.dispatchRecovered(ctx, inner, op, c.ID, i, room/max(len(a.Calls), 1))
		}()
	}
	wg.Wait()
	allFailed := true
	for _, r := range results {
		if !r.isError {
			allFailed = false
		}
	}
	return callOutcome{formatBatch(a.Calls, results), allFailed}
}

// decodeArgs decodes a call's arguments into a map, or explains why not.
func decodeArgs(c *llm.ToolCall) (map[string]any, string) {
	raw, msg := tools.ParseArguments(c.Name, c.Arguments, nil)
	if msg != "" {
		return nil, msg
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "The arguments for " + c.Name + " could not be read: " + err.Error()
	}
	return m, ""
}
