package llm

import "github.com/slackbot/slackbot/config"

// Cost returns what u cost in US dollars at the per-million-token prices of
// m. A model without prices (the zero config.Model) costs nothing.
//
// Cached tokens are priced at CacheRead and CacheWrite. When one of those
// prices is not configured (0) while Input is, those tokens are charged at
// the Input price: a budget that overestimates is safer than one that counts
// cached tokens as free.
func Cost(m config.Model, u Usage) float64 {
	cacheRead, cacheWrite := m.CacheRead, m.CacheWrite
	if cacheRead == 0 {
		cacheRead = m.Input
	}
	if cacheWrite == 0 {
		cacheWrite = m.Input
	}
	micro := float64(u.InputTokens)*m.Input +
		float64(u.OutputTokens)*m.Output +
		float64(u.CacheReadTokens)*cacheRead +
		float64(u.CacheWriteTokens)*cacheWrite
	return micro / 1e6
}
