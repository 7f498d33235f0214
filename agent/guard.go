package agent

import (
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

// The context guard decides, before each turn, whether the next request
// still fits the model's window. Counting every message exactly with a BPE
// tokenizer costs more than the rest of a turn (about 1.3 ms and 1.3 MB of
// garbage for a 12 KB tool result), and one vocabulary is wrong for another
// vendor's models anyway. So the guard works in three steps:
//
//  1. Each message gets a cheap estimate when it is appended (one pass over
//     its bytes, no allocation; see llm.EstimateTokens).
//  2. While the estimates, raised by llm.EstimateMargin, leave room in the
//     budget, nothing else is done: the request certainly fits.
//  3. Near the limit, messages are counted exactly with o200k (each message
//     once, the count kept) and that count decides.
//
// Whatever the provider itself reported as the prompt size of the last
// request is a floor for the next one: a model whose tokenizer is less
// efficient than o200k (Claude's, for one) is never overfilled because our
// count was optimistic.

// perMessageOverhead approximates the tokens a wire format spends framing
// one message (role, separators) beyond its text.
const perMessageOverhead = 4

// messageText calls f with each text of m that the model reads.
func messageText(m *llm.Message, f func(string)) {
	f(m.Content)
	for i := range m.ToolCalls {
		f(m.ToolCalls[i].Name)
		f(m.ToolCalls[i].Arguments)
	}
}

func messageEstimate(m *llm.Message) int {
	n := perMessageOverhead + imageTokens(m)
	messageText(m, func(s string) { n += llm.EstimateTokens(s) + perMessageOverhead/2 })
	return n
}

func messageTokens(m *llm.Message) int {
	n := perMessageOverhead + imageTokens(m)
	messageText(m, func(s string) { n += llm.CountTokens(s) + perMessageOverhead/2 })
	return n
}

// imageTokens is what m's pictures cost, by their size.
func imageTokens(m *llm.Message) int {
	n := 0
	for i := range m.Images {
		n += llm.ImageTokens(m.Images[i])
	}
	return n
}

func toolDefsTokens(defs []llm.ToolDef) int {
	n := 0
	for i := range defs {
		n += perMessageOverhead + llm.CountTokens(defs[i].Name) + llm.CountTokens(defs[i].Description) + llm.CountTokens(string(defs[i].Schema))
	}
	return n
}

// guard is a session's context guard: what its messages cost, estimated
// and, near the limit, counted.
type guard struct {
	budget int // tokens a request may hold
	tools  int // tokens of the tool definitions offered on open turns (exact)

	est      []int // per message of the session: the estimate
	exact    []int // per message: the o200k count, 0 until counted
	estTotal int

	// The prompt size the provider reported for the last open-turn request
	// and how many messages that request held.
	seenTokens, seenMsgs int
}

func newGuard(budget, toolTokens int) guard { return guard{budget: budget, tools: toolTokens} }

func (g *guard) add(m *llm.Message) {
	e := messageEstimate(m)
	g.est = append(g.est, e)
	g.exact = append(g.exact, 0)
	g.estTotal += e
}

// addPrompt adds the system prompt, whose static part's exact count is
// known in advance (staticTokens for the first staticLen bytes); the short
// part that changes per session is estimated, raised by the margin.
func (g *guard) addPrompt(m *llm.Message, staticLen, staticTokens int) {
	g.add(m)
	i := len(g.est) - 1
	n := perMessageOverhead + staticTokens + int(float64(llm.EstimateTokens(m.Content[staticLen:]))*llm.EstimateMargin) + 1
	g.exact[i] = n
	g.estTotal += max(n, g.est[i]) - g.est[i]
	g.est[i] = max(n, g.est[i])
}

// reported records the provider's own count of the prompt it was sent:
// n messages, with the open turn's tool definitions when openTurn.
func (g *guard) reported(n int, openTurn bool, u llm.Usage) {
	if prompt := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens; openTurn && prompt > 0 {
		g.seenTokens, g.seenMsgs = prompt, n
	}
}

// over reports whether the next request, made of msgs (the messages added
// so far, in order), would not fit the budget.
func (g *guard) over(msgs []llm.Message) bool {
	if g.fromProvider() > g.budget {
		return true
	}
	if int(float64(g.estTotal)*llm.EstimateMargin)+g.tools <= g.budget {
		return false
	}
	return g.counted(msgs) > g.budget
}

// room is how many tokens the next request may still add: the budget less
// the larger of the raised estimate and the provider's own count.
func (g *guard) room() int {
	used := max(int(float64(g.estTotal)*llm.EstimateMargin)+g.tools, g.fromProvider())
	return g.budget - used
}

// counted is the exact o200k size of the next request; it counts each
// message at most once per session.
func (g *guard) counted(msgs []llm.Message) int {
	total := g.tools
	for i := range msgs {
		if g.exact[i] == 0 {
			g.exact[i] = messageTokens(&msgs[i])
		}
		total += g.exact[i]
	}
	return total
}

// fromProvider is the provider's count of the last request plus estimates
// of what was appended since; 0 when the provider never reported one.
func (g *guard) fromProvider() int {
	if g.seenTokens == 0 {
		return 0
	}
	n := g.seenTokens
	for _, e := range g.est[min(g.seenMsgs, len(g.est)):] {
		n += e
	}
	return n
}

// TrimHistory bounds a conversation carried from earlier sessions (a chat,
// a Slack thread) so that it and the new prompt take at most half of the
// agent's context budget, leaving the rest for the system prompt, the tools
// and the work of the session. It drops the oldest messages first, whole
// exchanges at a time (what is kept starts with a user message), and
// returns what is kept and how many messages were dropped. Sizes are
// estimates raised by their margin, so the bound errs on the safe side.
func TrimHistory(a *config.Agent, history []llm.Message, prompt string) (kept []llm.Message, dropped int) {
	a = withLimits(a)
	room := (a.ContextWindow - a.MaxOutputTokens - a.ContextBuffer) / 2
	cost := func(m *llm.Message) int { return int(float64(messageEstimate(m)) * llm.EstimateMargin) }
	total := cost(&llm.Message{Role: llm.RoleUser, Content: prompt})
	for i := range history {
		total += cost(&history[i])
	}
	start := 0
	for start < len(history) && total > room {
		total -= cost(&history[start])
		start++
		for start < len(history) && history[start].Role != llm.RoleUser {
			total -= cost(&history[start])
			start++
		}
	}
	return history[start:], start
}
