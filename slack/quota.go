package slack

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/state"
)

// Daily budgets. Usage is counted in the state store per person and per
// channel and day (UTC), so replicas sharing a store share the budget. A
// request is refused before any model call once a budget is spent; the
// session that crosses it still finishes, as stopping an answer half-way
// would waste what it cost.

// quotaTTL keeps a day's counters a little past the day.
const quotaTTL = 48 * time.Hour

// quotaKeys are the counters of who and where, today.
func quotaKeys(kind, who string, now time.Time) (tokens, cost string) {
	day := now.UTC().Format("2006-01-02")
	return "quota:" + kind + ":" + who + ":" + day + ":tokens", "quota:" + kind + ":" + who + ":" + day + ":cost"
}

// overQuota reports whether the person or the channel has spent today's
// budget. A store that cannot answer lets the request through: a broken
// counter must not silence the bot.
func (b *Bot) overQuota(ctx context.Context, req request) bool {
	q := b.conf.Quotas
	for _, c := range []struct {
		kind, who string
		budget    config.Budget
	}{{"user", req.user, q.User}, {"channel", req.channel, q.Channel}} {
		if !c.budget.Limited() {
			continue
		}
		tk, ck := quotaKeys(c.kind, c.who, time.Now())
		tokens, err1 := b.state.Get(ctx, tk)
		cost, err2 := b.state.Get(ctx, ck)
		if err1 != nil || err2 != nil {
			b.log.Warn("quota counters unavailable; not enforcing", zap.String("error", state.Cause(errors.Join(err1, err2))))
			continue
		}
		if c.budget.DailyTokens > 0 && tokens >= float64(c.budget.DailyTokens) ||
			c.budget.DailyCostUSD > 0 && cost >= c.budget.DailyCostUSD {
			b.log.Info("request over its daily budget", zap.String(c.kind, c.who), zap.Float64("tokens", tokens), zap.Float64("cost_usd", cost))
			return true
		}
	}
	return false
}

// spend counts a session's usage against the person's and the channel's
// budgets.
func (b *Bot) spend(ctx context.Context, req request, u llm.Usage) {
	q := b.conf.Quotas
	tokens := float64(u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens)
	for _, c := range []struct {
		kind, who string
		budget    config.Budget
	}{{"user", req.user, q.User}, {"channel", req.channel, q.Channel}} {
		if !c.budget.Limited() {
			continue
		}
		tk, ck := quotaKeys(c.kind, c.who, time.Now())
		if _, err := b.state.Add(ctx, tk, tokens, quotaTTL); err != nil {
			b.log.Warn("usage not counted", zap.String("error", state.Cause(err)))
		}
		if _, err := b.state.Add(ctx, ck, u.CostUSD, quotaTTL); err != nil {
			b.log.Warn("usage not counted", zap.String("error", state.Cause(err)))
		}
	}
}
