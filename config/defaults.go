package config

import (
	"net/url"
	"reflect"
	"slices"
	"strings"
)

// BuiltinDefaults returns the values an agent gets for keys that neither its
// file nor the configuration's defaults section sets.
func BuiltinDefaults() AgentDefaults {
	return AgentDefaults{
		MaxTurns:            defaultMaxTurns,
		MaxRetries:          defaultMaxRetries,
		MaxToolCallsPerTurn: defaultMaxToolCallsPerTurn,
		MaxOutputTokens:     defaultMaxOutputTokens,
		ContextWindow:       DefaultContextWindow,
		ContextBuffer:       DefaultContextBuffer,
		LLMTimeout:          Duration(DefaultLLMTimeout),
		ToolTimeout:         Duration(DefaultToolTimeout),
		MaxSessionDuration:  Duration(DefaultMaxSessionDuration),
		RestrictionMessage:  DefaultRestrictionMessage,
		ToolSearch:          ToolSearchAuto,
		ToolSearchThreshold: DefaultToolSearchThreshold,
		ToolSearchShare:     DefaultToolSearchShare,
		ToolSearchLoaded:    DefaultToolSearchLoaded,
	}
}

// Defaults of the configuration file's own sections.
const (
	defaultAgentsDir = "./agents"
	// defaultStatePath is the SQLite file of the default state backend,
	// relative to the configuration file.
	defaultStatePath = "./var/slackbot.db"
	defaultLogLevel  = "info"
	defaultLogFormat = "json"
)

// DefaultRedisPrefix starts every key of the Redis state backend.
const DefaultRedisPrefix = "slackbot:"

// inherit copies each field of src into dst, unless the file set that key.
// Presence, not the zero value, decides: "max_turns: 0" is an error, not
// "use the default", while "restriction_max_injections: 0" (unlimited) is
// kept.
func inherit(dst *AgentDefaults, src AgentDefaults, set func(key string) bool) {
	dv := reflect.ValueOf(dst).Elem()
	sv := reflect.ValueOf(src)
	st := sv.Type()
	for i := range st.NumField() {
		key, _, _ := strings.Cut(st.Field(i).Tag.Get("yaml"), ",")
		if set(key) {
			continue
		}
		v := sv.Field(i)
		if s, ok := v.Interface().([]string); ok {
			v = reflect.ValueOf(slices.Clone(s))
		}
		dv.Field(i).Set(v)
	}
}

// applyDefaults fills what the file left out and resolves relative paths
// against dir, the file's directory.
func (c *Config) applyDefaults(w *walker, dir string) {
	if c.AgentsDir == "" {
		c.AgentsDir = defaultAgentsDir
	}
	c.AgentsDir = resolve(dir, c.AgentsDir)
	c.ToolOutput.Dir = resolve(dir, c.ToolOutput.Dir)
	if c.State.Path == "" {
		c.State.Path = defaultStatePath
	}
	c.State.Path = resolve(dir, c.State.Path)
	if c.State.LeaseTTL == 0 {
		c.State.LeaseTTL = Duration(DefaultLeaseTTL)
	}
	if c.State.SessionRetention == 0 {
		c.State.SessionRetention = Duration(defaultSessionRetention)
	}
	if c.State.RedisPrefix == "" {
		c.State.RedisPrefix = DefaultRedisPrefix
	}
	c.Slack.applyDefaults(w.present)
	if c.Quotas.Message == "" {
		c.Quotas.Message = DefaultQuotaMessage
	}
	if !w.present["mcp_init_concurrency"] {
		c.MCPInitConcurrency = DefaultMCPInitConcurrency
	}
	if !w.present["approval_timeout"] {
		c.ApprovalTimeout = Duration(DefaultApprovalTimeout)
	}
	if !w.present["max_agent_depth"] {
		c.MaxAgentDepth = DefaultMaxAgentDepth
	}
	for name, s := range c.MCPServers {
		if s.Cwd != "" {
			s.Cwd = resolve(dir, s.Cwd)
			c.MCPServers[name] = s
		}
	}
	for name, o := range c.OpenAPI {
		if o.Spec != "" && !isHTTPURL(o.Spec) {
			o.Spec = resolve(dir, o.Spec)
			c.OpenAPI[name] = o
		}
	}
	if !w.present["tool_output.max_bytes"] {
		c.ToolOutput.MaxBytes = DefaultToolResponseMaxByte
	}
	if !w.present["tool_output.max_chunks_for_full_mode"] {
		c.ToolOutput.MaxChunksForFullMode = defaultMaxChunksForFull
	}
	if !w.present["tool_output.overlap_percent"] {
		c.ToolOutput.OverlapPercent = defaultOverlapPercent
	}
	if c.Tracing.ServiceName == "" {
		c.Tracing.ServiceName = DefaultServiceName
	}
	if c.Log.Level == "" {
		c.Log.Level = defaultLogLevel
	}
	if c.Log.Format == "" {
		c.Log.Format = defaultLogFormat
	}
	for name, p := range c.LLM.Providers {
		// A provider named after its type need not repeat it.
		if p.Type == "" && slices.Contains(providerTypes, name) {
			p.Type = name
			c.LLM.Providers[name] = p
		}
	}
	inherit(&c.Defaults, BuiltinDefaults(), func(k string) bool { return w.present["defaults."+k] })
}

// Streams reports whether calls to the provider stream (the default).
func (p Provider) Streams() bool { return p.Stream == nil || *p.Stream }

// Probe returns the server's health probe: "ping" unless set.
func (s MCPServer) Probe() string {
	if s.HealthProbe == "" {
		return "ping"
	}
	return s.HealthProbe
}

// Transport returns the server's transport, inferring it when type is
// omitted: stdio with a command, http with a url.
func (s MCPServer) Transport() string {
	switch {
	case s.Type != "":
		return s.Type
	case s.Command != "":
		return "stdio"
	case s.URL != "":
		return "http"
	}
	return ""
}

// CacheTTL returns how long results of the server's tool (by its own name)
// are kept: its tools_cache entry, else the server's cache.
func (s MCPServer) CacheTTL(tool string) Duration {
	if d, ok := s.ToolsCache[tool]; ok {
		return d
	}
	return s.Cache
}

func isHTTPURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// inheritToolOutput fills the keys of an agent's tool_output that its file
// does not set from the configuration's.
func inheritToolOutput(dst *ToolOutput, src ToolOutput, set func(key string) bool) {
	if !set("tool_output.enabled") {
		dst.Enabled = src.Enabled
	}
	if !set("tool_output.max_bytes") {
		dst.MaxBytes = src.MaxBytes
	}
	if !set("tool_output.max_chunks_for_full_mode") {
		dst.MaxChunksForFullMode = src.MaxChunksForFullMode
	}
	if !set("tool_output.overlap_percent") {
		dst.OverlapPercent = src.OverlapPercent
	}
	if !set("tool_output.model") {
		dst.Model = src.Model
	}
	dst.Dir = src.Dir
}

// IsEnabled reports whether the MCP server is to be started (the default).
func (s MCPServer) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

func (s *Slack) applyDefaults(present map[string]bool) {
	if s.APIURL == "" {
		s.APIURL = defaultSlackAPIURL
	}
	if !strings.HasSuffix(s.APIURL, "/") {
		s.APIURL += "/" // slack-go joins method names to it
	}
	switch {
	case !present["slack.slash_command"] || s.SlashCommand == "":
		s.SlashCommand = DefaultSlashCommand
	case s.SlashCommand == "off":
		s.SlashCommand = ""
	}
	if s.ProgressInterval == 0 {
		s.ProgressInterval = Duration(defaultProgressInterval)
	}
	if s.Display == "" {
		s.Display = DisplayAuto
	}
	if s.TaskDisplay == "" {
		s.TaskDisplay = TaskDisplayTimeline
	}
	limits := make(map[string]RateLimit, len(DefaultSlackRateLimits)+len(s.RateLimits))
	for m, l := range DefaultSlackRateLimits {
		limits[m] = l
	}
	for m, l := range s.RateLimits {
		limits[m] = l
	}
	for m, l := range limits {
		if l.Per == "" {
			l.Per = PerWorkspace
			limits[m] = l
		}
	}
	s.RateLimits = limits
	if s.History.MaxMessages == 0 {
		s.History.MaxMessages = defaultHistoryMessages
	}
	if s.History.MaxChars == 0 {
		s.History.MaxChars = defaultHistoryChars
	}
	if s.MaxConcurrentSessions == 0 {
		s.MaxConcurrentSessions = defaultMaxConcurrentSessions
	}
	if s.MaxSessionsPerUser == 0 {
		s.MaxSessionsPerUser = DefaultMaxSessionsPerUser
	}
	if s.MaxQueuedSessions == 0 {
		s.MaxQueuedSessions = DefaultMaxQueuedSessions
	}
	if s.ShutdownGrace == 0 {
		s.ShutdownGrace = Duration(DefaultShutdownGrace)
	}
	if s.RejectionMessage == "" {
		s.RejectionMessage = DefaultRejectionMessage
	}
	if !present["slack.files.max_bytes"] {
		s.Files.MaxBytes = DefaultFileMaxBytes
	}
	if !present["slack.files.max_count"] {
		s.Files.MaxCount = DefaultFileMaxCount
	}
	for i, h := range s.Files.Hosts {
		s.Files.Hosts[i] = strings.ToLower(strings.TrimSpace(h))
	}
	if len(s.Files.Hosts) == 0 {
		s.Files.Hosts = []string{DefaultFileHost}
		if u, err := url.Parse(s.APIURL); err == nil && u.Hostname() != "" && u.Hostname() != "slack.com" {
			s.Files.Hosts = append(s.Files.Hosts, strings.ToLower(u.Hostname()))
		}
	}
	if !present["slack.max_answer_messages"] {
		s.MaxAnswerMessages = DefaultMaxAnswerMessages
	}
}
