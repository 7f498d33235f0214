package slack

import (
	"context"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
)

// display is how a session shows itself in its thread, from the moment it
// is taken on to its answer: a progress message (progress.go) or a
// streamed message whose tasks Slack draws as a timeline (stream.go).
// Whatever way a session ends, its display is settled: the answer, a note,
// or the message removed.
type display interface {
	// begin shows at once that the bot is on it; beginWith starts with
	// headline instead (a session waiting for its thread). Only the first
	// call shows anything.
	begin(ctx context.Context)
	beginWith(ctx context.Context, headline string)
	// queued says the session waits for a free slot.
	queued(ctx context.Context)
	// start begins showing the session's events, which observe takes;
	// stop ends that and waits for an update in flight.
	start()
	observe(e agent.Event)
	stop()
	// replaceWith delivers the answer; conclude ends a session that never
	// answered with note m, and finish one the shutdown interrupted.
	replaceWith(ctx context.Context, msgs []blockkit.Message) error
	conclude(ctx context.Context, m blockkit.Message)
	finish(ctx context.Context)
	// messageTS is the message showing the session ("" until posted).
	messageTS() string
	// stopID names the session for a Stop recorded by another replica.
	stopID() string
	// forget ends what outlives the answer (records, the agent session).
	forget(ctx context.Context)
}

// newDisplay is the display of a request: the progress message with
// slack.display: message, and where there is no thread to stream in; a
// streamed message otherwise, which falls back to the progress message
// itself when Slack or its budget will not have it.
func (b *Bot) newDisplay(req request, id string) display {
	if b.cfg.Display == config.DisplayMessage || req.threadTS == "" {
		return newProgress(b, req, id)
	}
	return newStream(b, req, id)
}

// stopID is the session's own id: its Stop button names it.
func (p *progress) stopID() string { return p.id }
