package slack

import (
	"context"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/slack/ratelimit"
)

// Answers as files. An answer of more than slack.max_answer_messages
// messages, or with a table or code too wide for Slack, is uploaded whole
// as a file in the thread (files.getUploadURLExternal, the bytes, then
// files.completeUploadExternal, each through the rate limiter at the
// answer's priority), and a short message — the answer's opening line
// when it is short, and where the rest is — takes its place, voiced and
// with the feedback buttons like every answer. An upload that fails for
// any reason (a missing files:write scope, a refusal, a rate limit that
// outlasts its waits) leaves the answer to be posted as messages: it is
// never lost, and delivered once.
//
// The file is named and titled by the bot, never by the model. Its
// content is the model's: the Markdown it wrote, or the text of its
// Block Kit messages as the voice leaves them. Slack shows a file's
// content as text and notifies nobody of a mention in it.

// answerFileTitle is the title of every answer's file.
const answerFileTitle = "Answer"

// uploadTimeout bounds an upload's three calls together, so that an
// answer whose upload hangs still has most of its minute to be posted as
// messages.
const uploadTimeout = 20 * time.Second

// openingMax bounds the opening line the short message repeats.
const openingMax = 300

// asFile uploads the answer msgs of rep as a file when it should go as
// one, and returns the short message to post instead; otherwise, or when
// the upload fails, it returns msgs.
func (r *run) asFile(ctx context.Context, log *zap.Logger, rep *agent.Report, msgs []blockkit.Message) []blockkit.Message {
	b := r.b
	markdown := ""
	if len(rep.Messages) == 0 {
		markdown = rep.Content // the answer was written as Markdown
	}
	d := blockkit.AnswerAsFile(msgs, markdown, rep.Repairs, b.cfg.MaxAnswerMessages)
	if !d.AsFile {
		return msgs
	}
	name, data := "answer.md", markdown
	if strings.TrimSpace(data) == "" {
		p := b.voicePolicy(ctx) // one budget of name lookups for the whole answer
		voiced := make([]blockkit.Message, len(msgs))
		for i, m := range msgs {
			voiced[i] = blockkit.Voice(m, p)
		}
		data = blockkit.FileText(voiced)
	}
	if err := b.uploadFile(ctx, r.req.channel, r.req.threadTS, name, answerFileTitle, data); err != nil {
		why := errorCode(err)
		line := log.Info
		if b.streamRefusals.firstTime("upload: " + why) {
			line = log.Warn
		}
		line("the answer could not go as a file; posting it as messages", zap.String("why", why),
			zap.String("reason", d.Reason), zap.Int("bytes", len(data)), zap.Error(slackError(err)))
		return msgs
	}
	log.Info("the answer went as a file", zap.String("reason", d.Reason), zap.Int("bytes", len(data)), zap.Int("messages", len(msgs)))
	return []blockkit.Message{shortAnswer(msgs, name, d.Reason)}
}

// uploadFile uploads data as a file named name in the thread, waiting out
// rate limits.
func (b *Bot) uploadFile(ctx context.Context, channel, threadTS, name, title, data string) error {
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	actx := ratelimit.WithPriority(ctx, ratelimit.Answer)
	return withRetry(actx, func() error {
		_, err := b.api.UploadFileContext(actx, slackapi.UploadFileParameters{
			Filename: name, Title: title, Content: data, FileSize: len(data),
			Channel: channel, ThreadTimestamp: threadTS,
		})
		return err
	})
}

// shortAnswer is the message that stands for an answer gone as a file:
// its opening block when that is a short header or paragraph, then where
// the whole answer is and why.
func shortAnswer(msgs []blockkit.Message, name, reason string) blockkit.Message {
	where := "_The whole answer is in the file " + name + " in this thread: " + reason + "._"
	m := blockkit.Message{Text: "The whole answer is in the file " + name + " in this thread."}
	if open := opening(msgs); open != nil {
		m.Blocks = append(m.Blocks, open)
	}
	m.Blocks = append(m.Blocks, noteMessage(where).Blocks...)
	return m
}

// opening is the answer's first block when it is a header, or a section
// of at most openingMax characters without code; nil otherwise.
func opening(msgs []blockkit.Message) slackapi.Block {
	if len(msgs) == 0 || len(msgs[0].Blocks) == 0 {
		return nil
	}
	switch bl := msgs[0].Blocks[0].(type) {
	case *slackapi.HeaderBlock:
		return bl
	case *slackapi.SectionBlock:
		if bl.Text != nil && len(bl.Fields) == 0 && bl.Accessory == nil && blockkit.Len(bl.Text.Text) <= openingMax && !strings.Contains(bl.Text.Text, "```") {
			return bl
		}
	}
	return nil
}
