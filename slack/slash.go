package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/blockkit"
)

// openSlashThread posts the message a slash command's answer hangs under —
// the question, in the channel, or in the asker's DM when the bot is not a
// member there — and makes it the request's thread.
func (r *run) openSlashThread(ctx context.Context) error {
	b := r.b
	q := blockkit.Message{Text: "Question from <@" + r.req.user + ">", Blocks: []slackapi.Block{
		slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType,
			fmt.Sprintf("<@%s> asked with %s:", r.req.user, b.cfg.SlashCommand), false, false)),
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.PlainTextType, blockkitClamp(r.req.text), false, false), nil, nil),
	}}
	ts, err := b.send(ctx, r.req.channel, "", "", q)
	if err != nil && isSlackErr(err, "not_in_channel", "channel_not_found") {
		ch, _, _, oerr := b.api.OpenConversationContext(ctx, &slackapi.OpenConversationParameters{Users: []string{r.req.user}})
		if oerr != nil {
			return oerr
		}
		r.req.channel = ch.ID
		ts, err = b.send(ctx, r.req.channel, "", "", q)
	}
	if err != nil {
		return err
	}
	r.req.threadTS = ts
	return nil
}

// blockkitClamp keeps a question within a section's plain text limit.
func blockkitClamp(s string) string {
	const max = 2900
	if blockkit.Len(s) <= max {
		return s
	}
	r := []rune(s)
	for blockkit.Len(string(r)) > max-1 {
		r = r[:len(r)*9/10]
	}
	return string(r) + "…"
}

// isSlackErr reports whether err is a Slack error with one of the codes.
func isSlackErr(err error, codes ...string) bool {
	var se slackapi.SlackErrorResponse
	return errors.As(err, &se) && slices.Contains(codes, se.Err)
}
