package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// baseConfig is a valid configuration; tests that need another write their own.
const baseConfig = `llm:
  providers:
    openai:
      type: openai
    anthropic:
      type: anthropic
defaults:
  models: [openai/gpt-4.1-mini]
`

// loadFiles writes files (relative names → contents) into a fresh directory,
// adding baseConfig as slackbot.yaml and an agents directory when absent,
// and loads slackbot.yaml.
func loadFiles(t *testing.T, files map[string]string, env ...string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files["slackbot.yaml"]; !ok {
		files["slackbot.yaml"] = baseConfig
	}
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return LoadWith(filepath.Join(dir, "slackbot.yaml"), Options{LookupEnv: mapEnv(env...)})
}

func mustLoad(t *testing.T, files map[string]string, env ...string) *Config {
	t.Helper()
	cfg, err := loadFiles(t, files, env...)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return cfg
}

func wantErrors(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("load succeeded, want errors containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not contain %q; got:\n%v", w, err)
		}
	}
}

func TestExpansionInFiles(t *testing.T) {
	t.Parallel()
	t.Run("a value containing a colon and a newline stays one string", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "  restriction_message: ${MSG}\n  max_turns: 4\n"},
			"MSG", "x: y\nmax_turns: 0\n- [")
		if got := cfg.Defaults.RestrictionMessage; got != "x: y\nmax_turns: 0\n- [" {
			t.Errorf("restriction_message = %q", got)
		}
		if cfg.Defaults.MaxTurns != 4 {
			t.Errorf("max_turns = %d, want 4", cfg.Defaults.MaxTurns)
		}
	})
	t.Run("an unquoted reference becomes a number where a number is expected", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "  max_turns: ${TURNS:-7}\n  temperature: ${TEMP}\n"}, "TEMP", "0.5")
		if cfg.Defaults.MaxTurns != 7 || cfg.Defaults.Temperature == nil || *cfg.Defaults.Temperature != 0.5 {
			t.Errorf("max_turns = %d, temperature = %v", cfg.Defaults.MaxTurns, cfg.Defaults.Temperature)
		}
	})
	t.Run("a text value keeps digits as written", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"slackbot.yaml": strings.Replace(baseConfig, "type: anthropic", "type: anthropic\n      api_key: 0123", 1) +
			"slack:\n  bot_token: ${TOKEN}\n"}, "TOKEN", "1.10")
		if got := cfg.LLM.Providers["anthropic"].APIKey.Reveal(); got != "0123" {
			t.Errorf("api_key = %q, want 0123", got)
		}
		if got := cfg.Slack.BotToken.Reveal(); got != "1.10" {
			t.Errorf("bot_token = %q, want 1.10", got)
		}
	})
	t.Run("double dollar is a literal dollar", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "  restriction_message: \"costs $$5, not ${X:-}\"\n"})
		if got := cfg.Defaults.RestrictionMessage; got != "costs $5, not " {
			t.Errorf("restriction_message = %q", got)
		}
	})
	t.Run("an empty expansion of a number means the key is not set", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "  max_turns: ${TURNS:-}\n"})
		if cfg.Defaults.MaxTurns != defaultMaxTurns {
			t.Errorf("max_turns = %d, want the default %d", cfg.Defaults.MaxTurns, defaultMaxTurns)
		}
	})
	t.Run("agent frontmatter is expanded", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{"agents/a.md": "---\ndescription: ${DESC}\nmodels: [\"${MODEL:-anthropic/claude-sonnet-4-5}\"]\n---\nHi $$USER"}, "DESC", "Helps")
		a := cfg.Agents["a"]
		if a.Description != "Helps" || a.Models[0] != "anthropic/claude-sonnet-4-5" {
			t.Errorf("description %q, models %q", a.Description, a.Models)
		}
		if a.Prompt != "Hi $$USER" {
			t.Errorf("the prompt is not expanded, got %q", a.Prompt)
		}
	})
	t.Run("an unset variable names file, line, key and variable", func(t *testing.T) {
		t.Parallel()
		_, err := loadFiles(t, map[string]string{"slackbot.yaml": strings.Replace(baseConfig, "type: openai", "type: openai\n      api_key: ${OPENAI_KEY}", 1)})
		wantErrors(t, err, "slackbot.yaml:5: llm.providers.openai.api_key: environment variable OPENAI_KEY is not set", "${OPENAI_KEY:-}")
	})
	t.Run("an unset variable in frontmatter names the agent file", func(t *testing.T) {
		t.Parallel()
		_, err := loadFiles(t, map[string]string{"agents/a.md": "---\ndescription: x\ntools: [\"${TOOLS}\"]\n---\n"})
		wantErrors(t, err, "a.md:3: tools[0]: environment variable TOOLS is not set")
	})
}

func TestDefaultsInheritance(t *testing.T) {
	t.Parallel()
	cfgText := `llm:
  providers:
    openai: {}
    local:
      type: openai
      base_url: http://localhost:11434/v1
      models:
        small: {context_window: 8192}
defaults:
  models: [openai/gpt-4.1-mini]
  max_turns: 5
  temperature: 0.1
  llm_timeout: 90s
  restriction_max_injections: 3
`
	cfg := mustLoad(t, map[string]string{
		"slackbot.yaml":  cfgText,
		"agents/bare.md": "Just a prompt.\n",
		"agents/own.md":  "---\nmax_turns: 2\nmodels: [local/small]\nrestriction_max_injections: 0\nrestriction_message: Use a tool.\ntools: [\"github__*\"]\n---\n\n  Prompt.  \n",
		"agents/tiny.md": "---\nmodels: [local/small, openai/gpt-4.1]\ncontext_window: 100000\n---\n",
	})
	bare, own, tiny := cfg.Agents["bare"], cfg.Agents["own"], cfg.Agents["tiny"]
	tests := []struct {
		name      string
		got, want any
	}{
		{"a file without frontmatter is all prompt", bare.Prompt, "Just a prompt."},
		{"omitted models come from defaults", bare.Models, []string{"openai/gpt-4.1-mini"}},
		{"omitted max_turns comes from defaults", bare.MaxTurns, 5},
		{"omitted temperature comes from defaults", *bare.Temperature, 0.1},
		{"omitted llm_timeout comes from defaults", bare.LLMTimeout.D(), 90 * time.Second},
		{"a key absent from defaults takes the built-in value", bare.MaxToolCallsPerTurn, defaultMaxToolCallsPerTurn},
		{"the built-in tool timeout applies", bare.ToolTimeout.D(), DefaultToolTimeout},
		{"the built-in restriction message applies", bare.RestrictionMessage, DefaultRestrictionMessage},
		{"output format defaults to markdown", bare.Output.Format, FormatMarkdown},
		{"max_retries defaults to 3", bare.MaxRetries, defaultMaxRetries},
		{"the defaults section is completed with built-ins", cfg.Defaults.MaxOutputTokens, defaultMaxOutputTokens},
		{"an agent key overrides defaults", own.MaxTurns, 2},
		{"an explicit zero is kept, not defaulted", own.RestrictionMaxInjections, 0},
		{"an agent's restriction message overrides the default", own.RestrictionMessage, "Use a tool."},
		{"the prompt is trimmed", own.Prompt, "Prompt."},
		{"a model's context window caps the agent's", own.ContextWindow, 8192},
		{"the smallest window among the models caps it", tiny.ContextWindow, 8192},
		{"the name is the file name", own.Name, "own"},
		{"a provider named after its type needs no type", cfg.LLM.Providers["openai"].Type, "openai"},
		{"agents_dir defaults to ./agents beside the file", cfg.AgentsDir, filepath.Join(filepath.Dir(cfg.Path), "agents")},
		{"log level defaults to info", cfg.Log.Level, "info"},
		{"log format defaults to json", cfg.Log.Format, "json"},
		{"no metrics are served unless asked", cfg.Metrics.Listen, ""},
		{"spans are named slackbot", cfg.Tracing.ServiceName, DefaultServiceName},
		{"every session is traced by default", cfg.Tracing.Ratio(), 1.0},
		{"tool output size defaults to 12288", cfg.ToolOutput.MaxBytes, DefaultToolResponseMaxByte},
		{"providers stream by default", cfg.LLM.Providers["openai"].Streams(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gj, _ := json.Marshal(tt.got)
			wj, _ := json.Marshal(tt.want)
			if !bytes.Equal(gj, wj) {
				t.Errorf("got %s, want %s", gj, wj)
			}
		})
	}
	t.Run("agents do not share the defaults' models slice", func(t *testing.T) {
		bare.Models[0] = "changed"
		if cfg.Defaults.Models[0] != "openai/gpt-4.1-mini" {
			t.Error("changing an agent's models changed the defaults")
		}
	})
}

func TestExampleConfigLoads(t *testing.T) {
	t.Parallel()
	t.Run("with no environment variables set", func(t *testing.T) {
		t.Parallel()
		cfg, err := LoadWith("../slackbot.example.yaml", Options{LookupEnv: mapEnv()})
		if err != nil {
			t.Fatalf("the example does not load:\n%v", err)
		}
		a := cfg.Agents["assistant"]
		if a == nil {
			t.Fatalf("agents/assistant.md not loaded; agents: %v", sortedKeys(cfg.Agents))
		}
		if cfg.Slack.Agent != "assistant" || a.Description == "" || a.Prompt == "" || len(a.Models) < 2 || !a.AllowsTool("github__search") {
			t.Errorf("unexpected example agent: %+v", a)
		}
		if _, ok := cfg.LLM.Providers["openai"].Models["gpt-4.1-mini"]; !ok {
			t.Error("the example has no price for gpt-4.1-mini")
		}
	})
	t.Run("with credentials from the environment", func(t *testing.T) {
		t.Parallel()
		cfg, err := LoadWith("../slackbot.example.yaml", Options{LookupEnv: mapEnv("SLACK_BOT_TOKEN", "xoxb-1", "OPENAI_API_KEY", "k-1")})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Slack.BotToken.Reveal() != "xoxb-1" || cfg.LLM.Providers["openai"].APIKey.Reveal() != "k-1" {
			t.Error("credentials were not read from the environment")
		}
	})
	t.Run("Load reads the process environment", func(t *testing.T) {
		t.Parallel()
		if _, err := Load("../slackbot.example.yaml"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSecretsNeverAppear(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-b7f3e1-TOPSECRET"
	const skKey = "sk-proj-abcdef123456"
	t.Run("a loaded configuration dumps without secrets", func(t *testing.T) {
		t.Parallel()
		cfg := mustLoad(t, map[string]string{
			"slackbot.yaml": strings.Replace(baseConfig, "type: openai", "type: openai\n      api_key: ${KEY}\n      headers:\n        Authorization: Bearer ${KEY}", 1) +
				"slack:\n  bot_token: " + skKey + "\n  app_token: ${KEY}\nstate:\n  backend: redis\n  redis_url: redis://:${KEY}@localhost:6379\n",
		}, "KEY", secret)
		if cfg.LLM.Providers["openai"].APIKey.Reveal() != secret {
			t.Fatal("the secret was not loaded")
		}
		js, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.DebugLevel)
		zap.New(core).Info("loaded", zap.Any("config", cfg), zap.Stringer("key", cfg.LLM.Providers["openai"].APIKey))
		for name, dump := range map[string]string{"json": string(js), "zap": buf.String()} {
			if strings.Contains(dump, secret) || strings.Contains(dump, skKey) {
				t.Errorf("the %s dump shows a secret: %s", name, dump)
			}
			if !strings.Contains(dump, "[redacted]") {
				t.Errorf("the %s dump does not show that secrets are set", name)
			}
		}
	})
	tests := []struct {
		name string
		cfg  string
	}{
		{"an api key of the wrong shape is not echoed", strings.Replace(baseConfig, "type: openai", "type: openai\n      api_key: [${KEY}]", 1)},
		{"a secret reused in a checked field is scrubbed", withProvider("      api_key: ${KEY}\n") + "log:\n  level: ${KEY}\n"},
		{"a credential in a base URL is not echoed", strings.Replace(baseConfig, "type: openai", "type: openai\n      api_key: ${KEY}\n      base_url: ftp://u:${KEY}@example.com", 1) + "log:\n  format: ${KEY}\n"},
		{"a header value is not echoed", strings.Replace(baseConfig, "type: openai", "type: openai\n      headers: {Authorization: [\"${KEY}\"]}", 1)},
		{"a header value reused elsewhere is scrubbed", strings.Replace(baseConfig, "type: openai", "type: openai\n      headers: {Authorization: \"${KEY}\"}", 1) + "state:\n  backend: ${KEY}\n"},
		{"an sk- key in a bad field is scrubbed", baseConfig + "log:\n  level: " + skKey + "\n"},
		{"a redis URL is not echoed", baseConfig + "state:\n  backend: redis\n  redis_url: http://:${KEY}@x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFiles(t, map[string]string{"slackbot.yaml": tt.cfg}, "KEY", secret)
			if err == nil {
				t.Fatal("load succeeded, want an error")
			}
			if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, skKey) || strings.Contains(msg, "hunter2") {
				t.Errorf("the error shows a secret: %s", msg)
			}
		})
	}
}

func TestErrorsAreStructured(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{"slackbot.yaml": baseConfig + "log:\n  level: loud\n  format: xml\n"})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if e.Line != 10 || e.Key != "log.level" || !strings.HasSuffix(e.File, "slackbot.yaml") {
		t.Errorf("got %+v", e)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 2 {
		t.Errorf("got %d errors, want both problems reported: %v", n, err)
	}
}

func TestASecretIsHiddenUnderEveryVerbAndEncoding(t *testing.T) {
	t.Parallel()
	const value = "sk-live-0123456789abcdef"
	s := Secret(value)
	p := Provider{Type: "openai", APIKey: s, Headers: map[string]Secret{"Authorization": "Bearer " + value}}
	var renders = map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%-40v", "%T"} {
		renders["Secret "+verb] = fmt.Sprintf(verb, s)
		renders["*Secret "+verb] = fmt.Sprintf(verb, &s)
		renders["Provider "+verb] = fmt.Sprintf(verb, p)
		renders["*Provider "+verb] = fmt.Sprintf(verb, &p)
	}
	renders["Sprint"] = fmt.Sprint(s, p)
	renders["Sprintln"] = fmt.Sprintln(s, p)
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	renders["json"] = string(js)
	y, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	renders["yaml"] = string(y)
	ym, err := yaml.Marshal(map[string]any{"key": s, "list": []Secret{s}})
	if err != nil {
		t.Fatal(err)
	}
	renders["yaml map"] = string(ym)
	for name, out := range renders {
		if strings.Contains(out, value) || strings.Contains(out, "0123456789abcdef") ||
			strings.Contains(strings.ToLower(out), fmt.Sprintf("%x", value)) {
			t.Errorf("%s shows the secret: %s", name, out)
		}
	}
	for _, name := range []string{"Secret %v", "Secret %s", "Secret %#v", "json", "yaml", "yaml map", "Provider %+v"} {
		if !strings.Contains(renders[name], "[redacted]") {
			t.Errorf("%s does not show that the secret is set: %s", name, renders[name])
		}
	}
	if got := fmt.Sprintf("%v|%q", Secret(""), Secret("")); got != `|""` {
		t.Errorf("an empty secret renders as %s, want it empty", got)
	}
	if s.Reveal() != value {
		t.Error("Reveal does not return the value")
	}
}

func TestToolKeysGetDefaultsAndResolvedPaths(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + `mcp_servers:
  fs:
    command: node
    cwd: ./servers
    env: {TOKEN: abc}
    cache: 1m
    tools_cache: {read_file: 5s}
  web:
    url: https://mcp.example.com/mcp
openapi:
  pets:
    spec: ./pets.yaml
  remote:
    spec: https://api.example.com/openapi.json
`})
	dir := filepath.Dir(cfg.Path)
	fs, web := cfg.MCPServers["fs"], cfg.MCPServers["web"]
	if fs.Cwd != filepath.Join(dir, "servers") || fs.Transport() != "stdio" || web.Transport() != "http" {
		t.Fatalf("fs cwd %q transport %q, web transport %q", fs.Cwd, fs.Transport(), web.Transport())
	}
	if fs.Probe() != "ping" || fs.CacheTTL("read_file").D() != 5*time.Second || fs.CacheTTL("list").D() != time.Minute {
		t.Fatalf("probe %q, ttl %v/%v", fs.Probe(), fs.CacheTTL("read_file"), fs.CacheTTL("list"))
	}
	if fmt.Sprint(fs.Env["TOKEN"]) != "[redacted]" || fs.Env["TOKEN"].Reveal() != "abc" {
		t.Fatal("MCP env values must be secrets")
	}
	if cfg.OpenAPI["pets"].Spec != filepath.Join(dir, "pets.yaml") || cfg.OpenAPI["remote"].Spec != "https://api.example.com/openapi.json" {
		t.Fatalf("openapi specs %q %q", cfg.OpenAPI["pets"].Spec, cfg.OpenAPI["remote"].Spec)
	}
	if cfg.MCPInitConcurrency != DefaultMCPInitConcurrency || cfg.MaxAgentDepth != DefaultMaxAgentDepth {
		t.Fatalf("defaults: init %d depth %d", cfg.MCPInitConcurrency, cfg.MaxAgentDepth)
	}
}

func TestSlackRateLimitsStartFromSlacksTiersAndTakeOverrides(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + `slack:
  rate_limits:
    chat.update: {per_minute: 20, burst: 2}
    chat.scheduleMessage: {per_minute: 20, burst: 4, per: channel}
`})
	got := cfg.Slack.RateLimits
	if u := got["chat.update"]; u != (RateLimit{PerMinute: 20, Burst: 2, Per: PerWorkspace}) {
		t.Errorf("chat.update = %+v: an override must replace the default, scoped to the workspace by default", u)
	}
	if s := got["chat.scheduleMessage"]; s.Per != PerChannel {
		t.Errorf("a method without a default keeps its scope: %+v", s)
	}
	if p := got["chat.postMessage"]; p != DefaultSlackRateLimits["chat.postMessage"] || got["chat.delete"].Per != PerWorkspace {
		t.Errorf("chat.postMessage = %+v: a method not overridden keeps its default", p)
	}
	if DefaultSlackRateLimits["chat.update"].PerMinute != 50 {
		t.Error("loading changed the defaults themselves")
	}
}

func TestStreamingMethodsHaveSlacksTiersByDefault(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig})
	want := map[string]float64{"chat.startStream": 20, "chat.stopStream": 20, "chat.appendStream": 100,
		"agents.sessions.setStatus": 50, "agents.sessions.rename": 50}
	for m, per := range want {
		if l := cfg.Slack.RateLimits[m]; l.PerMinute != per || l.Per != PerWorkspace {
			t.Errorf("%s = %+v; want %v a minute for the workspace", m, l, per)
		}
	}
}

func TestDisplayDefaultsToAutoWithATimeline(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig})
	if s := cfg.Slack; s.Display != DisplayAuto || s.TaskDisplay != TaskDisplayTimeline {
		t.Fatalf("display %q, task_display %q; want auto and timeline", s.Display, s.TaskDisplay)
	}
	cfg = mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "slack:\n  display: message\n  task_display: plan\n"})
	if s := cfg.Slack; s.Display != DisplayMessage || s.TaskDisplay != TaskDisplayPlan {
		t.Fatalf("set values not kept: %q %q", s.Display, s.TaskDisplay)
	}
}

func TestAdmissionBoundsDefaultToThreeQuestionsAPersonAndAHundredWaiting(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig})
	if s := cfg.Slack; s.MaxSessionsPerUser != 3 || s.MaxQueuedSessions != 100 || len(s.Allow.ExternalTeams) != 0 {
		t.Fatalf("max_sessions_per_user %d, max_queued_sessions %d, external_teams %v; want 3, 100 and none",
			s.MaxSessionsPerUser, s.MaxQueuedSessions, s.Allow.ExternalTeams)
	}
	cfg = mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + "slack:\n  max_sessions_per_user: 1\n  max_queued_sessions: 5\n" +
		"  allow:\n    external_teams: [T0PARTNER]\n"})
	if s := cfg.Slack; s.MaxSessionsPerUser != 1 || s.MaxQueuedSessions != 5 || len(s.Allow.ExternalTeams) != 1 {
		t.Fatalf("set values not kept: %d %d %v", s.MaxSessionsPerUser, s.MaxQueuedSessions, s.Allow.ExternalTeams)
	}
}

func TestEveryKeyAnAgentSharesWithTheDefaultsIsInheritedWhenOmittedAndWinsWhenSet(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, map[string]string{
		"slackbot.yaml": `llm:
  providers:
    openai: {}
    anthropic: {}
defaults:
  models: [openai/gpt-4.1-mini]
  max_turns: 7
  max_retries: 1
  max_tool_calls_per_turn: 4
  temperature: 0.3
  top_p: 0.9
  max_output_tokens: 2000
  context_window: 64000
  context_buffer: 300
  llm_timeout: 45s
  tool_timeout: 20s
  max_session_duration: 5m
  restriction_message: The defaults say to use a tool.
  restriction_max_injections: 2
`,
		"agents/none.md": "Inherits everything.\n",
		"agents/one.md":  "---\nmax_turns: 3\n---\nSets one key.\n",
		"agents/all.md": `---
models: [anthropic/claude-sonnet-4-5]
max_turns: 3
max_retries: 0
max_tool_calls_per_turn: 2
temperature: 0.7
top_p: 0.5
max_output_tokens: 1000
context_window: 32000
context_buffer: 100
llm_timeout: 30s
tool_timeout: 10s
max_session_duration: 2m
restriction_message: The agent says to use a tool.
restriction_max_injections: 0
tool_search: never
tools_pinned: ["github__*"]
tool_search_threshold: 10
tool_search_share: 0.5
tool_search_loaded: 4
---
Sets every key.
`,
	})
	defaults := cfg.Defaults
	if got := cfg.Agents["none"].AgentDefaults; !reflect.DeepEqual(got, defaults) {
		t.Errorf("an agent file setting no key has\n%+v\nwant the defaults section's\n%+v", got, defaults)
	}
	all := cfg.Agents["all"].AgentDefaults
	av, dv := reflect.ValueOf(all), reflect.ValueOf(defaults)
	for i := range av.NumField() {
		key := av.Type().Field(i).Tag.Get("yaml")
		if reflect.DeepEqual(av.Field(i).Interface(), dv.Field(i).Interface()) {
			t.Errorf("%s: the agent file's value is the defaults' (%v); the file set it, or this test misses a key", key, av.Field(i).Interface())
		}
	}
	if all.MaxTurns != 3 || all.RestrictionMaxInjections != 0 || *all.TopP != 0.5 || all.MaxSessionDuration.D() != 2*time.Minute {
		t.Errorf("an agent file setting every key has %+v", all)
	}
	one := cfg.Agents["one"].AgentDefaults
	want := defaults
	want.MaxTurns = 3
	if !reflect.DeepEqual(one, want) {
		t.Errorf("an agent file setting max_turns only has\n%+v\nwant\n%+v", one, want)
	}
}
