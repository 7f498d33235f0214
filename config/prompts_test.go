package config

import (
	"slices"
	"strings"
	"testing"
)

func TestSuggestedPrompts(t *testing.T) {
	t.Parallel()
	t.Run("an agent's prompts are read as strings or as title and message", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"agents/a.md": "---\nsuggested_prompts:\n  - What changed this week?\n" +
			"  - title: '  Summarise a channel '\n    message: \"Summarise what #general discussed today.\"\n  - ${Q}\n---\n"}, "Q", "How do I deploy?")
		want := []SuggestedPrompt{
			{Title: "What changed this week?", Message: "What changed this week?"},
			{Title: "Summarise a channel", Message: "Summarise what #general discussed today."},
			{Title: "How do I deploy?", Message: "How do I deploy?"},
		}
		if got := cfg.Agents["a"].SuggestedPrompts; !slices.Equal(got, want) {
			t.Errorf("suggested_prompts = %+v, want %+v", got, want)
		}
	})
	t.Run("slack.suggested_prompts is read for the default agent", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "slack:\n  suggested_prompts: [Hello, {title: Help, message: What can you do?}]\n"})
		want := []SuggestedPrompt{{Title: "Hello", Message: "Hello"}, {Title: "Help", Message: "What can you do?"}}
		if got := cfg.Slack.SuggestedPrompts; !slices.Equal(got, want) {
			t.Errorf("slack.suggested_prompts = %+v, want %+v", got, want)
		}
	})
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name:  "five prompts in an agent file are refused",
			files: map[string]string{"agents/a.md": "---\nsuggested_prompts: [a, b, c, d, e]\n---\n"},
			want:  []string{"a.md:2: suggested_prompts: lists 5 prompts; Slack shows at most 4"},
		},
		{
			name:  "five prompts in slack.suggested_prompts are refused",
			files: map[string]string{"slackbot.yaml": baseConfig + "slack:\n  suggested_prompts: [a, b, c, d, e]\n"},
			want:  []string{"slackbot.yaml:10: slack.suggested_prompts: lists 5 prompts; Slack shows at most 4"},
		},
		{
			name:  "an empty prompt is refused",
			files: map[string]string{"agents/a.md": "---\nsuggested_prompts:\n  - '  '\n---\n"},
			want:  []string{"a.md:3: suggested_prompts[0]: is empty"},
		},
		{
			name:  "a prompt without a message is refused",
			files: map[string]string{"agents/a.md": "---\nsuggested_prompts:\n  - title: Help\n---\n"},
			want:  []string{"suggested_prompts[0].message: is empty"},
		},
		{
			name:  "a title over 75 characters is refused",
			files: map[string]string{"agents/a.md": "---\nsuggested_prompts:\n  - " + strings.Repeat("x", 76) + "\n---\n"},
			want:  []string{"suggested_prompts[0].title: is 76 characters; a prompt's label holds at most 75"},
		},
		{
			name:  "an unknown key in a prompt is named",
			files: map[string]string{"agents/a.md": "---\nsuggested_prompts:\n  - title: Help\n    mesage: What can you do?\n---\n"},
			want:  []string{`unknown key "mesage" (did you mean "message"?)`},
		},
		{
			name:  "a prompt that is a list is refused",
			files: map[string]string{"agents/a.md": "---\nsuggested_prompts:\n  - [a, b]\n---\n"},
			want:  []string{"suggested_prompts[0]: want a single value, got a list"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFiles(t, tt.files)
			wantErrors(t, err, tt.want...)
		})
	}
}
