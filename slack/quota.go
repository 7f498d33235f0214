package slack

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/redact"
)

// Daily budgets. Usage is counted in the state store per person and per
// channel and day (UTC), so replicas sharing a store share the budget. A
// question reserves an estimate of what its session will spend when it is
// admitted, with one atomic add per counter, and is refused when the
// reservation does not fit; the session settles to what it really spent
// when it ends, and a question that never ran gives its reservation back.
// Questions asked at once therefore cannot all pass a check made before
// any of them has spent. The channel is the one the question was asked
// in (for the slash command, where it was typed, even when the answer
// goes to a direct message).

// quotaTTL keeps a day's counters a little past the day.
const quotaTTL = 48 * time.Hour

// quotaKeys are the counters of who and where, today.
func quotaKeys(kind, who string, now time.Time) (tokens, cost string) {
	day := now.UTC().Format("2006-01-02")
	return "quota:" + kind + ":" + who + ":" + day + ":tokens", "quota:" + kind + ":" + who + ":" + day + ":cost"
}

// usageWeight is the weight of the newest session in an agent's moving
// average of usage.
const usageWeight = 0.2

// usageAverages is each agent's moving average of a session's usage on
// this replica: the estimate a question reserves.
type usageAverages struct {
	mu sync.Mutex
	by map[string]spent
}

// spent is usage in the units budgets count.
type spent struct{ tokens, cost float64 }

func (u *usageAverages) get(agentName string) spent {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.by[agentName]
}

func (u *usageAverages) add(agentName string, s spent) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.by == nil {
		u.by = map[string]spent{}
	}
	old, ok := u.by[agentName]
	if !ok {
		u.by[agentName] = s
		return
	}
	u.by[agentName] = spent{old.tokens + usageWeight*(s.tokens-old.tokens), old.cost + usageWeight*(s.cost-old.cost)}
}

// usageOf is what a session's usage counts against budgets.
func usageOf(u llm.Usage) spent {
	return spent{float64(u.Total()), u.CostUSD}
}

// estimate is what a session of a is expected to spend: the moving
// average of its sessions here, and at least one model call's output at
// the agent's dearest model's dearest price.
func (b *Bot) estimate(a *config.Agent) spent {
	avg := b.usage.get(a.Name)
	floor := float64(a.MaxOutputTokens)
	price := 0.0
	for _, ref := range a.Models {
		prov, model, err := config.ParseModelRef(ref)
		if err != nil {
			continue
		}
		m := b.conf.LLM.Providers[prov].Models[model]
		price = max(price, m.Input, m.Output, m.CacheRead, m.CacheWrite)
	}
	tokens := max(avg.tokens, floor)
	return spent{tokens, max(avg.cost, tokens*price/1e6)}
}

// held is one budget's reservation.
type held struct {
	tokensKey, costKey string
	spent
}

// reservation is what a question holds against its budgets until it is
// settled.
type reservation struct {
	b     *Bot
	agent string
	held  []held
	once  sync.Once
}

// reserve holds the estimate of a's session against the person's and the
// origin channel's budgets (each capped to the budget, so a budget smaller
// than the estimate still admits one question at a time). It reports
// false, holding nothing, when a budget cannot take it. A store that
// cannot answer lets the question through: a broken counter must not
// silence the bot.
func (b *Bot) reserve(ctx context.Context, user, origin string, a *config.Agent) (*reservation, bool) {
	q := b.conf.Quotas
	res := &reservation{b: b, agent: a.Name}
	est := b.estimate(a)
	for _, c := range []struct {
		kind, who string
		budget    config.Budget
	}{{"user", user, q.User}, {"channel", origin, q.Channel}} {
		if !c.budget.Limited() {
			continue
		}
		h := held{spent: est}
		if c.budget.DailyTokens > 0 {
			h.tokens = min(h.tokens, float64(c.budget.DailyTokens))
		}
		if c.budget.DailyCostUSD > 0 {
			h.cost = min(h.cost, c.budget.DailyCostUSD)
		}
		h.tokensKey, h.costKey = quotaKeys(c.kind, c.who, time.Now())
		tokens, err := b.state.Add(ctx, h.tokensKey, h.tokens, quotaTTL)
		if err != nil {
			b.log.Warn("quota counters unavailable; not enforcing", zap.String("error", redact.Cause(err)))
			continue
		}
		cost, err := b.state.Add(ctx, h.costKey, h.cost, quotaTTL)
		if err != nil {
			b.log.Warn("quota counters unavailable; not enforcing", zap.String("error", redact.Cause(err)))
			b.unreserve(ctx, held{tokensKey: h.tokensKey, spent: spent{tokens: h.tokens}})
			continue
		}
		res.held = append(res.held, h)
		if c.budget.DailyTokens > 0 && tokens > float64(c.budget.DailyTokens) ||
			c.budget.DailyCostUSD > 0 && cost > c.budget.DailyCostUSD*(1+1e-9) {
			b.log.Info("request over its daily budget", zap.String(c.kind, c.who), zap.Float64("tokens", tokens-h.tokens),
				zap.Float64("cost_usd", cost-h.cost))
			res.settle(ctx, spent{})
			return nil, false
		}
	}
	return res, true
}

// unreserve gives back what h holds.
func (b *Bot) unreserve(ctx context.Context, h held) {
	if h.tokens != 0 && h.tokensKey != "" {
		if _, err := b.state.Add(ctx, h.tokensKey, -h.tokens, quotaTTL); err != nil {
			b.log.Warn("usage not counted", zap.String("error", redact.Cause(err)))
		}
	}
	if h.cost != 0 && h.costKey != "" {
		if _, err := b.state.Add(ctx, h.costKey, -h.cost, quotaTTL); err != nil {
			b.log.Warn("usage not counted", zap.String("error", redact.Cause(err)))
		}
	}
}

// settle replaces the reservation by what the session spent, once; a
// question that never ran settles with nothing spent.
func (r *reservation) settle(ctx context.Context, s spent) {
	r.once.Do(func() {
		for _, h := range r.held {
			r.b.unreserve(ctx, held{tokensKey: h.tokensKey, costKey: h.costKey, spent: spent{h.tokens - s.tokens, h.cost - s.cost}})
		}
	})
}

// spend settles the reservation with a session's usage and adds it to the
// agent's average.
func (r *reservation) spend(ctx context.Context, u llm.Usage) {
	s := usageOf(u)
	r.b.usage.add(r.agent, s)
	r.settle(ctx, s)
}
