package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSchemaRef(t *testing.T) {
	t.Parallel()
	cfg, err := LoadWith("testdata/schemaref/slackbot.yaml", Options{LookupEnv: mapEnv()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		agent string
		doc   any
		valid bool
	}{
		{"a JSON schema file is read relative to the agent file", "reporter", map[string]any{"title": "db down", "severity": "high"}, true},
		{"a $ref to a sibling file resolves", "reporter", map[string]any{"title": "db down", "severity": "apocalyptic"}, false},
		{"required properties are enforced", "reporter", map[string]any{"title": "db down"}, false},
		{"a YAML schema file is read too", "yamlschema", map[string]any{"answer": "42", "confidence": 0.9}, true},
		{"a YAML schema's numbers are numbers", "yamlschema", map[string]any{"answer": "42", "confidence": 1.5}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := cfg.Agents[tt.agent].Output
			if o.Compiled == nil || o.Schema == nil {
				t.Fatalf("schema not resolved: %+v", o)
			}
			err := o.Compiled.Validate(tt.doc)
			if (err == nil) != tt.valid {
				t.Errorf("Validate(%v) = %v, want valid %v", tt.doc, err, tt.valid)
			}
		})
	}
	t.Run("an inline schema is compiled and kept in JSON shape", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"agents/a.md": "---\noutput:\n  format: json\n  schema:\n    type: object\n    properties:\n      n:\n        type: integer\n        maximum: ${MAX:-3}\n---\n"})
		o := cfg.Agents["a"].Output
		if err := o.Compiled.Validate(map[string]any{"n": 4}); err == nil {
			t.Error("n = 4 validated against maximum 3")
		}
		props := o.Schema["properties"].(map[string]any)
		if got := props["n"].(map[string]any)["maximum"]; got != float64(3) {
			t.Errorf("maximum = %#v, want float64(3)", got)
		}
	})
}

func TestSubAgentCycleFixture(t *testing.T) {
	t.Parallel()
	_, err := LoadWith("testdata/cycle/slackbot.yaml", Options{LookupEnv: mapEnv()})
	wantErrors(t, err, filepath.Join("testdata", "cycle", "agents", "planner.md")+":3: agents[0]: sub-agents form a cycle: planner → researcher → planner")
	if n := strings.Count(err.Error(), "form a cycle"); n != 1 {
		t.Errorf("the cycle is reported %d times, want once:\n%v", n, err)
	}
}

func TestLoadAgentFile(t *testing.T) {
	t.Parallel()
	cfg, err := LoadWith("../slackbot.example.yaml", Options{LookupEnv: mapEnv()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("an agent file loads against a configuration", func(t *testing.T) {
		t.Parallel()
		a, err := loadAgentFile(write("helper.md", "---\nagents: [assistant]\nmax_turns: 3\n---\nHelp."), cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Name != "helper" || a.MaxTurns != 3 || a.MaxRetries != cfg.Defaults.MaxRetries || a.Prompt != "Help." || len(a.Models) == 0 {
			t.Errorf("got %+v", a)
		}
	})
	t.Run("its sub-agents must be among the configuration's agents", func(t *testing.T) {
		t.Parallel()
		_, err := loadAgentFile(write("lonely.md", "---\nagents: [ghost]\n---\n"), cfg, Options{})
		wantErrors(t, err, `lonely.md:2: agents[0]: agent "ghost" does not exist (agents: assistant, lonely)`)
	})
	t.Run("a cycle through the configuration's agents is found", func(t *testing.T) {
		t.Parallel()
		cfg := *cfg
		cfg.Agents = map[string]*Agent{"b": {Name: "b", Agents: []string{"zed"}}}
		_, err := loadAgentFile(write("zed.md", "---\nagents: [b]\n---\n"), &cfg, Options{})
		wantErrors(t, err, "zed.md:2: agents[0]: sub-agents form a cycle: zed → b → zed")
	})
	t.Run("without a configuration the built-in defaults apply and models are required", func(t *testing.T) {
		t.Parallel()
		_, err := loadAgentFile(write("bare.md", "Prompt only."), nil, Options{})
		wantErrors(t, err, "bare.md: models: no model to use")
	})
	t.Run("a hand-built configuration without defaults gets the built-in ones", func(t *testing.T) {
		t.Parallel()
		hand := &Config{LLM: LLM{Providers: map[string]Provider{"p": {Type: "openai"}}}}
		a, err := loadAgentFile(write("hand.md", "---\nmodels: [p/m]\n---\n"), hand, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.MaxTurns != defaultMaxTurns || a.ContextWindow != DefaultContextWindow || a.LLMTimeout.D() != DefaultLLMTimeout {
			t.Errorf("got %+v", a)
		}
	})
	t.Run("a missing file is an error naming it", func(t *testing.T) {
		t.Parallel()
		_, err := loadAgentFile(filepath.Join(dir, "nope.md"), cfg, Options{})
		wantErrors(t, err, "nope.md")
	})
}

func TestAllowsTool(t *testing.T) {
	t.Parallel()
	a := &Agent{
		Tools:  []string{"github__*", "rest__weather", "agent__task_status"},
		Agents: []string{"researcher"},
		Router: Router{Destinations: []string{"sales"}},
	}
	none := &Agent{}
	tests := []struct {
		name  string
		agent *Agent
		tool  string
		want  bool
	}{
		{"the final report is always allowed", none, "agent__final_report", true},
		{"nothing else is allowed without globs", none, "github__search", false},
		{"a glob matches a namespace", a, "github__search_code", true},
		{"a glob does not match another namespace", a, "gitlab__search", false},
		{"an exact name matches", a, "rest__weather", true},
		{"an optional built-in needs a matching glob", a, "agent__batch", false},
		{"an optional built-in with a matching glob is allowed", a, "agent__task_status", true},
		{"a listed sub-agent is allowed", a, "agent__researcher", true},
		{"an unlisted sub-agent is not", a, "agent__writer", false},
		{"a router may hand off", a, "router__handoff-to", true},
		{"a non-router may not hand off", none, "router__handoff-to", false},
		{"star allows everything", &Agent{Tools: []string{"*"}}, "finish", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.agent.AllowsTool(tt.tool); got != tt.want {
				t.Errorf("AllowsTool(%q) = %v, want %v", tt.tool, got, tt.want)
			}
		})
	}
}

func TestParseModelRef(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, provider, model string
		wantErr                   bool
	}{
		{name: "provider and model split at the slash", in: "openai/gpt-4.1-mini", provider: "openai", model: "gpt-4.1-mini"},
		{name: "a model may contain slashes", in: "openrouter/anthropic/claude-3.5", provider: "openrouter", model: "anthropic/claude-3.5"},
		{name: "a model may contain colons", in: "ollama/llama3.1:8b", provider: "ollama", model: "llama3.1:8b"},
		{name: "a bare model is refused", in: "gpt-4.1", wantErr: true},
		{name: "an empty provider is refused", in: "/gpt-4.1", wantErr: true},
		{name: "an empty model is refused", in: "openai/", wantErr: true},
		{name: "an empty reference is refused", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, m, err := ParseModelRef(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseModelRef(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "write provider/model") {
				t.Errorf("error %q does not say how to write a reference", err)
			}
			if p != tt.provider || m != tt.model {
				t.Errorf("ParseModelRef(%q) = %q, %q; want %q, %q", tt.in, p, m, tt.provider, tt.model)
			}
		})
	}
}

func TestFrontmatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, prompt string
		description        string
	}{
		{name: "frontmatter and prompt are separated", file: "---\ndescription: d\n---\nHello.\n", prompt: "Hello.", description: "d"},
		{name: "Windows line endings are accepted", file: "---\r\ndescription: d\r\n---\r\nHello.\r\n", prompt: "Hello.", description: "d"},
		{name: "a byte order mark is ignored", file: "\xef\xbb\xbf---\ndescription: d\n---\nHello.", prompt: "Hello.", description: "d"},
		{name: "an empty frontmatter is allowed", file: "---\n---\nHello.", prompt: "Hello."},
		{name: "a later --- line belongs to the prompt", file: "---\ndescription: d\n---\nA\n---\nB", prompt: "A\n---\nB", description: "d"},
		{name: "a file without a leading fence is all prompt", file: "Hello.\n---\nStill prompt.", prompt: "Hello.\n---\nStill prompt."},
		{name: "a file may end at the closing fence", file: "---\ndescription: d\n---", description: "d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustLoad(t, map[string]string{"agents/a.md": tt.file})
			a := cfg.Agents["a"]
			if a.Prompt != tt.prompt || a.Description != tt.description {
				t.Errorf("prompt %q, description %q; want %q, %q", a.Prompt, a.Description, tt.prompt, tt.description)
			}
		})
	}
}

func TestAnAgentOverridesToolOutputKeyByKey(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{
		"slackbot.yaml":   baseConfig + "tool_output:\n  max_bytes: 5000\n  overlap_percent: 20\n  dir: ./store\n",
		"agents/big.md":   "---\ndescription: big\ntool_output:\n  max_bytes: 100000\n  enabled: false\n  model: openai/gpt-4.1\n---\nP.\n",
		"agents/plain.md": okAgent,
	})
	big, plain := cfg.Agents["big"].ToolOutput, cfg.Agents["plain"].ToolOutput
	if big.MaxBytes != 100000 || big.IsEnabled() || big.Model != "openai/gpt-4.1" || big.OverlapPercent != 20 || big.MaxChunksForFullMode != 1 {
		t.Fatalf("big: %+v", big)
	}
	if plain.MaxBytes != 5000 || !plain.IsEnabled() || plain.OverlapPercent != 20 || plain.Dir != cfg.ToolOutput.Dir {
		t.Fatalf("plain: %+v", plain)
	}
	_, err := loadFiles(t, map[string]string{"agents/x.md": "---\ntool_output:\n  dir: /tmp/x\n  overlap_percent: 80\n  model: nope\n---\nP.\n"})
	for _, want := range []string{"tool_output.dir: can be set only in the configuration file", "tool_output.overlap_percent: must be between 0 and 50",
		"tool_output.model"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
