package slack

import (
	"context"
	"slices"
	"strings"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/llm"
)

// history is the thread so far as user and assistant turns, oldest first,
// without the question itself, bounded by slack.history. Progress messages
// are not part of it: the one at own is this session's, and any other was
// left by a session that died, and is returned as abandoned. The files of
// the messages in it are listed in their turns, and returned: the model may
// fetch those (threadfiles.go).
func (b *Bot) history(ctx context.Context, req request, own string) (turns []llm.Message, abandoned []slackapi.Message, files []threadFile) {
	if req.threadTS == "" || req.threadTS == req.ts && !req.followup {
		return nil, nil, nil
	}
	msgs, err := b.replies(ctx, req.channel, req.threadTS)
	if err != nil {
		b.log.Warn("thread history unavailable; answering without it", zap.Error(slackError(err)))
		return nil, nil, nil
	}
	var out []llm.Message
	chars := 0
	names := b.newNameBook()
	for i := len(msgs) - 1; i >= 0 && len(out) < b.cfg.History.MaxMessages; i-- {
		m := msgs[i]
		if m.BotID != "" && isProgress(m) {
			if m.Timestamp != own {
				abandoned = append(abandoned, m)
			}
			continue
		}
		if m.Timestamp == req.ts || strings.TrimSpace(m.Text) == "" && len(m.Files) == 0 || (m.BotID != "" && isApproval(m)) {
			continue
		}
		var msg llm.Message
		var by string // who shared the message's files
		if m.BotID != "" || m.User == b.botUserID {
			if m.BotID != "" && m.BotID != b.botID && m.User != b.botUserID {
				msg, by = llm.Message{Role: llm.RoleUser, Content: "(another bot) " + m.Text}, "another bot"
			} else {
				msg, by = llm.Message{Role: llm.RoleAssistant, Content: m.Text}, "the bot"
			}
		} else {
			by = names.name(ctx, m.User)
			msg = llm.Message{Role: llm.RoleUser, Content: by + ": " + names.mentions(ctx, b.stripMention(m.Text))}
		}
		listed, shared := listFiles(by, m)
		msg.Content += listed
		if chars+len(msg.Content) > b.cfg.History.MaxChars {
			break
		}
		chars += len(msg.Content)
		out = append(out, msg)
		files = append(files, shared...)
	}
	slices.Reverse(out)
	return out, abandoned, files
}

// maxThreadRead bounds how many messages of a thread are read to find its
// newest ones (conversations.replies pages from the oldest).
const maxThreadRead = 2000

// replies reads a thread oldest first, page by page, keeping the newest
// history.max_messages + 1 (the question may be among them).
func (b *Bot) replies(ctx context.Context, channel, ts string) ([]slackapi.Message, error) {
	keep := b.cfg.History.MaxMessages + 1
	var out []slackapi.Message
	cursor := ""
	for read := 0; read < maxThreadRead; {
		var page []slackapi.Message
		var more bool
		var next string
		err := withRetry(ctx, func() error {
			var err error
			page, more, next, err = b.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: ts, Cursor: cursor, Limit: 200})
			return err
		})
		if err != nil {
			return nil, err
		}
		read += len(page)
		for _, m := range page {
			noteAuthor(ctx, m.User)
		}
		out = append(out, page...)
		if len(out) > keep {
			out = out[len(out)-keep:]
		}
		if !more || next == "" {
			break
		}
		cursor = next
	}
	return out, nil
}
