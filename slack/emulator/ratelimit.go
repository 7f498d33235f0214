package emulator

import (
	"math"
	"time"
)

// Limit is a Web API method's rate limit as the emulator enforces it: a
// token bucket of Burst calls, refilled at PerMinute a minute, for the
// whole workspace or, with PerChannel, for each channel. A call that finds
// its bucket empty is answered 429 with Retry-After, as Slack answers.
type Limit struct {
	PerMinute  float64
	Burst      int
	PerChannel bool
}

// SlackLimits are Slack's published limits for the methods the emulator
// serves: chat.postMessage one a second in each channel, tier 2 20 a
// minute, tier 3 50, tier 4 100. Slack allows short bursts without
// publishing their size; these buckets hold five for chat.postMessage and
// twelve seconds' worth for the tiers. apps.connections.open and auth.test
// are left unlimited.
func SlackLimits() map[string]Limit {
	const tier2, tier3, tier4 = 20, 50, 100
	tier := func(perMinute float64) Limit { return Limit{PerMinute: perMinute, Burst: int(perMinute / 5)} }
	return map[string]Limit{
		"chat.postMessage":            {PerMinute: 60, Burst: 5, PerChannel: true},
		"chat.update":                 tier(tier3),
		"chat.delete":                 tier(tier3),
		"chat.postEphemeral":          tier(tier4),
		"conversations.replies":       tier(tier3),
		"conversations.info":          tier(tier3),
		"conversations.open":          tier(tier3),
		"users.info":                  tier(tier4),
		"reactions.add":               tier(tier3),
		"reactions.remove":            tier(tier2),
		"assistant.threads.setStatus": tier(tier4),
		"chat.startStream":            tier(tier2),
		"chat.stopStream":             tier(tier2),
		"chat.appendStream":           tier(tier4),
		"agents.sessions.setStatus":   tier(tier3),
		"agents.sessions.rename":      tier(tier3),

		"assistant.threads.setSuggestedPrompts": tier(tier3),
		"files.getUploadURLExternal":            tier(tier4),
		"files.completeUploadExternal":          tier(tier4),
	}
}

// bucket is one limit's tokens at a time.
type bucket struct {
	tokens float64
	at     time.Time
}

// takeToken takes a token from the bucket of a call, or returns how long
// until there is one; s.mu held.
func (s *Server) takeToken(method, channel string) time.Duration {
	lim, ok := s.opts.RateLimits[method]
	if !ok || lim.PerMinute <= 0 {
		return 0
	}
	key := method
	if lim.PerChannel {
		key += ":" + channel
	}
	now := time.Now()
	rate := lim.PerMinute / 60
	b, seen := s.buckets[key]
	if !seen {
		b = bucket{tokens: float64(lim.Burst), at: now}
	}
	b.tokens = min(float64(lim.Burst), b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	if b.tokens < 1 {
		s.buckets[key] = b
		return time.Duration(math.Ceil((1 - b.tokens) / rate * float64(time.Second)))
	}
	b.tokens--
	s.buckets[key] = b
	return 0
}
