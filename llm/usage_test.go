package llm

import "testing"

func TestATotalCountsEveryTokenReadOrWrittenCacheIncluded(t *testing.T) {
	u := Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 30, CacheWriteTokens: 4, CostUSD: 0.5}
	if got := u.Total(); got != 1234 {
		t.Fatalf("Total of %+v = %d, want 1234", u, got)
	}
	var sum Usage
	sum.Add(u)
	sum.Add(u)
	if got := sum.Total(); got != 2468 {
		t.Fatalf("Total of two calls = %d, want 2468", got)
	}
}
