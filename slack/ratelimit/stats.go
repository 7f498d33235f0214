package ratelimit

import (
	"time"
)

// Stats is a snapshot of how the bot spends its Slack rate budgets, for
// metrics: per Web API method, and the progress refresh pace.
type Stats struct {
	Methods map[string]MethodStats
	// LiveProgress is how many progress messages this replica keeps
	// fresh, and ProgressInterval the least time between two refreshes of
	// each with those of every replica sharing the state store
	// (slack.progress_interval when nothing is slowed).
	LiveProgress     int
	ProgressInterval time.Duration
}

// MethodStats is one Web API method's calls since the bot started.
type MethodStats struct {
	Calls       int64         // calls made (each retry counts)
	RateLimited int64         // of which Slack answered 429
	Waiting     int           // calls queued for a token now
	Wait        time.Duration // total time calls waited for a token
	LastWait    time.Duration
	MaxWait     time.Duration
	// PerMinute is the method's budget (each channel's, for a budget per
	// channel), lowered for a while after a 429; 0 when not limited.
	PerMinute float64
	// Utilisation is the share of the budget used over the last minute:
	// calls in the last minute over PerMinute, for the busiest channel
	// when the budget is per channel.
	Utilisation float64
}

type methodStats struct {
	calls, limited          int64
	wait, lastWait, maxWait time.Duration
}

// window counts calls in the current and the previous minute, which
// estimates the calls in the last sixty seconds without keeping each.
type window struct {
	minute    int64 // the current minute since the epoch
	cur, prev int
}

func (w *window) roll(now time.Time) {
	m := now.Unix() / 60
	switch {
	case m == w.minute:
	case m == w.minute+1:
		w.minute, w.prev, w.cur = m, w.cur, 0
	default:
		w.minute, w.prev, w.cur = m, 0, 0
	}
}

func (w *window) add(now time.Time) {
	w.roll(now)
	w.cur++
}

// lastMinute is the estimate of the calls in the sixty seconds up to now.
func (w *window) lastMinute(now time.Time) float64 {
	w.roll(now)
	into := float64(now.Unix()%60) / 60
	return float64(w.prev)*(1-into) + float64(w.cur)
}

// Methods is the calls of each Web API method made since the Transport
// was made, with their waits and budgets now.
func (l *Transport) Methods() map[string]MethodStats {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]MethodStats{}
	for name, m := range l.methods {
		out[name] = MethodStats{Calls: m.calls, RateLimited: m.limited, Wait: m.wait, LastWait: m.lastWait, MaxWait: m.maxWait}
	}
	for _, q := range l.queues {
		s := out[q.method]
		lim := l.limits[q.method]
		s.Waiting += len(q.waiting)
		if lim.rate > 0 {
			perMinute := lim.rate * 60 * q.penalty
			if s.PerMinute == 0 || perMinute < s.PerMinute {
				s.PerMinute = perMinute
			}
			s.Utilisation = max(s.Utilisation, q.used.lastMinute(now)/perMinute)
		}
		out[q.method] = s
	}
	return out
}
