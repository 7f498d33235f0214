package config

import "testing"

func TestAnAgentTakesTheToolLimitOfItsStrictestModel(t *testing.T) {
	t.Parallel()
	conf := `llm:
  providers:
    openai:
      type: openai
    gateway:
      type: openai
      max_tools: 512
      models:
        small: {max_tools: 32}
    anthropic:
      type: anthropic
defaults:
  models: [openai/gpt-4.1-mini]
`
	cases := []struct {
		name, models string
		want         int
		from         string
	}{
		{"openai's wire takes 128", "[openai/gpt-4.1]", 128, "openai/gpt-4.1"},
		{"a provider's max_tools replaces the wire's", "[gateway/big]", 512, "gateway/big"},
		{"a model's max_tools replaces its provider's", "[gateway/big, gateway/small]", 32, "gateway/small"},
		{"anthropic sets no limit", "[anthropic/claude]", 0, ""},
		{"a fallback's limit counts", "[anthropic/claude, openai/gpt-4.1]", 128, "openai/gpt-4.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustLoad(t, map[string]string{"slackbot.yaml": conf, "agents/a.md": "---\nmodels: " + c.models + "\n---\nHi.\n"})
			if a := cfg.Agents["a"]; a.MaxTools != c.want || a.MaxToolsModel != c.from {
				t.Errorf("MaxTools = %d from %q, want %d from %q", a.MaxTools, a.MaxToolsModel, c.want, c.from)
			}
		})
	}
}

func TestToolSearchKeysGetDefaultsAndAreChecked(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"agents/a.md": "---\ntools_pinned: [\"github__get_*\"]\n---\nHi.\n"})
	a := cfg.Agents["a"]
	if a.ToolSearch != ToolSearchAuto || a.ToolSearchThreshold != DefaultToolSearchThreshold ||
		a.ToolSearchShare != DefaultToolSearchShare || a.ToolSearchLoaded != DefaultToolSearchLoaded || len(a.ToolsPinned) != 1 {
		t.Errorf("agent = %+v, want the tool search defaults and its pin", a)
	}
	_, err := loadFiles(t, map[string]string{
		"slackbot.yaml": baseConfig + "  tool_search: sometimes\n",
		"agents/a.md":   "---\ntool_search_share: 1.5\ntool_search_loaded: 0\ntool_search_threshold: 0\ntools_pinned: [\"[\"]\n---\nHi.\n",
	})
	wantErrors(t, err,
		`defaults.tool_search: "sometimes" is not a tool search mode; use one of: auto, always, never`,
		"tool_search_share: must be a share of the context window above 0 and at most 1",
		"tool_search_loaded: must be at least 1",
		"tool_search_threshold: must be at least 1",
		`tools_pinned[0]: "[" is not a valid pattern`)
	_, err = loadFiles(t, map[string]string{"slackbot.yaml": withProvider("      max_tools: -1\n")})
	wantErrors(t, err, "llm.providers.openai.max_tools: cannot be negative")
}
