package slack

import (
	"context"
	"errors"
	"regexp"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/slackbot/slackbot/redact"
)

// onEvent handles an Events API event seen for the first time.
func (b *Bot) onEvent(ctx context.Context, ev slackevents.EventsAPIEvent) {
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		if e.BotID != "" || e.User == "" || e.User == b.botUserID || !onOff(b.cfg.Mentions) {
			return
		}
		thread := e.ThreadTimeStamp
		if thread == "" {
			thread = e.TimeStamp
		}
		b.start(request{kind: kindMention, channel: e.Channel, user: e.User, text: b.stripMention(e.Text), ts: e.TimeStamp, threadTS: thread,
			team: eventTeam(ev), files: filesOf(e.Files)})
	case *slackevents.MessageEvent:
		b.onMessage(ctx, e, eventTeam(ev))
	case *slackevents.AgentSessionStoppedEvent:
		b.agentStop(e)
	case *slackevents.ChannelCreatedEvent:
		b.channels.set(e.Channel.ID, e.Channel.Name)
	case *slackevents.ChannelRenameEvent:
		b.channels.set(e.Channel.ID, e.Channel.Name)
	case *slackevents.GroupRenameEvent:
		b.channels.set(e.Channel.ID, e.Channel.Name)
	default:
		b.onAgentView(ev)
	}
}

// onMessage handles a plain message: a DM, or a reply in a thread the bot
// answered. Bots (this one included), edits and deletions are ignored, and
// so are messages that mention the bot: app_mention brings those.
func (b *Bot) onMessage(ctx context.Context, e *slackevents.MessageEvent, team string) {
	switch {
	case e.BotID != "" || e.User == "" || e.User == b.botUserID:
		return
	case e.SubType != "" && e.SubType != "file_share" && e.SubType != "thread_broadcast":
		return
	case strings.Contains(e.Text, "<@"+b.botUserID+">") && !e.IsIM():
		return
	}
	thread := e.ThreadTimeStamp
	if thread == "" {
		thread = e.TimeStamp
	}
	var files []attachedFile
	if e.Message != nil {
		files = filesOf(e.Message.Files)
	}
	if e.IsIM() {
		if onOff(b.cfg.DMs) {
			b.start(request{kind: kindDM, channel: e.Channel, user: e.User, text: b.stripMention(e.Text), ts: e.TimeStamp, threadTS: thread, team: team, files: files})
		}
		return
	}
	if e.ThreadTimeStamp == "" || e.ThreadTimeStamp == e.TimeStamp || !onOff(b.cfg.ThreadFollowups) {
		return
	}
	// On the envelope loop: the call is bounded, and skipped while the
	// store fails.
	ours, err := b.marks.marked(ctx, threadKey(e.Channel, e.ThreadTimeStamp))
	if err != nil || !ours {
		return
	}
	b.start(request{kind: kindMention, channel: e.Channel, user: e.User, text: e.Text, ts: e.TimeStamp, threadTS: thread, followup: true, team: team,
		files: files})
}

func (b *Bot) onSlash(ctx context.Context, evt socketmode.Event) {
	cmd, ok := evt.Data.(slackapi.SlashCommand)
	if !ok || b.cfg.SlashCommand == "" || cmd.Command != b.cfg.SlashCommand {
		return
	}
	if !b.once(ctx, "envelope:"+evt.Request.EnvelopeID) {
		return
	}
	text := strings.TrimSpace(cmd.Text)
	if text == "" {
		_ = b.ephemeral(ctx, cmd.ChannelID, cmd.UserID, "", "Ask a question after the command, like `"+cmd.Command+" what changed in the last release?`")
		return
	}
	b.start(request{kind: kindSlash, channel: cmd.ChannelID, user: cmd.UserID, text: text, team: cmd.TeamID, enterprise: cmd.EnterpriseID})
}

func (b *Bot) onInteractive(ctx context.Context, evt socketmode.Event) {
	cb, ok := evt.Data.(slackapi.InteractionCallback)
	if ok && cb.Type == slackapi.InteractionTypeViewClosed {
		b.onViewClosed(cb)
	}
	if !ok || cb.Type != slackapi.InteractionTypeBlockActions {
		return
	}
	b.clickFromOwnOrg(ctx, cb, b.onActions)
}

// onActions handles the actions of a click by a person the bot answers.
func (b *Bot) onActions(ctx context.Context, cb slackapi.InteractionCallback) {
	for _, a := range cb.ActionCallback.BlockActions {
		switch a.ActionID {
		case stopAction:
			b.stop(ctx, a.Value, cb.User.ID, cb.Channel.ID)
		case feedbackAction:
			b.onFeedback(cb, a)
		case approveAction, denyAction, approveThreadAction:
			b.onApproval(a.ActionID, a.Value, cb.User.ID, cb.Channel.ID)
		case elicitOpenAction, elicitDeclineAction, elicitCancelAction:
			b.onElicitAction(cb, a)
		}
	}
}

var mentionRe = regexp.MustCompile(`<@[A-Z0-9]+>`)

// stripMention removes the bot's own mention from a question; other
// mentions stay, as the people they name matter to it.
func (b *Bot) stripMention(text string) string {
	text = strings.ReplaceAll(text, "<@"+b.botUserID+">", "")
	return strings.TrimSpace(text)
}

func threadKey(channel, ts string) string { return "thread:" + channel + "/" + ts }

func onOff(b *bool) bool { return b == nil || *b }

// slackError words a Slack API error by its code alone, and any other
// error as redact.Error does, without URL or address.
func slackError(err error) error {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		return errors.New("slack: " + se.Err)
	}
	return redact.Error("slack", err)
}
