package slack

import (
	"context"
	"slices"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/slack/ratelimit"
)

// route decides which agent answers a request, or why none may: the allow
// list, the deny rules (which cover mentions and DMs as much as anything),
// then the first routing rule for the channel and the kind.
func (b *Bot) route(ctx context.Context, req request) (*config.Agent, string) {
	if len(b.cfg.Allow.Users) > 0 && !slices.Contains(b.cfg.Allow.Users, req.user) {
		return nil, "user not in slack.allow.users"
	}
	name, known := b.channelName(ctx, req.channel)
	if !known && byName(b.cfg.Routing.Deny) {
		return nil, "channel name unknown while slack.routing.deny has rules by name"
	}
	if len(b.cfg.Allow.Channels) > 0 && !matchChannel(b.cfg.Allow.Channels, req.channel, name) {
		return nil, "channel not in slack.allow.channels"
	}
	if matchChannel(b.cfg.Routing.Deny, req.channel, name) {
		return nil, "channel denied by slack.routing.deny"
	}
	for _, rule := range b.cfg.Routing.Rules {
		if (len(rule.On) == 0 || slices.Contains(rule.On, req.kind)) && matchChannel(rule.Channels, req.channel, name) {
			if a := b.conf.Agents[rule.Agent]; a != nil {
				return a, ""
			}
		}
	}
	a, err := b.defaultAgent()
	if err != nil {
		return nil, err.Error()
	}
	return a, ""
}

// reject tells the asker, and only them, that the bot will not answer here.
func (b *Bot) reject(ctx context.Context, req request) {
	err := b.ephemeral(ratelimit.WithPriority(ctx, ratelimit.Note), req.channel, req.user, "", b.cfg.RejectionMessage)
	if err != nil {
		b.log.Debug("rejection not posted", zap.Error(slackError(err)))
	}
}
