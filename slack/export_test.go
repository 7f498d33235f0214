package slack

import "github.com/slackbot/slackbot/agent"

// ObserveSession hands e to the display of the session running here in
// the thread threadTS of channel, as the session's observer would, and
// reports whether one runs here: events no part of the agent emits yet
// (a wait on a person) are driven through the real display this way.
func (b *Bot) ObserveSession(channel, threadTS string, e agent.Event) bool {
	b.mu.Lock()
	var r *run
	for _, x := range b.running {
		if x.req.channel == channel && x.req.threadTS == threadTS && x.display != nil {
			r = x
			break
		}
	}
	b.mu.Unlock()
	if r == nil {
		return false
	}
	r.display.observe(e)
	return true
}
