package slack

import (
	"context"
	"strings"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/state"
)

// A stream must not stay open after its session is gone, however the
// session went. Like a progress message, an open stream is recorded in
// the state store with its replica as owner, and forgotten when its
// session ends; the reaper of another replica ends the stream of a
// replica that died with the abandoned note (reaper.go).

// streamRecordPrefix marks the records of streams among the progress
// records.
const streamRecordPrefix = "stream|"

func isStreamRecord(p state.Progress) bool { return strings.HasPrefix(p.Session, streamRecordPrefix) }

// streamRecordKey names the record of session id's stream in the thread
// threadTS of channel.
func streamRecordKey(channel, threadTS, id string) string {
	return streamRecordPrefix + threadKey(channel, threadTS) + "|" + id
}

// settleLeftovers settles what sessions of req's thread whose replica died
// left there: their progress messages among abandoned (the thread's,
// other than the caller's own) and their open streams. Only the holder of
// the thread's lease calls it, and the store's live records are listed
// once for both. A message or stream of a replica still alive (a session
// there waiting for the thread) is left alone; without a store to ask,
// every progress message is taken as abandoned and every stream left to
// the reaper's sweep.
func (b *Bot) settleLeftovers(ctx context.Context, req request, abandoned []slackapi.Message) {
	streams := req.threadTS != "" && (req.threadTS != req.ts || req.followup) // else a new thread: no session was here before
	if len(abandoned) == 0 && !streams {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, progressCallTimeout)
	list, err := b.records.progresses(lctx)
	cancel()
	if err != nil {
		b.closeAbandoned(ctx, req.channel, abandoned)
		return
	}
	b.closeAbandoned(ctx, req.channel, b.withoutLive(ctx, list, abandoned))
	if !streams {
		return
	}
	prefix := streamRecordKey(req.channel, req.threadTS, "")
	for _, p := range list {
		if !strings.HasPrefix(p.Session, prefix) || p.Owner == b.owner {
			continue
		}
		if gone, ok := b.ownerGone(ctx, p.Owner); ok && gone {
			b.settleOrphanStream(ctx, p)
		}
	}
}

// settleOrphanStream ends the stream of a session whose replica is gone
// with the abandoned note, and forgets its record; a stream Slack already
// ended (or no longer has) is forgotten too.
func (b *Bot) settleOrphanStream(ctx context.Context, p state.Progress) {
	sctx, cancel := context.WithTimeout(ratelimit.WithPriority(ctx, ratelimit.Settle), concludeEdit)
	defer cancel()
	m := b.voiced(sctx, abandonedMessage())
	opts := []slackapi.MsgOption{slackapi.MsgOptionBlocks(m.Blocks...)}
	if len(p.Tasks) > 0 {
		// The tasks the stream last showed running end as unfinished.
		chunks := make([]slackapi.StreamChunk, 0, len(p.Tasks))
		for _, t := range p.Tasks {
			chunks = append(chunks, task{id: t.ID, title: t.Title, status: slackapi.TaskCardStatusError, output: unfinished}.chunk())
		}
		opts = append(opts, slackapi.MsgOptionChunks(chunks...))
	}
	err := withRetry(sctx, func() error {
		_, _, err := b.api.StopStreamContext(sctx, p.Channel, p.TS, opts...)
		return err
	})
	if err != nil && !isSlackErr(err, "message_not_in_streaming_state", "message_not_found", "channel_not_found", "is_archived") {
		b.log.Warn("the stream of a replica that died could not be ended", zap.String("session", p.Session), zap.Error(slackError(err)))
		return
	}
	b.log.Info("ended the stream of a replica that died", zap.String("session", p.Session), zap.String("channel", p.Channel), zap.String("ts", p.TS))
	b.dropRecord(ctx, p.Session)
}
