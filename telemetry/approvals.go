package telemetry

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/slackbot/slackbot/agent"
)

// approvalPrefix starts the Wait.What of a tool call waiting for approval.
const approvalPrefix = "approval of "

// isApproval reports whether e ends the wait of a tool call for approval.
func isApproval(e agent.Event) bool {
	return e.Kind == agent.EventResumed && e.Wait != nil && strings.HasPrefix(e.Wait.What, approvalPrefix)
}

// approvalDecision is a wait's outcome as a label: approved, denied,
// timed_out or cancelled.
func approvalDecision(w *agent.WaitInfo) string {
	return strings.ReplaceAll(w.Outcome, " ", "_")
}

func newApprovals(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "slackbot_tool_approvals_total",
		Help: "Decisions on tool calls that needed a person's approval, by decision (approved, denied, timed_out, cancelled)."}, []string{"decision"})
	reg.MustRegister(c)
	return c
}

// approvalEvent records a decision on the span of the turn that waited.
func (r *traceRun) approvalEvent(e agent.Event) {
	if !isApproval(e) {
		return
	}
	if s := r.span(e.Op); s != nil {
		s.AddEvent("tool approval", trace.WithTimestamp(e.Time), trace.WithAttributes(
			attribute.String("slackbot.approval.what", strings.TrimPrefix(e.Wait.What, approvalPrefix)),
			attribute.String("slackbot.approval.decision", approvalDecision(e.Wait)),
			attribute.String("slackbot.approval.note", e.Notice)))
	}
}
