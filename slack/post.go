package slack

import (
	"context"
	"errors"
	"fmt"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/tools"
)

// Posting answers. Slack refuses messages over its limits; repair already
// keeps answers within them, but should Slack still refuse one, it is sent
// again in halves, and a single block it refuses is sent as plain text:
// the answer always arrives, whole. A 429 waits Retry-After and tries again.

// maxRateLimitWaits bounds how many 429s one message waits out.
const maxRateLimitWaits = 6

// plainChunk is the size of a plain-text message when Block Kit is refused.
const plainChunk = 3500

// refused reports whether Slack refused a message for its content, which a
// smaller message or plain text may fix.
func refused(err error) bool {
	var se slackapi.SlackErrorResponse
	if !errors.As(err, &se) {
		return false
	}
	switch se.Err {
	case "invalid_blocks", "msg_too_long", "msg_blocks_too_long", "invalid_blocks_format":
		return true
	}
	return false
}

// withRetry calls f, waiting out rate limits.
func withRetry(ctx context.Context, f func() error) error {
	for i := 0; ; i++ {
		err := f()
		var rl *slackapi.RateLimitedError
		if !errors.As(err, &rl) || i >= maxRateLimitWaits {
			return err
		}
		wait := max(rl.RetryAfter, 100*time.Millisecond)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// send posts m in the thread, or replaces the message at updateTS with it,
// in the voice of ctx's request (see voice.go). Slack unfurls none of the
// links of a post: a preview is a fetch the message's author chose.
func (b *Bot) send(ctx context.Context, channel, threadTS, updateTS string, m blockkit.Message) (string, error) {
	m = b.voiced(ctx, m)
	opts := []slackapi.MsgOption{slackapi.MsgOptionText(m.Text, false)}
	if len(m.Blocks) > 0 {
		opts = append(opts, slackapi.MsgOptionBlocks(m.Blocks...))
	}
	if updateTS == "" {
		opts = append(opts, slackapi.MsgOptionDisableLinkUnfurl(), slackapi.MsgOptionDisableMediaUnfurl())
		if threadTS != "" {
			opts = append(opts, slackapi.MsgOptionTS(threadTS))
		}
	}
	// The options are fixed before the first try: a retry sends the same
	// request again.
	ts := updateTS
	err := withRetry(ctx, func() error {
		var err error
		if updateTS != "" {
			_, _, _, err = b.api.UpdateMessageContext(ctx, channel, updateTS, opts...)
			return err
		}
		_, ts, err = b.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// deliver posts messages in order — the first in place of the message at
// updateTS when there is one — falling back as Slack requires. replaced
// reports whether the message at updateTS now holds (the start of) the
// first message, even when a later one failed.
func (b *Bot) deliver(ctx context.Context, channel, threadTS, updateTS string, msgs []blockkit.Message) (replaced bool, err error) {
	for i, m := range msgs {
		u := ""
		if i == 0 {
			u = updateTS
		}
		if err := b.deliverOne(ctx, channel, threadTS, u, m, &replaced); err != nil {
			return replaced, err
		}
	}
	return replaced, nil
}

func (b *Bot) deliverOne(ctx context.Context, channel, threadTS, updateTS string, m blockkit.Message, replaced *bool) error {
	_, err := b.send(ctx, channel, threadTS, updateTS, m)
	if err == nil && updateTS != "" {
		*replaced = true
	}
	if err == nil || !refused(err) {
		return err
	}
	b.log.Warn("slack refused a message; sending it in smaller parts", zap.Error(slackError(err)), zap.Int("blocks", len(m.Blocks)))
	if len(m.Blocks) > 1 {
		half := len(m.Blocks) / 2
		first := blockkit.Message{Text: m.Text, Blocks: m.Blocks[:half], Controls: m.Controls}
		second := blockkit.Message{Text: m.Text, Blocks: m.Blocks[half:], Controls: m.Controls}
		if err := b.deliverOne(ctx, channel, threadTS, updateTS, first, replaced); err != nil {
			return err
		}
		return b.deliverOne(ctx, channel, threadTS, "", second, replaced)
	}
	if onlyButtons(m) && updateTS == "" {
		b.log.Warn("slack refused the feedback buttons; the answer stands without them")
		return nil
	}
	// One block Slack will not take: its text, as plain messages.
	text := blockText(m)
	if text == "" {
		text = m.Text
	}
	for i, part := range blockkit.SplitMrkdwn(text, plainChunk) {
		u := ""
		if i == 0 {
			u = updateTS
		}
		if _, err := b.send(ctx, channel, threadTS, u, blockkit.Message{Text: part}); err != nil {
			return fmt.Errorf("plain text: %w", err)
		}
		if u != "" {
			*replaced = true
		}
	}
	return nil
}

// blockText is the readable text of a message's blocks.
func blockText(m blockkit.Message) string {
	var out []byte
	for _, bl := range m.Blocks {
		switch x := bl.(type) {
		case *slackapi.SectionBlock:
			if x.Text != nil {
				out = append(out, x.Text.Text...)
				out = append(out, '\n')
			}
			for _, f := range x.Fields {
				out = append(out, f.Text...)
				out = append(out, '\n')
			}
		case *slackapi.HeaderBlock:
			if x.Text != nil {
				out = append(out, "*"+x.Text.Text+"*\n"...)
			}
		case *slackapi.ContextBlock:
			for _, e := range x.ContextElements.Elements {
				if t, ok := e.(*slackapi.TextBlockObject); ok {
					out = append(out, t.Text...)
					out = append(out, '\n')
				}
			}
		case *slackapi.MarkdownBlock:
			out = append(out, x.Text...)
			out = append(out, '\n')
		}
	}
	return string(out)
}

// answerFromText is a short answer (a failure, a note) as Block Kit: the
// Markdown text, then the note (already mrkdwn) in small print.
func answerFromText(text, note string) []blockkit.Message {
	var msgs []blockkit.Message
	if text != "" {
		msgs = blockkit.FromMarkdown(text)
	}
	if note != "" {
		msgs = append(msgs, noteMessage(note))
	}
	return msgs
}

// noteMessage is a line of mrkdwn in a context block.
func noteMessage(note string) blockkit.Message {
	return blockkit.Message{Text: note, Blocks: []slackapi.Block{
		slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, note, false, false))}}
}

// answer posts the session's answer in place of its progress message —
// with a note when it was stopped or interrupted, and the feedback buttons
// — after saving the session's record, so that a click on those buttons
// finds it.
func (r *run) answer(ctx context.Context, log *zap.Logger, res *agent.Result, started time.Time) {
	b := r.b
	rep := res.Report
	// Read once: a Stop click may still come while the answer is written.
	stopper := r.stoppedBy()
	note, status := "", rep.Status
	switch {
	case r.interrupted.Load():
		note, status = "_Interrupted: the bot was restarting. Ask again in a minute._", "interrupted"
	case stopper != "":
		note, status = fmt.Sprintf("_Stopped by <@%s>._", stopper), "stopped"
	}
	msgs := rep.Slack
	written := len(msgs) > 0 && !rep.Synthetic()
	if !written {
		msgs = answerFromText(rep.Text(), note)
	}
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer pcancel()
	_ = b.records.putSession(pctx, state.SessionRecord{ID: r.id, User: r.req.user, Channel: r.req.channel,
		ThreadTS: r.req.threadTS, Agent: r.agent.Name, Status: status, Turns: res.Turns, ToolCalls: res.ToolCalls,
		InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens, CostUSD: res.Usage.CostUSD,
		Started: started, Duration: time.Since(started), Report: tools.Snippet(rep.Text(), maxRecordedReport),
		Approvals: r.decisions.all()})
	if written {
		msgs = r.asFile(pctx, log, rep, msgs)
		if note != "" {
			msgs = append(msgs, noteMessage(note))
		}
	}
	msgs = r.withFeedback(msgs, rep, stopper)
	if err := r.display.replaceWith(pctx, msgs); err != nil {
		log.Warn("the answer could not be posted", zap.Error(slackError(err)))
	}
	_ = b.marks.mark(pctx, threadKey(r.req.channel, r.req.threadTS), threadTTL)
	b.metrics.SessionEnded(r.agent.Name, status, time.Since(r.received))
	log.Info("answered", zap.String("session", r.id), zap.String("status", rep.Status), zap.Int("turns", res.Turns),
		zap.Int("messages", len(msgs)), zap.Float64("cost_usd", res.Usage.CostUSD))
}

// maxRecordedReport bounds the answer kept in a session record.
const maxRecordedReport = 16 << 10
