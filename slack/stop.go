package slack

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack/slackevents"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/slack/ratelimit"
)

// Stop. The progress message's Stop button stops its session, queued or
// running, when its asker or an admin clicks it; anyone else is told so.
// Slack's own Stop on a streamed session's agent session does the same.
// Slack hands the click to any replica's connection: the one running the
// session stops it at once; another records the stop in the state store,
// and the replica running the session, which looks for it every stopPoll
// with one store call, stops it.

// stopAction is the action id of the Stop button on a progress message.
const stopAction = "slackbot_stop"

// stopRefusal is what someone who may not stop a session is told.
const stopRefusal = "Only the person who asked can stop this."

// stopPoll is how often a session, queued or running, looks in the state
// store for a Stop click another replica recorded.
const stopPoll = time.Second

// stopPrefix starts the keys of recorded stops.
const stopPrefix = "stop:"

// stopKey marks that session was stopped from another replica; whoKey
// marks who did.
func stopKey(session string) string      { return stopPrefix + session }
func whoKey(session, user string) string { return stopPrefix + session + ":" + user }

// stopValue is the Stop button's value: the session and its asker, so
// that a replica not running the session can still tell who may stop it.
func stopValue(session, asker string) string { return session + "|" + asker }

// parseStopValue reads a Stop button's value back; a button of an older
// release carries the session alone, and asker is then "".
func parseStopValue(v string) (session, asker string) {
	session, asker, _ = strings.Cut(v, "|")
	return session, asker
}

// stop handles a Stop click by user on the session the button's value
// names.
func (b *Bot) stop(ctx context.Context, value, user, channel string) {
	id, asker := parseStopValue(value)
	b.mu.Lock()
	r := b.running[id]
	b.mu.Unlock()
	b.stopFor(id, asker, user, channel, r, true)
}

// agentStop handles Slack's own Stop on a thread's agent session exactly
// as a click on Stop: the session streaming one of the messages Slack
// halted stops, here or, recorded in the store, on the replica running it.
func (b *Bot) agentStop(e *slackevents.AgentSessionStoppedEvent) {
	if e.User == "" || len(e.StreamingMessageTimestamps) == 0 {
		return // no stream of ours was open: nothing runs to stop
	}
	for _, ts := range e.StreamingMessageTimestamps {
		id := streamStopID(e.Channel, ts)
		b.mu.Lock()
		var r *run
		for _, x := range b.running {
			if x.req.channel == e.Channel && x.display.stopID() == id {
				r = x
				break
			}
		}
		b.mu.Unlock()
		b.stopFor(id, "", e.User, e.Channel, r, false)
	}
}

// stopFor stops on user's behalf the session stopID names: r when this
// replica runs it, else the replica that does, through the store. Only
// its asker or an admin may; anyone else is told so when the asker is
// known. orphans settles the progress message of a session no replica
// runs.
func (b *Bot) stopFor(id, asker, user, channel string, r *run, orphans bool) {
	if r != nil {
		asker = r.req.user
	}
	admin := slices.Contains(b.cfg.Admins, user)
	if asker != "" && user != asker && !admin {
		// Posted off the envelope loop: a spent ephemeral budget must not
		// hold up the acks of the envelopes behind this one.
		b.sessions.Add(1)
		go func() {
			defer b.sessions.Done()
			defer b.survive("a Stop refusal")
			_ = b.ephemeral(ratelimit.WithPriority(b.work, ratelimit.Note), channel, user, "", stopRefusal)
		}()
		return
	}
	if r != nil {
		r.stopBy(user)
		return
	}
	// Not here: the store is called off the envelope loop.
	b.sessions.Add(1)
	go func() {
		defer b.sessions.Done()
		defer b.survive("a Stop for another replica")
		sctx, cancel := context.WithTimeout(b.work, b.leaseTTL)
		defer cancel()
		if orphans && b.settleIfOrphaned(sctx, id) {
			return // no replica runs it: nothing to stop, its message is settled
		}
		// Who first, so that the replica finding the stop finds who too.
		err := b.marks.mark(sctx, whoKey(id, user), b.leaseTTL)
		if err == nil {
			err = b.marks.mark(sctx, stopKey(id), b.leaseTTL)
		}
		if err != nil {
			b.log.Warn("a Stop click for a session on another replica could not be recorded", zap.String("session", id), zap.String("by", user))
			return
		}
		b.log.Info("stop recorded for the replica running the session", zap.String("session", id), zap.String("by", user))
	}()
}

// stoppable registers the session for Stop clicks, here and recorded by
// other replicas, and returns the context a Stop cancels; done ends that.
func (r *run) stoppable(ctx context.Context) (sctx context.Context, done func()) {
	b := r.b
	sctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	b.mu.Lock()
	b.running[r.id] = r
	b.mu.Unlock()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		defer b.survive("Stop polling")
		r.watchStops(sctx)
	}()
	return sctx, func() {
		cancel()
		<-watched
		b.mu.Lock()
		delete(b.running, r.id)
		b.mu.Unlock()
	}
}

// stoppedBy is who clicked Stop on the session, "" while nobody has.
func (r *run) stoppedBy() string {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	return r.stopper
}

// stopBy stops the session on user's behalf; the first to stop it is the
// one named in its answer.
func (r *run) stopBy(user string) {
	r.b.mu.Lock()
	if r.stopper == "" {
		r.stopper = user
	}
	r.b.mu.Unlock()
	r.cancel()
}

// watchStops looks in the state store every stopPoll, until ctx ends, for
// a stop of the session another replica recorded, and stops the session
// on behalf of its asker or the admin who clicked.
func (r *run) watchStops(ctx context.Context) {
	b := r.b
	t := time.NewTicker(stopPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		stopped, err := b.marks.marked(ctx, stopKey(r.display.stopID()))
		if err != nil || !stopped {
			continue // a failing store is asked again at the next tick
		}
		if who := r.stopperOf(ctx); who != "" {
			b.log.Info("stopped from another replica", zap.String("session", r.id), zap.String("by", who))
			r.stopBy(who)
			return
		}
	}
}

// stopperOf is who recorded the session's stop: its asker or an admin,
// "" when neither did.
func (r *run) stopperOf(ctx context.Context) string {
	who := append([]string{r.req.user}, r.b.cfg.Admins...)
	for _, user := range slices.Compact(who) {
		if ok, err := r.b.marks.marked(ctx, whoKey(r.display.stopID(), user)); err == nil && ok {
			return user
		}
	}
	return ""
}
