package agent

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// logEvents returns an Observer that writes each event as one structured
// line. Events hold sizes, names and timings, never arguments, results or
// credentials, so nothing secret reaches the log through here.
func logEvents(log *zap.Logger) Observer {
	return func(e Event) {
		ce := log.Check(eventLevel(&e), string(e.Kind))
		if ce == nil {
			return
		}
		fields := []zap.Field{zap.String("session", e.Session), zap.String("agent", e.Agent), zap.Int("turn", e.Turn)}
		if e.Parent != "" {
			// A sub-agent's session, or a router's destination: where it sits.
			fields = append(fields, zap.Strings("path", e.Path), zap.String("parent_call", e.Parent))
		}
		if l := e.LLM; l != nil {
			fields = append(fields, zap.String("provider", l.Provider), zap.String("model", l.Model),
				zap.Int("input_tokens", l.Usage.InputTokens), zap.Int("output_tokens", l.Usage.OutputTokens),
				zap.Int("cache_read_tokens", l.Usage.CacheReadTokens), zap.Float64("cost_usd", l.Usage.CostUSD),
				zap.Duration("latency", l.Latency), zap.String("finish", string(l.FinishReason)),
				zap.Int("tool_calls", l.ToolCalls), zap.Int("text_bytes", l.TextBytes))
			if l.Err != "" {
				fields = append(fields, zap.String("error", l.Err), zap.Duration("wait", l.Wait))
			}
		}
		if t := e.Tool; t != nil {
			fields = append(fields, zap.String("tool", t.Name), zap.String("call_id", t.ID), zap.String("namespace", t.Namespace),
				zap.Int("arg_bytes", t.ArgBytes))
			if e.Kind == EventToolFinished {
				fields = append(fields, zap.Bool("ok", t.OK), zap.Int("result_bytes", t.ResultBytes), zap.Duration("latency", t.Latency))
				if t.Failure != "" {
					fields = append(fields, zap.String("failure", t.Failure))
				}
				if t.Err != "" {
					fields = append(fields, zap.String("error", t.Err))
				}
				if t.Oversize {
					fields = append(fields, zap.Bool("oversize", true))
				}
				if t.Remote != "" {
					fields = append(fields, zap.String("remote", t.Remote))
				}
				if t.Queue != "" {
					fields = append(fields, zap.String("queue", t.Queue), zap.Duration("queue_wait", t.QueueWait))
				}
				if t.Cached {
					fields = append(fields, zap.Bool("cached", true))
				}
			}
			if t.Parent != "" {
				fields = append(fields, zap.String("batch", t.Parent))
			}
		}
		if st := e.Status; st != nil {
			fields = append(fields, zap.String("status", st.Status), zap.String("now", st.Now),
				zap.Bool("ready_for_final_report", st.ReadyForFinalReport), zap.Bool("need_to_run_more_tools", st.NeedToRunMoreTools))
		}
		if r := e.Report; r != nil {
			fields = append(fields, zap.String("status", r.Status), zap.String("format", r.Format), zap.String("source", string(r.Source)),
				zap.Int("content_bytes", len(r.Content)+len(r.Messages)))
			if r.Reason != "" {
				fields = append(fields, zap.String("reason", r.Reason))
			}
			if len(r.SchemaErrors) > 0 {
				fields = append(fields, zap.Strings("schema_errors", r.SchemaErrors))
			}
		}
		if w := e.Wait; w != nil {
			fields = append(fields, zap.String("wait", w.ID), zap.String("what", w.What), zap.Strings("who", w.Who))
			if w.Outcome != "" {
				fields = append(fields, zap.String("outcome", w.Outcome))
			}
		}
		if e.Notice != "" {
			key := "notice"
			if e.Kind == EventReportRejected {
				key = "why"
			}
			fields = append(fields, zap.String(key, e.Notice))
		}
		if e.Err != "" {
			fields = append(fields, zap.String("error", e.Err))
		}
		if e.Final {
			fields = append(fields, zap.Bool("final_turn", true))
		}
		if u := e.Usage; u != nil {
			fields = append(fields, zap.Int("input_tokens", u.InputTokens), zap.Int("output_tokens", u.OutputTokens), zap.Float64("cost_usd", u.CostUSD))
		}
		if r := e.Result; r != nil {
			fields = append(fields, zap.Int("turns", r.Turns), zap.Int("tool_calls", r.ToolCalls), zap.Duration("duration", r.Duration),
				zap.String("status", r.Status), zap.String("source", r.Source))
		}
		ce.Write(fields...)
	}
}

// eventLevel: the life of a session and each finished tool call at info,
// other inner steps at debug, failures and refused answers at warn. A call
// the shared tools ran already has its info line, the orchestrator's "tool
// response" (written with the session's logger, so it carries the session
// and agent), so its tool_finished line is only for debugging.
func eventLevel(e *Event) zapcore.Level {
	switch {
	case e.LLM != nil && e.LLM.Err != "", e.Tool != nil && e.Tool.Failure != "":
		return zapcore.WarnLevel
	case e.Report != nil && e.Report.Synthetic(), e.Err != "", e.Kind == EventReportRejected, e.Warn:
		return zapcore.WarnLevel
	}
	switch e.Kind {
	case EventToolFinished:
		if !inSession(e.Tool.Namespace) {
			return zapcore.DebugLevel
		}
		return zapcore.InfoLevel
	case EventSessionStarted, EventFinalReport, EventSessionDone, EventNotice, EventLLMRetry, EventWaiting, EventResumed:
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}

// Namespaces of the tools a session runs itself, rather than through the
// shared tools.
const (
	nsAgent    = "agent"    // the built-ins
	nsSubagent = "subagent" // agent__<name>
	nsRouter   = "router"   // router__handoff-to
)

// inSession reports whether calls of namespace ns are run by the session
// itself, so that no other line logs them.
func inSession(ns string) bool {
	return ns == nsAgent || ns == nsSubagent || ns == nsRouter || ns == nsTools
}
