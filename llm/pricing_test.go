package llm_test

import (
	"math"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

func TestCost(t *testing.T) {
	t.Parallel()
	sonnet := config.Model{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	tests := []struct {
		name  string
		model config.Model
		usage llm.Usage
		want  float64
	}{
		{"an unpriced model costs nothing", config.Model{}, llm.Usage{InputTokens: 1e6, OutputTokens: 1e6, CacheReadTokens: 5}, 0},
		{"a million input tokens cost the input price", sonnet, llm.Usage{InputTokens: 1e6}, 3},
		{"a million output tokens cost the output price", sonnet, llm.Usage{OutputTokens: 1e6}, 15},
		{"every kind of token is priced on its own", sonnet,
			llm.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000, CacheWriteTokens: 100},
			(1000*3 + 200*15 + 5000*0.3 + 100*3.75) / 1e6},
		{"unpriced cache tokens are charged as input", config.Model{Input: 2, Output: 8},
			llm.Usage{CacheReadTokens: 1e6, CacheWriteTokens: 1e6}, 4},
		{"no tokens cost nothing", sonnet, llm.Usage{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := llm.Cost(tt.model, tt.usage); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Cost = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCostIgnoresTheCostAlreadyInUsage(t *testing.T) {
	t.Parallel()
	u := llm.Usage{InputTokens: 1e6, CostUSD: 99}
	if got := llm.Cost(config.Model{Input: 1}, u); got != 1 {
		t.Errorf("Cost = %v, want 1", got)
	}
}
