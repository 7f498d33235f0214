package slack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/state"
)

// A progress message must not say "working" after its session is gone,
// however the session went: SIGKILL, OOM, a lost host. Every progress
// message is recorded in the state store with the replica that owns it
// (state.Progress), and forgotten when its session concludes. Each
// replica marks itself alive in the store every third of state.lease_ttl,
// for one lease_ttl; at start-up and every half lease_ttl it settles the
// recorded messages of replicas no longer alive — the abandoned note in
// place of the message and its Stop button — and forgets them. A Stop
// click on a session no replica runs settles its message at once.
//
// A replica that cannot reach the store for longer than lease_ttl looks
// dead to the others. A message is therefore read back from Slack before
// it is settled: one that no longer shows progress (its session answered
// while the store could not be told) keeps its answer and loses only its
// record. A session still running there answers in place of the settled
// message as it would of the progress.

// randomHex is n random bytes written in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// newSessionID names a session: where it answers, for a person reading
// logs, and 64 random bits, so that no two sessions share an id — two
// slash commands in one channel have no ts to tell them apart.
func newSessionID(channel, ts string) string {
	where := strings.ReplaceAll(channel+"-"+ts, ".", "")
	return strings.TrimSuffix(where, "-") + "-" + randomHex(8)
}

// alivePrefix starts the keys of replicas' liveness marks.
const alivePrefix = "replica:"

// aliveKey names a replica's liveness mark in the state store.
func aliveKey(owner string) string { return alivePrefix + owner }

// markAlive says in the store that this replica is alive, for one lease,
// and forgets the records of its sessions that ended while the store
// could not be told.
func (b *Bot) markAlive(ctx context.Context) {
	mctx, cancel := context.WithTimeout(ctx, progressCallTimeout)
	defer cancel()
	err := b.marks.mark(mctx, aliveKey(b.owner), b.leaseTTL)
	if err != nil {
		return
	}
	for _, session := range b.undropped.take() {
		if derr := b.records.dropProgress(mctx, session); derr != nil {
			b.undropped.add(session)
		}
	}
}

// undropped is a set of session ids whose progress records are still to
// be forgotten.
type undropped struct {
	mu  sync.Mutex
	ids map[string]bool
}

// maxUndropped bounds the set: past it, a record is left for the sweep
// of another replica once this one stops.
const maxUndropped = 10000

func (u *undropped) add(session string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ids == nil {
		u.ids = map[string]bool{}
	}
	if len(u.ids) < maxUndropped {
		u.ids[session] = true
	}
}

// take empties the set and returns what it held.
func (u *undropped) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]string, 0, len(u.ids))
	for id := range u.ids {
		out = append(out, id)
	}
	clear(u.ids)
	return out
}

// reap keeps this replica marked alive and settles the progress messages
// of replicas that are not, at once and every half lease_ttl, until ctx
// ends.
func (b *Bot) reap(ctx context.Context) {
	alive := time.NewTicker(b.leaseTTL / 3)
	defer alive.Stop()
	sweep := time.NewTicker(b.leaseTTL / 2)
	defer sweep.Stop()
	b.sweepOrphans(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-alive.C:
			b.markAlive(ctx)
		case <-sweep.C:
			b.sweepOrphans(ctx)
		}
	}
}

// sweepOrphans settles every recorded progress message whose replica is
// not alive.
func (b *Bot) sweepOrphans(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, progressCallTimeout)
	list, err := b.records.progresses(lctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		return
	}
	dead := map[string]bool{}
	for _, p := range list {
		if p.Owner == b.owner {
			continue
		}
		gone, known := dead[p.Owner]
		if !known {
			var ok bool
			if gone, ok = b.ownerGone(ctx, p.Owner); !ok {
				return // the store stopped answering: tried again at the next sweep
			}
			dead[p.Owner] = gone
		}
		if gone {
			b.settleOrphan(ctx, p)
		}
	}
}

// ownerGone reports whether the replica owner is no longer alive; ok is
// false when the store could not tell.
func (b *Bot) ownerGone(ctx context.Context, owner string) (gone, ok bool) {
	if owner == b.owner {
		return false, true
	}
	mctx, cancel := context.WithTimeout(ctx, progressCallTimeout)
	defer cancel()
	alive, err := b.marks.marked(mctx, aliveKey(owner))
	if ctx.Err() != nil {
		return false, false
	}
	return !alive, err == nil
}

// settleOrphan replaces the progress message of a session whose replica
// is gone with the abandoned note, and forgets its record. A message
// Slack will no longer edit (deleted, its channel archived) is forgotten
// too; one that could not be edited for now is tried again at the next
// sweep.
func (b *Bot) settleOrphan(ctx context.Context, p state.Progress) {
	if isStreamRecord(p) {
		b.settleOrphanStream(ctx, p)
		return
	}
	sctx, cancel := context.WithTimeout(ratelimit.WithPriority(ctx, ratelimit.Settle), concludeEdit)
	defer cancel()
	shows, err := b.stillProgress(sctx, p)
	if err == nil && !shows {
		// Answered or settled already — by a replica that only looked dead
		// while the store was out of its reach and could not forget the
		// record: the answer stays, the record goes.
		b.log.Info("a recorded progress message no longer shows progress; its record is dropped", zap.String("session", p.Session))
		b.dropRecord(ctx, p.Session)
		return
	}
	if err == nil {
		_, err = b.send(sctx, p.Channel, "", p.TS, abandonedMessage())
	}
	if err != nil && !isSlackErr(err, "message_not_found", "channel_not_found", "is_archived", "cant_update_message") {
		b.log.Warn("the progress message of a replica that died could not be settled", zap.String("session", p.Session),
			zap.Error(slackError(err)))
		return
	}
	b.log.Info("settled the progress message of a replica that died", zap.String("session", p.Session),
		zap.String("channel", p.Channel), zap.String("ts", p.TS))
	b.dropRecord(ctx, p.Session)
}

// dropRecord forgets session's progress record.
func (b *Bot) dropRecord(ctx context.Context, session string) {
	dctx, cancel := context.WithTimeout(ctx, progressCallTimeout)
	defer cancel()
	_ = b.records.dropProgress(dctx, session)
}

// stillProgress reports whether the recorded message still shows progress
// in Slack: its Stop button is there. A message Slack no longer has is
// reported as not found, an error the caller forgets the record for.
func (b *Bot) stillProgress(ctx context.Context, p state.Progress) (bool, error) {
	var page []slackapi.Message
	err := withRetry(ctx, func() error {
		var err error
		page, _, _, err = b.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{
			ChannelID: p.Channel, Timestamp: p.TS, Oldest: p.TS, Inclusive: true, Limit: 200})
		return err
	})
	if err != nil {
		if isSlackErr(err, "thread_not_found", "channel_not_found") {
			return false, nil
		}
		return false, err
	}
	for _, m := range page {
		if m.Timestamp == p.TS {
			return isProgress(m), nil
		}
	}
	return false, nil
}

// abandonedMessage replaces a progress message whose session died.
func abandonedMessage() blockkit.Message {
	return blockkit.Message{Text: "No answer: the bot stopped while working on this.", Blocks: []slackapi.Block{
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, abandonedNote, false, false), nil, nil)}}
}

// settleIfOrphaned settles the progress message of session id, clicked
// Stop on here while no session of that id runs here, when its record
// names a replica that is no longer alive. It reports whether it did.
func (b *Bot) settleIfOrphaned(ctx context.Context, id string) bool {
	lctx, cancel := context.WithTimeout(ctx, progressCallTimeout)
	list, err := b.records.progresses(lctx)
	cancel()
	if err != nil {
		return false
	}
	for _, p := range list {
		if p.Session != id {
			continue
		}
		if gone, ok := b.ownerGone(ctx, p.Owner); ok && gone {
			b.settleOrphan(ctx, p)
			return true
		}
		return false
	}
	return false
}

// liveRecord is a live message's record in the state store — a progress
// message or an open stream — with this replica as its owner: written when
// the message is posted, dropped when its session ends, or with the next
// liveness mark when the store could not be told.
type liveRecord struct {
	mu       sync.Mutex
	recorded bool
}

// put records the message at ts of session in channel (a stream with
// the tasks it shows running).
func (l *liveRecord) put(ctx context.Context, b *Bot, session, channel, ts string, tasks ...state.OpenTask) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), progressCallTimeout)
	defer cancel()
	err := b.records.putProgress(rctx, state.Progress{Session: session, Channel: channel, TS: ts, Owner: b.owner, Tasks: tasks})
	l.mu.Lock()
	l.recorded = err == nil
	l.mu.Unlock()
}

// update rewrites the record of a message recorded and not yet dropped
// with the tasks it shows running; a failure keeps the record as it was.
func (l *liveRecord) update(ctx context.Context, b *Bot, session, channel, ts string, tasks []state.OpenTask) {
	l.mu.Lock()
	defer l.mu.Unlock() // a drop waits: no update lands after it
	if !l.recorded {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), progressCallTimeout)
	defer cancel()
	_ = b.records.putProgress(rctx, state.Progress{Session: session, Channel: channel, TS: ts, Owner: b.owner, Tasks: tasks})
}

// drop forgets session's record, once, if it was written.
func (l *liveRecord) drop(ctx context.Context, b *Bot, session string) {
	l.mu.Lock()
	recorded := l.recorded
	l.recorded = false
	l.mu.Unlock()
	if !recorded {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), progressCallTimeout)
	defer cancel()
	if err := b.records.dropProgress(fctx, session); err != nil {
		b.undropped.add(session)
	}
}

// forget drops the progress message's record once its session has
// concluded, whatever the ending.
func (p *progress) forget(ctx context.Context) { p.rec.drop(ctx, p.b, p.id) }

// withoutLive leaves out of msgs, progress messages of a thread other than
// the caller's own, those of sessions still alive: recorded in list, and
// owned by a replica that is alive (a follow-up queued behind the lease).
func (b *Bot) withoutLive(ctx context.Context, list []state.Progress, msgs []slackapi.Message) []slackapi.Message {
	owners := map[string]string{} // ts → owner
	for _, p := range list {
		owners[p.TS] = p.Owner
	}
	var out []slackapi.Message
	for _, m := range msgs {
		owner, recorded := owners[m.Timestamp]
		if recorded {
			if gone, ok := b.ownerGone(ctx, owner); ok && !gone {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// abandonedNote replaces a progress message whose session died with its
// replica: the answer it stood for will not come.
const abandonedNote = "_No answer: the bot stopped while working on this. Please ask again._"

// isProgress reports whether a message of the thread is one of the bot's
// progress messages: the only ones carrying the Stop button.
func isProgress(m slackapi.Message) bool {
	for _, bl := range m.Blocks.BlockSet {
		a, ok := bl.(*slackapi.ActionBlock)
		if !ok || a.Elements == nil {
			continue
		}
		for _, el := range a.Elements.ElementSet {
			if btn, ok := el.(*slackapi.ButtonBlockElement); ok && btn.ActionID == stopAction {
				return true
			}
		}
	}
	return false
}

// closeAbandoned replaces progress messages left in a thread by sessions
// that can no longer answer. Only the holder of the thread's lease calls
// it, and a session shows progress only while holding that lease, so every
// progress message but the caller's own belongs to a session that died
// with its replica (or lost its answer) and would otherwise say "working"
// forever.
func (b *Bot) closeAbandoned(ctx context.Context, channel string, msgs []slackapi.Message) {
	for _, m := range msgs {
		if _, err := b.send(ctx, channel, "", m.Timestamp, abandonedMessage()); err != nil {
			b.log.Warn("an abandoned progress message could not be closed", zap.Error(slackError(err)))
			continue
		}
		b.log.Info("closed the progress message of a session that died", zap.String("channel", channel), zap.String("ts", m.Timestamp))
	}
}
