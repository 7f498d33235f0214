package telemetry

// Outcomes of a session that chose a streamed message.
const (
	StreamAnswered        = "answered"         // chat.stopStream carried the answer
	StreamAnsweredBelow   = "answered_below"   // the stop failed; the answer was posted as messages after it
	StreamFallbackBudget  = "fallback_budget"  // no chat.startStream token at once: a progress message instead
	StreamFallbackRefused = "fallback_refused" // Slack refused chat.startStream: a progress message instead
)

// Stream counts one streamed session's outcome; an outcome not listed
// above is counted as "other".
func (m *Metrics) Stream(outcome string) {
	if m == nil {
		return
	}
	switch outcome {
	case StreamAnswered, StreamAnsweredBelow, StreamFallbackBudget, StreamFallbackRefused:
	default:
		outcome = "other"
	}
	m.streams.WithLabelValues(outcome).Inc()
}
