package agent

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// A panic — in the loop, an observer, a built-in or a sub-agent — ends
// only what it happened in: a session ends with a failure report that
// says so in words, and a tool call gets an error result that the model
// reads, while the stack goes to the log. The process, and every other
// session in it, goes on.

// panicReason is what a session that panicked reports.
const panicReason = "The bot hit an internal error while working on this. Please ask again."

// runRecovered runs s to its end; a panic becomes a failure report.
func (r *Runner) runRecovered(ctx context.Context, s *session) (res *Result, h *handoff) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		err := fmt.Errorf("agent: panic in session %s: %v", s.in.SessionID, p)
		if r.Log != nil {
			r.Log.Error("session panicked", zap.String("session", s.in.SessionID), zap.Any("panic", p),
				zap.ByteString("stack", debug.Stack()))
		}
		now := r.now()
		if s.tree != nil {
			s.tree.finish(false, now)
		}
		res = &Result{SessionID: s.in.SessionID, Report: syntheticReport(s.format, panicReason, now), Err: err,
			Turns: s.turn, ToolCalls: s.toolCalls, Usage: s.usage}
		if s.tree != nil {
			res.Tree = s.tree.Snapshot()
		}
		h = nil
	}()
	return s.run(ctx)
}

// dispatchRecovered is dispatch, with a panic during the call turned into
// the call's error result. The call is still reported finished, as failed,
// so that no view of the session shows it running on.
func (s *session) dispatchRecovered(ctx context.Context, c *llm.ToolCall, under *Op, parent string, index, room int) (out callOutcome) {
	start := s.now()
	op := under.child("tool", c.Name, start)
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if s.r.Log != nil {
			s.r.Log.Error("tool call panicked", zap.String("session", s.in.SessionID), zap.String("tool", c.Name),
				zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		}
		out = callOutcome{fmt.Sprintf("The call to %s failed: the bot hit an internal error while running it.", c.Name), true}
		s.endPanicked(op, c, parent, index, start, out)
	}()
	return s.dispatch(ctx, c, op, parent, index, room)
}

// endPanicked finishes the node of a call that panicked and reports its
// end, unless dispatch had already done so before the panic.
func (s *session) endPanicked(op *Op, c *llm.ToolCall, parent string, index int, start time.Time, out callOutcome) {
	if op.ended() {
		return
	}
	now := s.now()
	op.finish(false, now)
	s.mu.Lock()
	s.toolCalls++
	s.mu.Unlock()
	info := ToolInfo{ID: c.ID, Name: c.Name, Index: index, ArgBytes: len(c.Arguments), ResultBytes: len(out.content), Latency: now.Sub(start),
		Failure: string(tools.FailPanic), Err: "panic; the stack is in the log", Parent: parent}
	// An observer that panics again on this event is the bug already
	// logged: the call's error result stands.
	defer func() { _ = recover() }()
	s.emit(Event{Kind: EventToolFinished, Op: op, Tool: &info})
}
