package config

import (
	"strings"
	"testing"
)

// withProvider returns baseConfig with extra lines under the openai provider
// (which starts on line 3; its type is on line 4, the extra lines from 5).
func withProvider(lines string) string {
	return strings.Replace(baseConfig, "      type: openai\n", "      type: openai\n"+lines, 1)
}

const okAgent = "---\ndescription: ok\n---\nPrompt.\n"

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		want    []string
		notWant []string
	}{
		{
			name:  "a provider type typo is named with the valid types",
			files: map[string]string{"slackbot.yaml": strings.Replace(baseConfig, "type: openai", "type: opena", 1)},
			want:  []string{`slackbot.yaml:4: llm.providers.openai.type: "opena" is not a provider type (did you mean "openai"?); use one of: openai, anthropic`},
		},
		{
			name:  "a provider without type and another name needs one",
			files: map[string]string{"slackbot.yaml": "llm:\n  providers:\n    local:\n      base_url: http://localhost:8080/v1\n"},
			want:  []string{"slackbot.yaml:3: llm.providers.local.type: is required; use one of: openai, anthropic"},
		},
		{
			name:  "a base URL must be http or https",
			files: map[string]string{"slackbot.yaml": withProvider("      base_url: localhost:11434\n")},
			want:  []string{"slackbot.yaml:5: llm.providers.openai.base_url: must start with http:// or https://"},
		},
		{
			name:  "a negative price is refused",
			files: map[string]string{"slackbot.yaml": withProvider("      models:\n        m1: {input: -1}\n")},
			want:  []string{"slackbot.yaml:6: llm.providers.openai.models.m1.input: a price cannot be negative"},
		},
		{
			name:  "an unknown top-level key suggests the right one and lists the valid ones",
			files: map[string]string{"slackbot.yaml": baseConfig + "agent_dir: ./bots\n"},
			want:  []string{`slackbot.yaml:9: unknown key "agent_dir" (did you mean "agents_dir"?); valid keys: llm, agents_dir, defaults,`},
		},
		{
			name:  "an unknown nested key names its parent",
			files: map[string]string{"slackbot.yaml": withProvider("      api_ky: x\n")},
			want:  []string{`slackbot.yaml:5: llm.providers.openai: unknown key "api_ky" (did you mean "api_key"?); valid keys: type, base_url, api_key,`},
		},
		{
			name:  "every unknown key is reported, not just the first",
			files: map[string]string{"slackbot.yaml": baseConfig + "sate: {}\nlog:\n  levl: info\n"},
			want:  []string{`slackbot.yaml:9: unknown key "sate" (did you mean "state"?)`, `slackbot.yaml:11: log: unknown key "levl" (did you mean "level"?)`},
		},
		{
			name:  "an unknown frontmatter key suggests the right one",
			files: map[string]string{"agents/assistant.md": "---\ndescription: x\n\nmax_turn: 3\n---\n"},
			want:  []string{`agents/assistant.md:4: unknown key "max_turn" (did you mean "max_turns"?); valid keys: description, models, max_turns,`},
		},
		{
			name:  "an unknown key without a near match lists the valid keys",
			files: map[string]string{"agents/a.md": "---\nwhatever: 1\n---\n"},
			want:  []string{`agents/a.md:2: unknown key "whatever"; valid keys: description,`},
		},
		{
			name:  "a model of an unconfigured provider lists the configured ones",
			files: map[string]string{"agents/x.md": "---\ndescription: x\nmodels:\n  - openai/gpt-4.1\n  - foo/bar\n---\n"},
			want:  []string{`agents/x.md:5: models[1]: provider "foo" is not configured in llm.providers (configured: anthropic, openai)`},
		},
		{
			name:  "a model reference needs a provider",
			files: map[string]string{"agents/x.md": "---\nmodels: [gpt-4.1]\n---\n"},
			want:  []string{`agents/x.md:2: models[0]: "gpt-4.1" is not a model reference; write provider/model`},
		},
		{
			name:  "a defaults model of an unconfigured provider is reported in the config",
			files: map[string]string{"slackbot.yaml": strings.Replace(baseConfig, "openai/gpt-4.1-mini", "azure/gpt", 1)},
			want:  []string{`slackbot.yaml:8: defaults.models[0]: provider "azure" is not configured`},
		},
		{
			name:  "an agent needs at least one model",
			files: map[string]string{"slackbot.yaml": "llm:\n  providers:\n    openai: {}\n", "agents/a.md": okAgent},
			want:  []string{"agents/a.md: models: no model to use: list provider/model references here, or set defaults.models in"},
		},
		{
			name:  "an output format must be known",
			files: map[string]string{"agents/a.md": "---\noutput:\n  format: jsn\n---\n"},
			want:  []string{`agents/a.md:3: output.format: "jsn" is not an output format (did you mean "json"?); use one of: json, markdown, markdown+mermaid, slack-block-kit`},
		},
		{
			name:  "a json schema must compile",
			files: map[string]string{"agents/a.md": "---\noutput:\n  format: json\n  schema:\n    type: objekt\n---\n"},
			want:  []string{"agents/a.md:4: output.schema: is not a valid JSON Schema:", "/type"},
		},
		{
			name:  "a schema is refused for a format other than json",
			files: map[string]string{"agents/a.md": "---\noutput:\n  format: markdown\n  schema: {type: object}\n---\n"},
			want:  []string{"agents/a.md:4: output.schema: a schema applies only to json output; set output.format: json"},
		},
		{
			name:  "a schema_ref is refused when the format defaults to markdown",
			files: map[string]string{"agents/a.md": "---\noutput:\n  schema_ref: s.json\n---\n"},
			want:  []string{"agents/a.md:3: output.schema_ref: a schema applies only to json output"},
		},
		{
			name:  "a missing schema_ref file is named",
			files: map[string]string{"agents/a.md": "---\noutput:\n  format: json\n  schema_ref: schemas/missing.json\n---\n"},
			want:  []string{"agents/a.md:4: output.schema_ref: schema file ", "agents/schemas/missing.json does not exist (schema_ref is relative to the agent file)"},
		},
		{
			name:  "a schema_ref file that is not JSON is reported",
			files: map[string]string{"agents/a.md": "---\noutput:\n  format: json\n  schema_ref: s.json\n---\n", "agents/s.json": "{not json"},
			want:  []string{"agents/a.md:4: output.schema_ref: ", "s.json is not a JSON Schema object"},
		},
		{
			name:  "schema and schema_ref together are refused",
			files: map[string]string{"agents/a.md": "---\noutput:\n  format: json\n  schema: {type: object}\n  schema_ref: s.json\n---\n"},
			want:  []string{"agents/a.md:5: output.schema_ref: set output.schema or output.schema_ref, not both"},
		},
		{
			name: "sampling settings must be in range",
			files: map[string]string{
				"agents/a.md":   "---\ntemperature: 2.5\ntop_p: 1.5\n---\n",
				"slackbot.yaml": baseConfig + "  temperature: -1\n",
			},
			want: []string{
				"agents/a.md:2: temperature: must be between 0 and 2, got 2.5",
				"agents/a.md:3: top_p: must be between 0 and 1, got 1.5",
				"slackbot.yaml:9: defaults.temperature: must be between 0 and 2, got -1",
			},
		},
		{
			name: "counts must be positive",
			files: map[string]string{"agents/a.md": "---\nmax_turns: 0\nmax_tool_calls_per_turn: 0\nmax_output_tokens: 0\n" +
				"max_retries: -1\nrestriction_max_injections: -1\ncontext_buffer: -5\n---\n"},
			want: []string{
				"agents/a.md:2: max_turns: must be at least 1",
				"agents/a.md:3: max_tool_calls_per_turn: must be at least 1",
				"agents/a.md:4: max_output_tokens: must be at least 1",
				"agents/a.md:5: max_retries: must be at least 0",
				"agents/a.md:6: restriction_max_injections: must be at least 0 (reminders per turn; 0 means unlimited), got -1",
				"agents/a.md:7: context_buffer: must be at least 0",
			},
		},
		{
			name:  "timeouts must be positive",
			files: map[string]string{"agents/a.md": "---\nllm_timeout: 0s\n---\n"},
			want:  []string{"agents/a.md:2: llm_timeout: must be a positive duration"},
		},
		{
			name:  "a duration needs a unit",
			files: map[string]string{"slackbot.yaml": baseConfig + "  llm_timeout: 30\n"},
			want:  []string{`slackbot.yaml:9: defaults.llm_timeout: "30" is not a duration: write it with a unit, like "30s", "1500ms" or "10m"`},
		},
		{
			name:  "a number is required where one is expected",
			files: map[string]string{"slackbot.yaml": baseConfig + "  max_turns: ten\n"},
			want:  []string{`slackbot.yaml:9: defaults.max_turns: "ten" is not a whole number`},
		},
		{
			name:    "a list is required where one is expected",
			files:   map[string]string{"agents/a.md": "---\nmodels: openai/gpt-4.1\n---\n"},
			want:    []string{"agents/a.md:2: models: want a list"},
			notWant: []string{"no model to use"},
		},
		{
			name: "problems found while reading and while checking are reported together",
			files: map[string]string{
				"slackbot.yaml": strings.Replace(baseConfig, "type: openai", "type: opena\n      api_key: ${UNSET_KEY}", 1) +
					"  llm_timeout: 30\n  max_turns: 0\nlogs: {}\n",
				"agents/a.md": "---\nmax_turn: 1\ntemperature: 9\n---\n",
			},
			want: []string{
				`slackbot.yaml:4: llm.providers.openai.type: "opena" is not a provider type`,
				"slackbot.yaml:5: llm.providers.openai.api_key: environment variable UNSET_KEY is not set",
				`slackbot.yaml:10: defaults.llm_timeout: "30" is not a duration`,
				"slackbot.yaml:11: defaults.max_turns: must be at least 1",
				`slackbot.yaml:12: unknown key "logs" (did you mean "log"?)`,
				`agents/a.md:2: unknown key "max_turn"`,
				"agents/a.md:3: temperature: must be between 0 and 2",
			},
			notWant: []string{"llm_timeout: must be a positive duration"},
		},
		{
			name:  "a boolean is required where one is expected",
			files: map[string]string{"agents/a.md": "---\nrestrict_output: yes please\n---\n"},
			want:  []string{`agents/a.md:2: restrict_output: "yes please" is not a boolean; write true or false`},
		},
		{
			name:  "the context window must hold the reply and the buffer",
			files: map[string]string{"agents/a.md": "---\ncontext_window: 4000\nmax_output_tokens: 4000\n---\n"},
			want:  []string{"agents/a.md:2: context_window: context_window (4000) must be greater than max_output_tokens (4000) + context_buffer (256)"},
		},
		{
			name: "a model's small window is blamed on the models",
			files: map[string]string{
				"slackbot.yaml": withProvider("      models:\n        tiny: {context_window: 2048}\n"),
				"agents/a.md":   "---\nmodels: [openai/tiny]\nmax_output_tokens: 2000\n---\n",
			},
			want: []string{"agents/a.md:3: max_output_tokens: context_window (2048, capped by the window of openai/tiny) must be greater than max_output_tokens (2000)"},
		},
		{
			name:  "the defaults' context window is checked too",
			files: map[string]string{"slackbot.yaml": baseConfig + "  context_window: 1000\n"},
			want:  []string{"slackbot.yaml:9: defaults.context_window: context_window (1000) must be greater than max_output_tokens (4096)"},
		},
		{
			name:  "a tools glob must be valid",
			files: map[string]string{"agents/a.md": "---\ntools: [\"github__*\", \"[bad\"]\n---\n"},
			want:  []string{`agents/a.md:2: tools[1]: "[bad" is not a valid pattern`},
		},
		{
			name:  "a sub-agent must exist",
			files: map[string]string{"agents/a.md": "---\nagents:\n  - helper\n---\n", "agents/b.md": okAgent},
			want:  []string{`agents/a.md:3: agents[0]: agent "helper" does not exist (agents: a, b)`},
		},
		{
			name: "a sub-agent cycle names the cycle",
			files: map[string]string{
				"agents/a.md": "---\nagents: [b]\n---\n",
				"agents/b.md": "---\nagents: [c]\n---\n",
				"agents/c.md": "---\nagents: [a]\n---\n",
			},
			want: []string{"agents/a.md:2: agents[0]: sub-agents form a cycle: a → b → c → a"},
		},
		{
			name:  "an agent calling itself is a cycle",
			files: map[string]string{"agents/a.md": "---\nagents: [a]\n---\n"},
			want:  []string{"agents/a.md:2: agents[0]: sub-agents form a cycle: a → a"},
		},
		{
			name:  "a router destination must exist",
			files: map[string]string{"agents/r.md": "---\nrouter:\n  destinations: [sales, r]\n---\n"},
			want:  []string{`agents/r.md:3: router.destinations[0]: agent "sales" does not exist (agents: r)`, "router.destinations[1]: a router cannot hand off to itself"},
		},
		{
			name:  "an agent name must be a safe identifier",
			files: map[string]string{"agents/my agent.md": okAgent},
			want:  []string{`agents/my agent.md: agent name "my agent" (the file name without .md) may contain only letters, digits, '_' and '-'; rename the file`},
		},
		{
			name:  "an agent cannot take a built-in tool's name",
			files: map[string]string{"agents/final_report.md": okAgent},
			want:  []string{`agent name "final_report" is taken by the built-in tool agent__final_report`},
		},
		{
			name:  "an unclosed frontmatter is reported",
			files: map[string]string{"agents/a.md": "---\ndescription: x\nPrompt without a fence.\n"},
			want:  []string{`agents/a.md:1: the frontmatter opened with "---" on line 1 is not closed`},
		},
		{
			name:  "a YAML syntax error has its line",
			files: map[string]string{"slackbot.yaml": baseConfig + "log:\n  level: [info\n"},
			want:  []string{"slackbot.yaml:10: "},
		},
		{
			name:  "an unquoted reference inside brackets gets a hint",
			files: map[string]string{"agents/a.md": "---\nmodels: [${MODEL}]\n---\n"},
			want:  []string{"agents/a.md:2: ", `inside [ ] or { }, quote a value that uses ${...}, like ["${MODEL}"]`},
		},
		{
			name:  "a duplicate key has its line",
			files: map[string]string{"slackbot.yaml": baseConfig + "log: {}\nlog: {}\n"},
			want:  []string{`slackbot.yaml:10: mapping key "log" already defined at [9:1]`},
		},
		{
			name:  "a missing agents_dir is reported with the fix",
			files: map[string]string{"slackbot.yaml": baseConfig + "agents_dir: ./nowhere\n"},
			want:  []string{"slackbot.yaml:9: agents_dir: directory ", "nowhere does not exist; create it with one Markdown file per agent"},
		},
		{
			name:  "the Slack agent must exist",
			files: map[string]string{"slackbot.yaml": baseConfig + "slack:\n  agent: helper\n", "agents/a.md": okAgent},
			want:  []string{`slackbot.yaml:10: slack.agent: agent "helper" is not in`, "(agents: a)"},
		},
		{
			name: "a Slack rate limit needs a rate, a burst and a known scope",
			files: map[string]string{"slackbot.yaml": baseConfig + "slack:\n  rate_limits:\n    chat.update: {per_minute: 0, burst: 8}\n" +
				"    chat.postMessage: {per_minute: 60, burst: 4, per: thread}\n", "agents/a.md": okAgent},
			want: []string{
				"slackbot.yaml:11: slack.rate_limits.chat.update: per_minute must be above 0 and burst at least 1",
				`slackbot.yaml:12: slack.rate_limits.chat.postMessage.per: "thread" is not a scope; use workspace or channel`,
			},
		},
		{
			name:  "display and task display name known ways of drawing a session",
			files: map[string]string{"slackbot.yaml": baseConfig + "slack:\n  display: live\n  task_display: kanban\n", "agents/a.md": okAgent},
			want: []string{
				`slack.display: "live" is not a display: use auto (the default), stream or message`,
				`slack.task_display: "kanban" is not a task display: use timeline (the default) or plan`,
			},
		},
		{
			name: "admission bounds cannot be negative and external teams are team or enterprise ids",
			files: map[string]string{"slackbot.yaml": baseConfig + "slack:\n  max_sessions_per_user: -1\n  max_queued_sessions: -2\n" +
				"  allow:\n    external_teams: [T0PARTNER, E0GRID, \"*\", partner.slack.com]\n", "agents/a.md": okAgent},
			want: []string{
				"slack.max_sessions_per_user: must be at least 1 (default 3), got -1",
				"slack.max_queued_sessions: must be at least 1 (default 100), got -2",
				`slack.allow.external_teams[3]: "partner.slack.com" is not a team id`,
			},
			notWant: []string{"external_teams[0]", "external_teams[1]", "external_teams[2]"},
		},
		{
			name: "queues referenced by tools must exist",
			files: map[string]string{"slackbot.yaml": baseConfig + "queues:\n  slow: {concurrency: 2}\nmcp_servers:\n  gh:\n    command: gh-mcp\n    queue: fast\n" +
				"rest_tools:\n  wx:\n    url: https://wx.example.com\n    queue: nope\n"},
			want: []string{
				`slackbot.yaml:14: mcp_servers.gh.queue: queue "fast" is not defined under queues (configured: slow); add it with a concurrency`,
				`slackbot.yaml:18: rest_tools.wx.queue: queue "nope" is not defined under queues`,
			},
		},
		{
			name:  "a queue needs a concurrency",
			files: map[string]string{"slackbot.yaml": baseConfig + "queues:\n  slow: {}\n"},
			want:  []string{"slackbot.yaml:10: queues.slow.concurrency: must be at least 1"},
		},
		{
			name: "an MCP server needs a command or a URL",
			files: map[string]string{"slackbot.yaml": baseConfig + "mcp_servers:\n  a: {}\n  b:\n    type: websocket\n    url: https://x\n" +
				"  c:\n    type: http\n  d:\n    command: x\n    tools_allowed: [\"[\"]\n"},
			want: []string{
				"slackbot.yaml:10: mcp_servers.a: set command (a local stdio server) or url (an http server)",
				`slackbot.yaml:12: mcp_servers.b.type: "websocket" is not an MCP transport; use one of: stdio, http, sse`,
				"slackbot.yaml:14: mcp_servers.c.url: is required for an http server",
				`slackbot.yaml:18: mcp_servers.d.tools_allowed[0]: "[" is not a valid pattern`,
			},
		},
		{
			name: "a REST tool needs a URL, a method and a valid schema",
			files: map[string]string{"slackbot.yaml": baseConfig + "rest_tools:\n  a:\n    method: FETCH\n  b:\n    url: ftp://x\n" +
				"    parameters: {type: 12}\n"},
			want: []string{
				`slackbot.yaml:11: rest_tools.a.method: "FETCH" is not an HTTP method`,
				"slackbot.yaml:10: rest_tools.a.url: is required",
				"slackbot.yaml:13: rest_tools.b.url: must start with http:// or https://",
				"slackbot.yaml:14: rest_tools.b.parameters: is not a valid JSON Schema",
			},
		},
		{
			name: "MCP health probes, REST streaming and OpenAPI imports are checked",
			files: map[string]string{"slackbot.yaml": baseConfig + "mcp_servers:\n  a:\n    command: x\n    health_probe: curl\n" +
				"rest_tools:\n  s:\n    url: https://x\n    streaming: {mode: sse}\n" +
				"openapi:\n  p:\n    base_url: ftp://x\n    methods: [FETCH]\n    queue: q\n" +
				"mcp_init_concurrency: 0\nmax_agent_depth: 0\n"},
			want: []string{
				`slackbot.yaml:12: mcp_servers.a.health_probe: "curl" is not a health probe; use one of: ping, list_tools`,
				`slackbot.yaml:16: rest_tools.s.streaming.mode: "sse" is not a streaming mode; use one of: json-stream`,
				"rest_tools.s.streaming.discriminator_field: is required",
				"rest_tools.s.streaming.done_value: is required",
				"rest_tools.s.streaming: set answer_field",
				"openapi.p.spec: is required",
				"slackbot.yaml:19: openapi.p.base_url: must start with http:// or https://",
				`openapi.p.methods[0]: "FETCH" is not an HTTP method`,
				`openapi.p.queue: queue "q" is not defined under queues`,
				"slackbot.yaml:22: mcp_init_concurrency: must be at least 1",
				"slackbot.yaml:23: max_agent_depth: must be at least 1",
			},
		},
		{
			name:  "a lease shorter than a few store round trips is refused",
			files: map[string]string{"slackbot.yaml": baseConfig + "state:\n  lease_ttl: 1s\n"},
			want:  []string{"slackbot.yaml:10: state.lease_ttl: 1s is out of range; use between 3s and 1h0m0s (default 20s)"},
		},
		{
			name:  "session records kept for less than an hour are refused",
			files: map[string]string{"slackbot.yaml": baseConfig + "state:\n  session_retention: 10m\n"},
			want:  []string{"slackbot.yaml:10: state.session_retention: 10m0s is too short; keep session records at least 1h0m0s (default 2160h0m0s)"},
		},
		{
			name:  "the state backend must be known",
			files: map[string]string{"slackbot.yaml": baseConfig + "state:\n  backend: postgres\n"},
			want:  []string{`slackbot.yaml:10: state.backend: "postgres" is not a state backend; use one of: memory, sqlite, redis`},
		},
		{
			name:  "a redis backend needs a URL",
			files: map[string]string{"slackbot.yaml": baseConfig + "state:\n  backend: redis\n"},
			want:  []string{"slackbot.yaml:10: state.backend: redis needs state.redis_url"},
		},
		{
			name:  "the metrics address and the tracing keys are checked",
			files: map[string]string{"slackbot.yaml": baseConfig + "metrics:\n  listen: 9090\ntracing:\n  endpoint: collector:4318\n  sample_ratio: 2\n"},
			want: []string{
				`slackbot.yaml:10: metrics.listen: "9090" is not a listen address; write host:port, like 127.0.0.1:9090 or :9090`,
				`slackbot.yaml:12: tracing.endpoint: must start with http:// or https://, like http://127.0.0.1:4318`,
				`slackbot.yaml:13: tracing.sample_ratio: must be between 0 and 1`,
			},
		},
		{
			name:  "a redis prefix with a space is refused",
			files: map[string]string{"slackbot.yaml": baseConfig + "state:\n  redis_prefix: \"bot one:\"\n"},
			want:  []string{`slackbot.yaml:10: state.redis_prefix: "bot one:" holds a space or control character`},
		},
		{
			name:  "log level and format must be known",
			files: map[string]string{"slackbot.yaml": baseConfig + "log:\n  level: verbose\n  format: xml\n"},
			want: []string{
				`slackbot.yaml:10: log.level: "verbose" is not a log level; use one of: debug, info, warn, error`,
				`slackbot.yaml:11: log.format: "xml" is not a log format; use one of: json, console`,
			},
		},
		{
			name:  "tool output size must be positive when set",
			files: map[string]string{"slackbot.yaml": baseConfig + "tool_output:\n  max_bytes: 0\n"},
			want:  []string{"slackbot.yaml:10: tool_output.max_bytes: must be positive (default 12288)"},
		},
		{
			name:  "a second YAML document is refused",
			files: map[string]string{"slackbot.yaml": baseConfig + "---\nlog: {}\n"},
			want:  []string{"holds more than one YAML document"},
		},
		{
			name: "problems of several files are reported together",
			files: map[string]string{
				"slackbot.yaml": baseConfig + "log:\n  level: loud\n",
				"agents/a.md":   "---\nmax_turns: 0\n---\n",
				"agents/b.md":   "---\ntools: [\"[\"]\n---\n",
			},
			want: []string{"slackbot.yaml:10: log.level", "agents/a.md:2: max_turns", "agents/b.md:2: tools[0]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFiles(t, tt.files)
			wantErrors(t, err, tt.want...)
			for _, nw := range tt.notWant {
				if err != nil && strings.Contains(err.Error(), nw) {
					t.Errorf("error contains %q, a consequence of another problem:\n%v", nw, err)
				}
			}
		})
	}
}
