package config

import "testing"

func TestVisionFollowsTheModelFamilyUnlessTheModelSays(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	p := Provider{Models: map[string]Model{
		"gpt-4o":      {Vision: &no},
		"llava:13b":   {Vision: &yes},
		"gpt-4o-mini": {Input: 0.15},
	}}
	for _, tt := range []struct {
		model string
		want  bool
	}{
		{"gpt-4o", false}, // the model's own key wins
		{"llava:13b", true},
		{"gpt-4o-mini", true},
		{"gpt-4.1-mini", true},
		{"gpt-5", true},
		{"gpt-5-nano", true},
		{"o1", true},
		{"o3", true},
		{"o4-mini", true},
		{"o1-mini", false},
		{"o3-mini", false},
		{"claude-3-haiku-20240307", true},
		{"claude-3-5-sonnet-latest", true},
		{"claude-sonnet-4-5", true},
		{"claude-opus-4-1", true},
		{"anthropic/claude-sonnet-4", true},
		{"claude-2.1", false},
		{"claude-instant-1.2", false},
		{"gpt-3.5-turbo", false},
		{"gpt-4", false},
		{"llama3.1:8b", false},
		{"", false},
	} {
		if got := p.Vision(tt.model); got != tt.want {
			t.Errorf("Vision(%q) = %v, want %v", tt.model, got, tt.want)
		}
	}
}
