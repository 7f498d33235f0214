package openai

import (
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

func TestOpenAIItselfGetsMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base string
		want bool
	}{
		{"", true},
		{"https://api.openai.com/v1", true},
		{"https://my-resource.openai.azure.com/openai/v1/", true},
		{"http://localhost:11434/v1", false},
		{"https://openrouter.ai/api/v1", false},
	}
	for _, tt := range tests {
		p, err := New("x", config.Provider{BaseURL: tt.base})
		if err != nil {
			t.Fatal(err)
		}
		if p.completionTokens != tt.want {
			t.Errorf("%q: completionTokens = %v, want %v", tt.base, p.completionTokens, tt.want)
		}
		got, err := params(&llm.Request{Model: "m", MaxOutputTokens: 9}, p.completionTokens, false)
		if err != nil {
			t.Fatal(err)
		}
		if got.MaxCompletionTokens.Valid() != tt.want || got.MaxTokens.Valid() == tt.want {
			t.Errorf("%q: max_completion_tokens set %v, max_tokens set %v", tt.base, got.MaxCompletionTokens.Valid(), got.MaxTokens.Valid())
		}
	}
}
