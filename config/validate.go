package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Valid values of the configuration's enumerations.
var (
	providerTypes  = []string{"openai", "anthropic"}
	mcpTypes       = []string{"stdio", "http", "sse"}
	healthProbes   = []string{"ping", "list_tools"}
	streamModes    = []string{"json-stream"}
	stateBackends  = []string{"memory", "sqlite", "redis"} // "" lets the state package choose
	logLevels      = []string{"debug", "info", "warn", "error"}
	logFormats     = []string{"json", "console"}
	restMethods    = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
	providerNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	toolNameRe     = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	envNameRe      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// validate checks the configuration file (not its agents), reporting every
// problem through w.
func (c *Config) validate(w *walker) {
	for _, name := range sortedKeys(c.LLM.Providers) {
		c.validateProvider(w, name, c.LLM.Providers[name])
	}
	setDefault := func(k string) bool { return w.present["defaults."+k] }
	checkLimits(w, "defaults.", c.Defaults, setDefault)
	if setDefault("context_window") || setDefault("max_output_tokens") || setDefault("context_buffer") {
		d := c.Defaults
		checkWindow(w, firstSet("defaults.", setDefault, "context_window", "max_output_tokens", "context_buffer"),
			d.ContextWindow, d.MaxOutputTokens, d.ContextBuffer, "")
	}
	for i, ref := range c.Defaults.Models {
		checkModelRef(w, fmt.Sprintf("defaults.models[%d]", i), ref, c)
	}
	for _, name := range sortedKeys(c.Queues) {
		if q := c.Queues[name]; q.Concurrency < 1 {
			w.errorf("queues."+name+".concurrency", "must be at least 1 (the number of calls of this queue that run at once), got %d", q.Concurrency)
		}
	}
	for _, name := range sortedKeys(c.MCPServers) {
		c.validateMCP(w, name)
	}
	for _, name := range sortedKeys(c.RestTools) {
		c.validateREST(w, name)
	}
	for _, name := range sortedKeys(c.OpenAPI) {
		c.validateOpenAPI(w, name)
	}
	if w.present["mcp_init_concurrency"] && c.MCPInitConcurrency < 1 {
		w.errorf("mcp_init_concurrency", "must be at least 1 (how many MCP servers start at once; default %d), got %d", DefaultMCPInitConcurrency, c.MCPInitConcurrency)
	}
	if w.present["max_agent_depth"] && c.MaxAgentDepth < 1 {
		w.errorf("max_agent_depth", "must be at least 1 (1 = no sub-agents; default %d), got %d", DefaultMaxAgentDepth, c.MaxAgentDepth)
	}
	c.validateApprovals(w)
	checkToolOutput(w, "", c.ToolOutput, func(k string) bool { return w.present[k] }, c)
	c.validateSlack(w)
	for _, q := range []struct {
		key string
		b   Budget
	}{{"quotas.user", c.Quotas.User}, {"quotas.channel", c.Quotas.Channel}} {
		if q.b.DailyTokens < 0 || q.b.DailyCostUSD < 0 {
			w.errorf(q.key, "a daily budget cannot be negative (0 means no limit)")
		}
	}
	if b := c.State.Backend; b != "" && !slices.Contains(stateBackends, b) {
		w.errorf("state.backend", "%q is not a state backend; use one of: %s (or leave it empty for the default)", b, oneOf(stateBackends))
	}
	if d := c.State.LeaseTTL.D(); d < MinLeaseTTL || d > maxLeaseTTL {
		w.errorf("state.lease_ttl", "%s is out of range; use between %s and %s (default %s)", d, MinLeaseTTL, maxLeaseTTL, DefaultLeaseTTL)
	}
	if d := c.State.SessionRetention.D(); d < minSessionRetention {
		w.errorf("state.session_retention", "%s is too short; keep session records at least %s (default %s)", d, minSessionRetention, defaultSessionRetention)
	}
	if c.State.Backend == "redis" {
		if c.State.RedisURL == "" {
			w.errorf("state.backend", "redis needs state.redis_url, e.g. redis_url: ${REDIS_URL} with REDIS_URL=redis://host:6379/0")
		} else if u, err := url.Parse(c.State.RedisURL.Reveal()); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			w.errorf("state.redis_url", "is not a redis:// or rediss:// URL with a host")
		}
	}
	if l := c.Metrics.Listen; l != "" {
		if _, port, err := net.SplitHostPort(l); err != nil || port == "" {
			w.errorf("metrics.listen", "%q is not a listen address; write host:port, like 127.0.0.1:9090 or :9090 (empty serves no metrics)", l)
		}
	}
	if e := c.Tracing.Endpoint; e != "" {
		if msg := checkHTTPURL(e); msg != "" {
			w.errorf("tracing.endpoint", "%s (an OTLP/HTTP collector, like http://127.0.0.1:4318)", strings.Replace(msg, "https://api.example.com/v1", "http://127.0.0.1:4318", 1))
		}
	}
	if r := c.Tracing.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		w.errorf("tracing.sample_ratio", "must be between 0 and 1 (the share of sessions traced; default 1), got %g", *r)
	}
	if i := strings.IndexFunc(c.State.RedisPrefix, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		w.errorf("state.redis_prefix", "%q holds a space or control character; use letters, digits and punctuation, e.g. %q", c.State.RedisPrefix, "slackbot-staging:")
	}
	if !slices.Contains(logLevels, c.Log.Level) {
		w.errorf("log.level", "%q is not a log level; use one of: %s", c.Log.Level, oneOf(logLevels))
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		w.errorf("log.format", "%q is not a log format; use one of: %s", c.Log.Format, oneOf(logFormats))
	}
}

func (c *Config) validateProvider(w *walker, name string, p Provider) {
	key := "llm.providers." + name
	if p.MaxTools < 0 {
		w.errorf(key+".max_tools", "cannot be negative (0 means the wire's own limit), got %d", p.MaxTools)
	}
	if !providerNameRe.MatchString(name) {
		w.errorf(key, "provider names may contain only letters, digits, '.', '_' and '-' (agents name models as \"provider/model\")")
	}
	switch {
	case p.Type == "":
		w.errorf(key+".type", "is required; use one of: %s", oneOf(providerTypes))
	case !slices.Contains(providerTypes, p.Type):
		msg := fmt.Sprintf("%q is not a provider type; use one of: %s", p.Type, oneOf(providerTypes))
		if s := suggest(p.Type, providerTypes); s != "" {
			msg = fmt.Sprintf("%q is not a provider type (did you mean %q?); use one of: %s", p.Type, s, oneOf(providerTypes))
		}
		w.errorf(key+".type", "%s", msg)
	}
	if p.BaseURL != "" {
		if msg := checkHTTPURL(p.BaseURL); msg != "" {
			w.errorf(key+".base_url", "%s", msg)
		}
	}
	for _, m := range sortedKeys(p.Models) {
		mk := key + ".models." + m
		price := p.Models[m]
		for _, f := range []struct {
			k string
			v float64
		}{{"input", price.Input}, {"output", price.Output}, {"cache_read", price.CacheRead}, {"cache_write", price.CacheWrite}} {
			if f.v < 0 {
				w.errorf(mk+"."+f.k, "a price cannot be negative (US dollars per million tokens), got %g", f.v)
			}
		}
		if price.ContextWindow < 0 {
			w.errorf(mk+".context_window", "cannot be negative, got %d", price.ContextWindow)
		}
		if price.MaxTools < 0 {
			w.errorf(mk+".max_tools", "cannot be negative (0 means the provider's limit), got %d", price.MaxTools)
		}
	}
}

func (c *Config) validateMCP(w *walker, name string) {
	key := "mcp_servers." + name
	s := c.MCPServers[name]
	if !toolNameRe.MatchString(name) {
		w.errorf(key, "server names may contain only letters, digits, '_' and '-' (its tools are named %q)", name+"__<tool>")
	}
	typ := s.Transport()
	switch typ {
	case "":
		w.errorf(key, "set command (a local stdio server) or url (an http server)")
	case "stdio":
		if s.Command == "" {
			w.errorf(key+".command", "is required for a stdio server")
		}
	case "http", "sse":
		if s.URL == "" {
			w.errorf(key+".url", "is required for an %s server", typ)
		} else if msg := checkHTTPURL(s.URL); msg != "" {
			w.errorf(key+".url", "%s", msg)
		}
	default:
		w.errorf(key+".type", "%q is not an MCP transport; use one of: %s", s.Type, oneOf(mcpTypes))
	}
	for i, n := range s.InheritEnv {
		if !envNameRe.MatchString(n) {
			w.errorf(fmt.Sprintf("%s.inherit_env[%d]", key, i), "%q is not an environment variable name; list names such as GITHUB_TOKEN (letters, digits and '_', not starting with a digit)", n)
		}
	}
	if len(s.InheritEnv) > 0 && typ != "stdio" && typ != "" {
		w.errorf(key+".inherit_env", "applies to stdio servers only (those with a command); remove it")
	}
	c.checkQueue(w, key+".queue", s.Queue)
	checkGlobs(w, key+".tools_allowed", s.ToolsAllow)
	checkGlobs(w, key+".tools_denied", s.ToolsDeny)
	if p := s.HealthProbe; p != "" && !slices.Contains(healthProbes, p) {
		w.errorf(key+".health_probe", "%q is not a health probe; use one of: %s", p, oneOf(healthProbes))
	}
}

func (c *Config) validateOpenAPI(w *walker, name string) {
	key := "openapi." + name
	o := c.OpenAPI[name]
	if !toolNameRe.MatchString(name) {
		w.errorf(key, "names may contain only letters, digits, '_' and '-' (its tools are named %q)", "rest__"+name+"_<operationId>")
	}
	if o.Spec == "" {
		w.errorf(key+".spec", "is required: an OpenAPI 3 document, as a file path or an http(s) URL")
	}
	if o.BaseURL != "" {
		if msg := checkHTTPURL(o.BaseURL); msg != "" {
			w.errorf(key+".base_url", "%s", msg)
		}
	}
	for i, m := range o.Methods {
		if !slices.Contains(restMethods, strings.ToUpper(m)) {
			w.errorf(fmt.Sprintf("%s.methods[%d]", key, i), "%q is not an HTTP method; use one of: %s", m, oneOf(restMethods))
		}
	}
	checkGlobs(w, key+".operations", o.Operations)
	c.checkQueue(w, key+".queue", o.Queue)
}

func (c *Config) validateREST(w *walker, name string) {
	key := "rest_tools." + name
	t := c.RestTools[name]
	if !toolNameRe.MatchString(name) {
		w.errorf(key, "tool names may contain only letters, digits, '_' and '-' (it is offered as %q)", "rest__"+name)
	}
	if t.Method != "" && !slices.Contains(restMethods, strings.ToUpper(t.Method)) {
		w.errorf(key+".method", "%q is not an HTTP method; use one of: %s", t.Method, oneOf(restMethods))
	}
	if t.URL == "" {
		w.errorf(key+".url", "is required")
	} else if !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "https://") {
		w.errorf(key+".url", "must start with http:// or https://")
	}
	if t.Parameters != nil {
		// The schema's location is its file (relative $refs resolve
		// beside it), never a fragment: the compiler reads one as an
		// anchor it then cannot find.
		loc := "mem:///" + key + ".json"
		if c.Path != "" {
			loc, _ = filepath.Abs(c.Path)
		}
		if _, err := compileSchema(t.Parameters, loc); err != nil {
			w.errorf(key+".parameters", "is not a valid JSON Schema: %v", err)
		}
	}
	c.checkQueue(w, key+".queue", t.Queue)
	if st := t.Streaming; st != nil {
		if !slices.Contains(streamModes, st.Mode) {
			w.errorf(key+".streaming.mode", "%q is not a streaming mode; use one of: %s", st.Mode, oneOf(streamModes))
		}
		if st.DiscriminatorField == "" {
			w.errorf(key+".streaming.discriminator_field", "is required: the field of each line that tells its kind")
		}
		if st.DoneValue == "" {
			w.errorf(key+".streaming.done_value", "is required: the kind of the line that ends the stream")
		}
		if st.AnswerField == "" && (st.TokenValue == "" || st.TokenField == "") {
			w.errorf(key+".streaming", "set answer_field (the done line's answer), or token_value and token_field (pieces joined into the answer)")
		}
		if st.MaxBytes < 0 {
			w.errorf(key+".streaming.max_bytes", "cannot be negative, got %d", st.MaxBytes)
		}
	}
}

func (c *Config) checkQueue(w *walker, key, q string) {
	if _, ok := c.Queues[q]; ok || q == "" {
		return
	}
	configured := "none are"
	if len(c.Queues) > 0 {
		configured = "configured: " + oneOf(sortedKeys(c.Queues))
	}
	w.errorf(key, "queue %q is not defined under queues (%s); add it with a concurrency", q, configured)
}

// checkToolOutput checks the tool_output keys set (in the configuration file
// when prefix is "", else an agent file).
func checkToolOutput(w *walker, prefix string, t ToolOutput, set func(string) bool, c *Config) {
	if set("tool_output.max_bytes") && t.MaxBytes < 1 {
		w.errorf(prefix+"tool_output.max_bytes", "must be positive (default %d), got %d", DefaultToolResponseMaxByte, t.MaxBytes)
	}
	if set("tool_output.max_chunks_for_full_mode") && t.MaxChunksForFullMode < 1 {
		w.errorf(prefix+"tool_output.max_chunks_for_full_mode", "must be at least 1 (default %d), got %d", defaultMaxChunksForFull, t.MaxChunksForFullMode)
	}
	if set("tool_output.overlap_percent") && (t.OverlapPercent < 0 || t.OverlapPercent > 50) {
		w.errorf(prefix+"tool_output.overlap_percent", "must be between 0 and 50 (default %d), got %d", defaultOverlapPercent, t.OverlapPercent)
	}
	if set("tool_output.model") && t.Model != "" {
		checkModelRef(w, prefix+"tool_output.model", t.Model, c)
	}
}

// checkGlobs reports tool name patterns path.Match would refuse.
func checkGlobs(w *walker, key string, globs []string) {
	for i, g := range globs {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			w.errorf(fmt.Sprintf("%s[%d]", key, i), "%q is not a valid pattern; use * for any run of characters, ? for one, [a-z] for a class, and \\ to escape", g)
		}
	}
}

// checkHTTPURL returns why s is not an absolute http(s) URL, or "".
// The URL itself is not repeated: it may carry a credential.
func checkHTTPURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "is not a URL; write it like https://api.example.com/v1"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "must start with http:// or https://, like https://api.example.com/v1"
	}
	if u.Host == "" {
		return "has no host; write it like https://api.example.com/v1"
	}
	return ""
}

// ParseModelRef splits a model reference "provider/model" at its first
// "/". The model part may itself contain "/", as OpenRouter's do:
// "openrouter/anthropic/claude-3.5" is provider "openrouter", model
// "anthropic/claude-3.5".
func ParseModelRef(s string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(s, "/")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("%q is not a model reference; write provider/model, like openai/gpt-4.1-mini", s)
	}
	return provider, model, nil
}

// checkModelRef reports a model reference that does not parse or names a
// provider that is not configured.
func checkModelRef(w *walker, key, ref string, c *Config) {
	prov, _, err := ParseModelRef(ref)
	if err != nil {
		w.errorf(key, "%v", err)
		return
	}
	if _, ok := c.LLM.Providers[prov]; ok {
		return
	}
	configured := "none are configured"
	if len(c.LLM.Providers) > 0 {
		configured = "configured: " + oneOf(sortedKeys(c.LLM.Providers))
	}
	w.errorf(key, "provider %q is not configured in llm.providers (%s)", prov, configured)
}

// checkLimits checks the keys an agent file or the defaults section sets
// (prefix is "" or "defaults.").
func checkLimits(w *walker, prefix string, d AgentDefaults, set func(string) bool) {
	atLeast := func(key string, v, low int, what string) {
		if set(key) && v < low {
			w.errorf(prefix+key, "must be at least %d (%s), got %d", low, what, v)
		}
	}
	atLeast("max_turns", d.MaxTurns, 1, "model calls a session may make")
	atLeast("max_retries", d.MaxRetries, 0, "extra attempts after a failed model call; 0 means none")
	atLeast("max_tool_calls_per_turn", d.MaxToolCallsPerTurn, 1, "tool calls honoured from one model reply")
	atLeast("max_output_tokens", d.MaxOutputTokens, 1, "tokens a reply may have")
	atLeast("context_window", d.ContextWindow, 1, "tokens the model accepts")
	atLeast("context_buffer", d.ContextBuffer, 0, "tokens kept free as a safety margin")
	atLeast("restriction_max_injections", d.RestrictionMaxInjections, 0, "reminders per turn; 0 means unlimited")
	atLeast("tool_search_threshold", d.ToolSearchThreshold, 1, "tools an agent may have before tool_search: auto turns on")
	atLeast("tool_search_loaded", d.ToolSearchLoaded, 1, "tools found by tools__search that stay loaded")
	if set("tool_search_share") && (d.ToolSearchShare <= 0 || d.ToolSearchShare > 1) {
		w.errorf(prefix+"tool_search_share", "must be a share of the context window above 0 and at most 1 (0.25 is a quarter), got %g", d.ToolSearchShare)
	}
	if set("tool_search") && !slices.Contains(ToolSearchModes, d.ToolSearch) {
		w.errorf(prefix+"tool_search", "%q is not a tool search mode; use one of: %s", d.ToolSearch, oneOf(ToolSearchModes))
	}
	if set("tools_pinned") {
		checkGlobs(w, prefix+"tools_pinned", d.ToolsPinned)
	}
	if set("temperature") && d.Temperature != nil && (*d.Temperature < 0 || *d.Temperature > 2) {
		w.errorf(prefix+"temperature", "must be between 0 and 2, got %g", *d.Temperature)
	}
	if set("top_p") && d.TopP != nil && (*d.TopP < 0 || *d.TopP > 1) {
		w.errorf(prefix+"top_p", "must be between 0 and 1, got %g", *d.TopP)
	}
	for _, k := range []struct {
		key string
		v   Duration
	}{{"llm_timeout", d.LLMTimeout}, {"tool_timeout", d.ToolTimeout}, {"max_session_duration", d.MaxSessionDuration}} {
		if set(k.key) && k.v <= 0 {
			w.errorf(prefix+k.key, "must be a positive duration, like \"30s\" or \"10m\"")
		}
	}
}

// checkWindow reports a context window too small for a reply and its
// buffer. at is the key to blame.
func checkWindow(w *walker, at string, cw, out, buf int, note string) {
	if cw > out+buf {
		return
	}
	w.errorf(at, "context_window (%d%s) must be greater than max_output_tokens (%d) + context_buffer (%d), or no prompt would fit",
		cw, note, out, buf)
}

// firstSet returns prefix+key of the first of keys that is set, to blame a
// check that involves several keys on a line the user wrote.
func firstSet(prefix string, set func(string) bool, keys ...string) string {
	for _, k := range keys {
		if set(k) {
			return prefix + k
		}
	}
	return prefix + keys[0]
}

func (c *Config) validateSlack(w *walker) {
	s := c.Slack
	if msg := checkHTTPURL(s.APIURL); msg != "" {
		w.errorf("slack.api_url", "%s", msg)
	}
	if cmd := s.SlashCommand; cmd != "" && (!strings.HasPrefix(cmd, "/") || strings.ContainsAny(cmd, " \t")) {
		w.errorf("slack.slash_command", "%q is not a slash command: write it like /ask (or off)", cmd)
	}
	switch s.Display {
	case DisplayAuto, DisplayStream, DisplayMessage:
	default:
		w.errorf("slack.display", "%q is not a display: use auto (the default), stream or message", s.Display)
	}
	switch s.TaskDisplay {
	case TaskDisplayTimeline, TaskDisplayPlan:
	default:
		w.errorf("slack.task_display", "%q is not a task display: use timeline (the default) or plan", s.TaskDisplay)
	}
	if s.MaxConcurrentSessions < 0 {
		w.errorf("slack.max_concurrent_sessions", "must be at least 1 (default %d), got %d", defaultMaxConcurrentSessions, s.MaxConcurrentSessions)
	}
	if s.MaxSessionsPerUser < 0 {
		w.errorf("slack.max_sessions_per_user", "must be at least 1 (default %d), got %d", DefaultMaxSessionsPerUser, s.MaxSessionsPerUser)
	}
	if s.MaxQueuedSessions < 0 {
		w.errorf("slack.max_queued_sessions", "must be at least 1 (default %d), got %d", DefaultMaxQueuedSessions, s.MaxQueuedSessions)
	}
	for i, t := range s.Allow.ExternalTeams {
		if t != "*" && !teamIDRe.MatchString(t) {
			w.errorf(fmt.Sprintf("slack.allow.external_teams[%d]", i), "%q is not a team id: write a team id like T0123ABCD, an enterprise id like E0123ABCD, or \"*\" for every organisation", t)
		}
	}
	if s.History.MaxMessages < 0 || s.History.MaxChars < 0 {
		w.errorf("slack.history", "max_messages and max_chars cannot be negative")
	}
	for _, m := range slices.Sorted(maps.Keys(s.RateLimits)) {
		l, key := s.RateLimits[m], "slack.rate_limits."+m
		if !(l.PerMinute > 0) || l.Burst < 1 {
			w.errorf(key, "per_minute must be above 0 and burst at least 1 (Slack's tier 3 is per_minute: 50, burst: 8), got %v and %d", l.PerMinute, l.Burst)
		}
		if l.Per != PerWorkspace && l.Per != PerChannel {
			w.errorf(key+".per", "%q is not a scope; use workspace or channel", l.Per)
		}
	}
	if s.Files.MaxBytes < 1 {
		w.errorf("slack.files.max_bytes", "must be at least 1 (the largest attached file read, in bytes; default %d, 20 MB), got %d", DefaultFileMaxBytes, s.Files.MaxBytes)
	}
	if s.Files.MaxCount < 1 {
		w.errorf("slack.files.max_count", "must be at least 1 (how many files of one message are read; default %d), got %d", DefaultFileMaxCount, s.Files.MaxCount)
	}
	for i, h := range s.Files.Hosts {
		if h == "" || strings.ContainsAny(h, "/:@ *") {
			w.errorf(fmt.Sprintf("slack.files.hosts[%d]", i), "%q is not a host name: write it like files.slack.com, without scheme, port or path", h)
		}
	}
	if s.MaxAnswerMessages < 1 {
		w.errorf("slack.max_answer_messages", "must be at least 1 (the most messages an answer is posted as before it goes as a file; default %d), got %d", DefaultMaxAnswerMessages, s.MaxAnswerMessages)
	}
	checkChannelGlobs(w, "slack.allow.channels", s.Allow.Channels)
	checkTrustedHosts(w, s.TrustedHosts)
	checkSuggestedPrompts(w, "slack.suggested_prompts", c.Slack.SuggestedPrompts)
	checkChannelGlobs(w, "slack.routing.deny", s.Routing.Deny)
	for i, r := range s.Routing.Rules {
		key := fmt.Sprintf("slack.routing.rules[%d]", i)
		if len(r.Channels) == 0 {
			w.errorf(key+".channels", "list the channel ids or name globs the rule covers")
		}
		checkChannelGlobs(w, key+".channels", r.Channels)
		if r.Agent == "" {
			w.errorf(key+".agent", "is required: the agent that answers in these channels")
		}
		for j, on := range r.On {
			if !slices.Contains(slackRequestKinds, on) {
				w.errorf(fmt.Sprintf("%s.on[%d]", key, j), "%q is not a kind of request; use one of: %s", on, oneOf(slackRequestKinds))
			}
		}
	}
}

// teamIDRe matches a Slack team (T…) or enterprise (E…) id.
var teamIDRe = regexp.MustCompile(`^[TE][A-Z0-9]{2,}$`)

func checkChannelGlobs(w *walker, key string, globs []string) {
	for i, g := range globs {
		if _, err := path.Match(strings.TrimPrefix(g, "#"), ""); err != nil {
			w.errorf(fmt.Sprintf("%s[%d]", key, i), "%q is not a valid pattern: %v", g, err)
		}
	}
}
