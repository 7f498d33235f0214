// Package config reads slackbot's YAML configuration file and its agent files
// (Markdown with YAML frontmatter), expands ${VAR} references, applies
// defaults and validates everything once, at load, with errors that name the
// file, line and key. Everything else receives these structs already valid.
package config

import (
	"regexp"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Config is the whole configuration file. After Load every default is filled
// in and every relative path is resolved against the file's directory.
type Config struct {
	LLM LLM `yaml:"llm"`
	// AgentsDir holds one Markdown file per agent (default "./agents");
	// after Load it is resolved against the configuration file's directory.
	AgentsDir  string               `yaml:"agents_dir"`
	Defaults   AgentDefaults        `yaml:"defaults"`
	MCPServers map[string]MCPServer `yaml:"mcp_servers"`
	// MCPInitConcurrency is how many MCP servers start at once (default 4).
	MCPInitConcurrency int                 `yaml:"mcp_init_concurrency"`
	RestTools          map[string]RestTool `yaml:"rest_tools"`
	// OpenAPI imports every operation of an OpenAPI 3 document as a REST
	// tool, named rest__<name>_<operationId>.
	OpenAPI map[string]OpenAPI `yaml:"openapi"`
	Queues  map[string]Queue   `yaml:"queues"`
	// ApprovalTimeout is how long a call waits for a person's approval
	// (default 10m); no decision in time is a denial.
	ApprovalTimeout Duration `yaml:"approval_timeout"`
	// MaxAgentDepth bounds how deep sub-agents may call sub-agents (default
	// 3: a top-level agent, its sub-agents and theirs). Router hand-offs
	// count as a level too.
	MaxAgentDepth int        `yaml:"max_agent_depth"`
	ToolOutput    ToolOutput `yaml:"tool_output"`
	Slack         Slack      `yaml:"slack"`
	Quotas        Quotas     `yaml:"quotas"`
	State         State      `yaml:"state"`
	Log           Log        `yaml:"log"`
	Metrics       Metrics    `yaml:"metrics"`
	Tracing       Tracing    `yaml:"tracing"`

	// Path is the file the configuration was read from.
	Path string `yaml:"-"`
	// Agents are the agent files of AgentsDir, by name, loaded and
	// validated together with the file.
	Agents map[string]*Agent `yaml:"-"`
}

// LLM lists the model endpoints agents may use.
type LLM struct {
	Providers map[string]Provider `yaml:"providers"`
}

// Provider is one model endpoint. Agents name its models as "name/model".
type Provider struct {
	// Type is "openai" (any OpenAI-compatible server) or "anthropic"; it may
	// be omitted when the provider is named after its type.
	Type    string `yaml:"type"`
	BaseURL string `yaml:"base_url"`
	APIKey  Secret `yaml:"api_key"`
	// Models lists known models with their prices. A model absent from the
	// map may still be used; its cost is reported as 0.
	Models map[string]Model `yaml:"models"`
	// Timeout bounds one model call; 0 means the agent's llm_timeout.
	Timeout Duration `yaml:"timeout"`
	// Stream selects streaming calls (default true).
	Stream *bool `yaml:"stream"`
	// Headers are sent with every request (gateways, OpenRouter attribution).
	Headers map[string]Secret `yaml:"headers"`
	// MaxTools is the most tools one request to this endpoint may carry; 0
	// means the wire's own limit (DefaultOpenAIMaxTools for openai, none
	// for anthropic).
	MaxTools int `yaml:"max_tools"`
}

// MaxToolsOf is the most tools a request to model may carry: the model's
// max_tools, else the provider's, else the wire's own limit (128 for
// openai, none for anthropic); 0 means no limit.
func (p Provider) MaxToolsOf(model string) int {
	if m, ok := p.Models[model]; ok && m.MaxTools > 0 {
		return m.MaxTools
	}
	if p.MaxTools > 0 {
		return p.MaxTools
	}
	if p.Type == "openai" {
		return DefaultOpenAIMaxTools
	}
	return 0
}

// Model is the pricing of one model, in US dollars per million tokens.
type Model struct {
	Input      float64 `yaml:"input"`
	Output     float64 `yaml:"output"`
	CacheRead  float64 `yaml:"cache_read"`
	CacheWrite float64 `yaml:"cache_write"`
	// ContextWindow, when set, is the model's window in tokens. An agent's
	// context_window is capped at load to the smallest window among its
	// models, since any of them (fallbacks included) may serve a turn.
	ContextWindow int `yaml:"context_window"`
	// MaxTools, when set, is the most tools a request to this model may
	// carry, in place of its provider's.
	MaxTools int `yaml:"max_tools"`
	// Vision says whether the model reads images. Unset, it follows the
	// model's family (see Provider.Vision).
	Vision *bool `yaml:"vision"`
}

// AgentDefaults are the values an agent file inherits for keys it omits.
// After Load, keys the defaults section omits hold the built-in defaults.
// MaxRetries counts extra attempts after a failed model call (0 = none);
// RestrictionMaxInjections 0 means unlimited (still bounded by MaxTurns).
type AgentDefaults struct {
	Models                   []string `yaml:"models"` // "provider/model", tried in order
	MaxTurns                 int      `yaml:"max_turns"`
	MaxRetries               int      `yaml:"max_retries"`
	MaxToolCallsPerTurn      int      `yaml:"max_tool_calls_per_turn"`
	Temperature              *float64 `yaml:"temperature"`
	TopP                     *float64 `yaml:"top_p"`
	MaxOutputTokens          int      `yaml:"max_output_tokens"`
	ContextWindow            int      `yaml:"context_window"`
	ContextBuffer            int      `yaml:"context_buffer"`
	LLMTimeout               Duration `yaml:"llm_timeout"`
	ToolTimeout              Duration `yaml:"tool_timeout"`
	MaxSessionDuration       Duration `yaml:"max_session_duration"` // the whole session: model calls, retry waits, tools
	RestrictionMessage       string   `yaml:"restriction_message"`
	RestrictionMaxInjections int      `yaml:"restriction_max_injections"`
	// ToolSearch is ToolSearchAuto (the default), ToolSearchAlways or
	// ToolSearchNever: whether the model is offered tools__search and its
	// pinned tools instead of every tool's schema.
	ToolSearch string `yaml:"tool_search"`
	// ToolsPinned are globs over the agent's tools whose schemas are
	// offered on every turn even when tool search is on.
	ToolsPinned []string `yaml:"tools_pinned"`
	// ToolSearchThreshold is the tool count above which tool_search: auto
	// turns on; ToolSearchShare the share of the context budget the
	// schemas may take before it does.
	ToolSearchThreshold int     `yaml:"tool_search_threshold"`
	ToolSearchShare     float64 `yaml:"tool_search_share"`
	// ToolSearchLoaded bounds the tools found by tools__search that a
	// session keeps offering; the least recently used leave first.
	ToolSearchLoaded int `yaml:"tool_search_loaded"`
}

// Tool search modes (the tool_search key).
const (
	// ToolSearchAuto offers tools__search instead of the tools' schemas
	// when the agent has more tools than tool_search_threshold, more than
	// its models accept, or schemas over tool_search_share of its window.
	ToolSearchAuto = "auto"
	// ToolSearchAlways offers tools__search whenever the agent has tools
	// beyond its pinned ones.
	ToolSearchAlways = "always"
	// ToolSearchNever offers every schema; an agent whose tools do not fit
	// its models is refused.
	ToolSearchNever = "never"
)

// ToolSearchModes lists the valid values of tool_search.
var ToolSearchModes = []string{ToolSearchAuto, ToolSearchAlways, ToolSearchNever}

// Built-in defaults.
const (
	defaultMaxTurns            = 10
	defaultMaxRetries          = 3
	defaultMaxToolCallsPerTurn = 10
	defaultMaxOutputTokens     = 4096
	DefaultContextWindow       = 131072
	DefaultContextBuffer       = 256
	DefaultLLMTimeout          = 600 * time.Second
	DefaultToolTimeout         = 300 * time.Second
	DefaultMaxSessionDuration  = 10 * time.Minute
	DefaultToolResponseMaxByte = 12288
	DefaultMCPInitConcurrency  = 4
	DefaultMaxAgentDepth       = 3
	defaultMaxChunksForFull    = 1
	defaultOverlapPercent      = 10
	// DefaultOpenAIMaxTools is the most tools OpenAI's API accepts in one
	// request; it applies to every openai provider that sets no max_tools.
	DefaultOpenAIMaxTools = 128
	// DefaultToolSearchThreshold is how many tools an agent may have before
	// tool_search: auto offers tools__search instead of their schemas.
	DefaultToolSearchThreshold = 64
	// DefaultToolSearchShare is the share of the context window the tool
	// schemas may take before tool_search: auto turns on (and before an
	// agent is reported as heavy).
	DefaultToolSearchShare = 0.25
	// DefaultToolSearchLoaded is how many tools found by tools__search stay
	// loaded in a session; the least recently used leave beyond it.
	DefaultToolSearchLoaded = 16
	// DefaultRestrictionMessage is the reminder sent under restrict_output;
	// it names both ways to end: finish and the final report tool.
	DefaultRestrictionMessage = "Do not produce a final answer directly. Before finishing, call a tool. " +
		"If no tool is needed, call the 'finish' tool or deliver your answer with 'agent__final_report'."
)

// Agent is one agent file: frontmatter keys plus the Markdown body, which is
// the system prompt. Load fills every omitted key from AgentDefaults and the
// built-in defaults, so consumers never see zero limits. A key set to null
// or to an empty ${VAR:-} counts as omitted.
type Agent struct {
	Name        string `yaml:"-"` // file name without .md
	Path        string `yaml:"-"`
	Prompt      string `yaml:"-"` // the Markdown body
	Description string `yaml:"description"`
	// AgentDefaults holds the keys an agent file shares with the defaults
	// section, declared once there: its models and limits.
	AgentDefaults `yaml:",inline"`
	// Tools are globs (path.Match syntax) over namespaced tool names, e.g.
	// "github__*". The optional built-ins agent__task_status, agent__batch
	// and finish are offered only when a glob matches them;
	// agent__final_report is always offered, and so are the sub-agents of
	// Agents and, for a router, router__handoff-to. No tools key means no
	// other tools. See AllowsTool.
	Tools          []string `yaml:"tools"`
	Output         Output   `yaml:"output"`
	RestrictOutput bool     `yaml:"restrict_output"`
	// MaxTools is the most tools one request may carry: the smallest
	// limit among the agent's models (0 = none). Computed at load.
	MaxTools int `yaml:"-"`
	// MaxToolsModel is the model reference MaxTools comes from.
	MaxToolsModel string   `yaml:"-"`
	Agents        []string `yaml:"agents"` // sub-agents, by agent name
	Router        Router   `yaml:"router"`
	// ToolOutput is the configuration's tool_output with the keys this
	// file sets replacing its values (dir cannot be set here).
	ToolOutput ToolOutput `yaml:"tool_output"`
	// AllowBroadcasts lets the agent's answers carry @channel, @here,
	// @everyone and user-group mentions that notify (default false: they
	// are shown as plain words).
	AllowBroadcasts bool `yaml:"allow_broadcasts"`
	// Mentions is who a user mention in the agent's answers may notify:
	// MentionsThread (the default), MentionsNone or MentionsAll.
	Mentions string `yaml:"mentions"`
	// SuggestedPrompts are offered, at most four, to a person who opens a
	// new conversation with the bot that this agent answers.
	SuggestedPrompts []SuggestedPrompt `yaml:"suggested_prompts"`
}

// Output formats.
const (
	FormatJSON           = "json"
	FormatMarkdown       = "markdown"
	FormatMarkdownMermai = "markdown+mermaid"
	FormatSlackBlockKit  = "slack-block-kit"
	FormatTTY            = "tty"
	FormatPipe           = "pipe"
	FormatSubAgent       = "sub-agent"
	FormatText           = "text"
)

// Formats lists every valid output format.
var Formats = []string{FormatJSON, FormatMarkdown, FormatMarkdownMermai, FormatSlackBlockKit, FormatTTY, FormatPipe, FormatSubAgent, FormatText}

// Output is an agent's expected output.
type Output struct {
	Format string `yaml:"format"` // default markdown
	// Schema is a JSON Schema for json output; SchemaRef names a file
	// (relative to the agent file; JSON, or YAML by extension) holding one.
	// Load resolves SchemaRef into Schema and leaves Schema in
	// encoding/json's shape (map[string]any, float64 numbers).
	Schema    map[string]any `yaml:"schema"`
	SchemaRef string         `yaml:"schema_ref"`
	// Compiled is Schema compiled at load (nil when there is no schema), for
	// validating reports without compiling again.
	Compiled *jsonschema.Schema `yaml:"-" json:"-"`
}

// Router makes an agent a router: it may hand the conversation off to one of
// Destinations with router__handoff-to.
type Router struct {
	Destinations []string `yaml:"destinations"`
}

// MCPServer configures one MCP server. Its tools are offered as
// <server>__<tool>.
type MCPServer struct {
	Type    string            `yaml:"type"` // stdio | http | sse (default: stdio with command, http with url)
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]Secret `yaml:"env"` // added to the server's environment (stdio)
	Cwd     string            `yaml:"cwd"` // working directory (stdio), relative to the config file
	URL     string            `yaml:"url"`
	Headers map[string]Secret `yaml:"headers"` // sent with every request (http, sse)
	Enabled *bool             `yaml:"enabled"`
	// ToolsAllow and ToolsDeny are globs over the server's own tool names;
	// a tool is offered when it matches an allow glob (or there are none)
	// and no deny glob.
	ToolsAllow []string `yaml:"tools_allowed"`
	ToolsDeny  []string `yaml:"tools_denied"`
	Queue      string   `yaml:"queue"`
	Timeout    Duration `yaml:"timeout"` // per call; 0 = the agent's tool_timeout
	// Cache keeps successful results of identical calls this long (0 =
	// never); ToolsCache overrides it per tool (by the server's own name).
	Cache      Duration            `yaml:"cache"`
	ToolsCache map[string]Duration `yaml:"tools_cache"`
	// ApprovalPolicy says which calls wait for a person; ToolsApproval
	// overrides its mode per tool (by the server's own name).
	ApprovalPolicy `yaml:",inline"`
	ToolsApproval  map[string]string `yaml:"tools_approval"`
	// HealthProbe is how a running server is checked: ping (default) or
	// list_tools.
	HealthProbe string `yaml:"health_probe"`
	Description string `yaml:"description"`

	// InheritEnv names variables of the bot's environment a stdio server
	// is given beside the minimal set (PATH, HOME, LANG, TZ, TMPDIR, LC_*,
	// NODE_*, npm_config_*) and its env.
	InheritEnv []string `yaml:"inherit_env"`
}

// RestTool configures one REST endpoint exposed as rest__<name>.
type RestTool struct {
	Description string            `yaml:"description"`
	Method      string            `yaml:"method"` // default GET
	URL         string            `yaml:"url"`    // may hold {param} placeholders, filled from the arguments
	Headers     map[string]Secret `yaml:"headers"`
	Parameters  map[string]any    `yaml:"parameters"` // JSON Schema of the arguments
	// Body is the request body template: strings of the form "{param}"
	// become the argument's value, and other {param} in strings are
	// replaced by its text. Without a body, a POST, PUT or PATCH sends the
	// arguments left after the URL's placeholders as a JSON object, and
	// other methods send them as query parameters.
	Body      any            `yaml:"body"`
	Queue     string         `yaml:"queue"`
	Timeout   Duration       `yaml:"timeout"`
	Cache     Duration       `yaml:"cache"`
	Streaming *RestStreaming `yaml:"streaming"`
	// ApprovalPolicy says which calls wait for a person.
	ApprovalPolicy `yaml:",inline"`
}

// RestStreaming reads a response made of one JSON object per line.
type RestStreaming struct {
	Mode               string   `yaml:"mode"`                // json-stream
	LinePrefix         string   `yaml:"line_prefix"`         // stripped from each line first (e.g. "data: ")
	DiscriminatorField string   `yaml:"discriminator_field"` // the field telling a line's kind
	DoneValue          string   `yaml:"done_value"`          // the kind of the last line
	AnswerField        string   `yaml:"answer_field"`        // on the done line: the whole answer
	TokenValue         string   `yaml:"token_value"`         // the kind of lines carrying a piece of the answer
	TokenField         string   `yaml:"token_field"`         // the field holding that piece
	Timeout            Duration `yaml:"timeout"`             // the whole stream
	MaxBytes           int      `yaml:"max_bytes"`           // the most read from the stream
}

// OpenAPI imports the operations of an OpenAPI 3 document as REST tools.
type OpenAPI struct {
	// Spec is the document: a file (relative to the config file) or an
	// http(s) URL; YAML or JSON.
	Spec string `yaml:"spec"`
	// BaseURL overrides the document's first server.
	BaseURL string            `yaml:"base_url"`
	Headers map[string]Secret `yaml:"headers"` // sent with every request (auth)
	// Tags, Methods and Operations filter the operations imported (all
	// when empty): by tag, by HTTP method and by operationId glob.
	Tags       []string `yaml:"tags"`
	Methods    []string `yaml:"methods"`
	Operations []string `yaml:"operations"`
	Queue      string   `yaml:"queue"`
	Timeout    Duration `yaml:"timeout"`
	Cache      Duration `yaml:"cache"`
	// ApprovalPolicy says which operations' calls wait for a person.
	ApprovalPolicy `yaml:",inline"`
}

// Queue bounds how many tool calls of one queue run at once.
type Queue struct {
	Concurrency int `yaml:"concurrency"`
}

// ToolOutput configures what happens to a tool result too large for the
// model: it is stored whole for the session, and the model gets a handle to
// ask the tool_output tool about it. An agent file may override every key
// but dir.
type ToolOutput struct {
	// Enabled stores oversized results (default true); false cuts them to
	// max_bytes, keeping their start and end.
	Enabled  *bool  `yaml:"enabled"`
	MaxBytes int    `yaml:"max_bytes"` // default 12288
	Dir      string `yaml:"dir"`       // relative to the config file; "" = os.TempDir()
	// MaxChunksForFullMode: a stored result that fits in this many chunks
	// of the extraction model's window is read whole, chunk by chunk
	// (default 1); a larger one is searched with Read and Grep, unless its
	// lines average over 1000 bytes.
	MaxChunksForFullMode int `yaml:"max_chunks_for_full_mode"`
	// OverlapPercent is how much consecutive chunks overlap (default 10).
	OverlapPercent int `yaml:"overlap_percent"`
	// Model is the provider/model for extraction calls; "" uses the
	// session's models.
	Model string `yaml:"model"`
}

// IsEnabled reports whether oversized results are stored (the default).
func (t ToolOutput) IsEnabled() bool { return t.Enabled == nil || *t.Enabled }

// Slack configures the Slack headend: `slackbot run` over Socket Mode.
type Slack struct {
	BotToken Secret `yaml:"bot_token"`
	AppToken Secret `yaml:"app_token"`
	Agent    string `yaml:"agent"` // agent that answers when no routing rule names one
	// APIURL is Slack's Web API (default https://slack.com/api/); tests and
	// proxies point it elsewhere.
	APIURL string `yaml:"api_url"`
	// Mentions, DMs and ThreadFollowups turn each way of asking on or off
	// (all on by default); a follow-up is a reply, without a mention, in a
	// thread the bot has answered.
	Mentions        *bool `yaml:"mentions"`
	DMs             *bool `yaml:"dms"`
	ThreadFollowups *bool `yaml:"thread_followups"`
	// SlashCommand is the command the bot answers (default /ask; "" after
	// load only when set to "off").
	SlashCommand string `yaml:"slash_command"`
	// ProgressInterval is the least time between two updates of a
	// session's progress message (default 2s). Under load the bot
	// refreshes less often, so that every session's refreshes together
	// stay within chat.update's budget.
	ProgressInterval Duration `yaml:"progress_interval"`
	// Display is how a session shows itself in its thread: "stream" (a
	// message streamed with chat.startStream, its work drawn as a live
	// task timeline), "message" (a progress message edited as it goes) or
	// "auto" (the default: the stream where Slack accepts it and its budget
	// has room at once, the progress message otherwise).
	Display string `yaml:"display"`
	// TaskDisplay is how Slack draws a streamed session's tasks:
	// "timeline" (the default) or "plan".
	TaskDisplay string `yaml:"task_display"`
	// RateLimits is the budget of each Web API method the bot keeps to,
	// by method name; a method set here replaces its default
	// (DefaultSlackRateLimits). Methods absent from both are not limited.
	RateLimits map[string]RateLimit `yaml:"rate_limits"`
	History    History              `yaml:"history"`
	// MaxConcurrentSessions bounds the sessions running at once (default
	// 20); the others wait, with a visible "queued" status.
	MaxConcurrentSessions int        `yaml:"max_concurrent_sessions"`
	Allow                 SlackAllow `yaml:"allow"`
	Routing               Routing    `yaml:"routing"`
	// RejectionMessage answers a request the allow list or a deny rule
	// refuses (default: a short, polite refusal).
	RejectionMessage string `yaml:"rejection_message"`
	// Admins may stop any session, not only their own.
	Admins []string `yaml:"admins"`
	// ShutdownGrace is how long in-flight sessions may finish when the
	// bot is stopped (default 30s); the rest get an "interrupted" note.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// Feedback ends each answer with Slack's feedback buttons (on by
	// default); a click is recorded on the session's record.
	Feedback *bool `yaml:"feedback"`
	// TrustedHosts are the hosts the bot's URL buttons and images may
	// point at (default none: such buttons and images are shown as links
	// with their host). A name matches that host exactly; "*.example.com"
	// matches every subdomain of example.com, not example.com itself.
	TrustedHosts []string `yaml:"trusted_hosts"`
	// MaxSessionsPerUser bounds one person's sessions, running and
	// queued together, across every replica sharing the state store
	// (default 3); a question over it is refused politely.
	MaxSessionsPerUser int `yaml:"max_sessions_per_user"`
	// MaxQueuedSessions bounds the sessions waiting on this replica for a
	// slot or their thread (default 100); a question over it is refused
	// politely.
	MaxQueuedSessions int `yaml:"max_queued_sessions"`
	// Files bounds the files people attach to a question.
	Files SlackFiles `yaml:"files"`
	// MaxAnswerMessages is the most Slack messages an answer is posted
	// as (default 3); a longer answer goes as a short message and the
	// whole as a file in the thread.
	MaxAnswerMessages int `yaml:"max_answer_messages"`
	// SuggestedPrompts are the default agent's suggested prompts when its
	// own file sets none.
	SuggestedPrompts []SuggestedPrompt `yaml:"suggested_prompts"`
}

// SlackFiles bounds the files attached to a question and says where they
// may be downloaded from.
type SlackFiles struct {
	// MaxBytes is the largest file read (default 20 MB); a larger one is
	// skipped and the person told so.
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxCount is how many files of one message are read (default 10).
	MaxCount int `yaml:"max_count"`
	// Hosts are the only hosts the bot token is sent to when a file is
	// downloaded (default files.slack.com; with api_url set elsewhere, its
	// host is added, so the emulator serves files too).
	Hosts []string `yaml:"hosts"`
}

// FeedbackOn reports whether answers end with feedback buttons (the
// default).
func (s Slack) FeedbackOn() bool { return s.Feedback == nil || *s.Feedback }

// RateLimit is a Web API method's budget as a token bucket: Burst calls at
// once, then PerMinute a minute.
type RateLimit struct {
	PerMinute float64 `yaml:"per_minute"`
	Burst     int     `yaml:"burst"`
	// Per is what one budget covers: "workspace" (default), as for Slack's
	// tiers, or "channel", as for chat.postMessage.
	Per string `yaml:"per"`
}

// Scopes of a RateLimit.
const (
	PerWorkspace = "workspace"
	PerChannel   = "channel"
)

// DefaultSlackRateLimits are Slack's published limits for the methods the
// bot calls: tier 2 is 20 a minute, tier 3 50, tier 4 100, and
// chat.postMessage one message a second in each channel. Slack allows
// short bursts without saying how long; the bursts here are small, so
// the bot never counts on more than Slack grants.
var DefaultSlackRateLimits = map[string]RateLimit{
	"chat.postMessage":            {PerMinute: 60, Burst: 4, Per: PerChannel},
	"chat.update":                 {PerMinute: 50, Burst: 8},   // tier 3
	"chat.delete":                 {PerMinute: 50, Burst: 8},   // tier 3
	"chat.postEphemeral":          {PerMinute: 100, Burst: 16}, // tier 4
	"chat.startStream":            {PerMinute: 20, Burst: 3},   // tier 2
	"chat.appendStream":           {PerMinute: 100, Burst: 16}, // tier 4
	"chat.stopStream":             {PerMinute: 20, Burst: 3},   // tier 2
	"agents.sessions.setStatus":   {PerMinute: 50, Burst: 8},   // tier 3
	"agents.sessions.rename":      {PerMinute: 50, Burst: 8},   // tier 3
	"reactions.add":               {PerMinute: 50, Burst: 8},   // tier 3
	"reactions.remove":            {PerMinute: 20, Burst: 3},   // tier 2
	"conversations.replies":       {PerMinute: 50, Burst: 8},   // tier 3
	"conversations.info":          {PerMinute: 50, Burst: 8},   // tier 3
	"conversations.list":          {PerMinute: 20, Burst: 3},   // tier 2
	"conversations.open":          {PerMinute: 50, Burst: 8},   // tier 3
	"users.info":                  {PerMinute: 100, Burst: 16}, // tier 4
	"assistant.threads.setStatus": {PerMinute: 100, Burst: 16}, // tier 4

	"assistant.threads.setSuggestedPrompts": {PerMinute: 50, Burst: 8},   // tier 3: below the tier 4 of Slack's reference
	"files.getUploadURLExternal":            {PerMinute: 100, Burst: 16}, // tier 4
	"files.completeUploadExternal":          {PerMinute: 100, Burst: 16}, // tier 4
}

// History bounds the thread history given to a session.
type History struct {
	MaxMessages int `yaml:"max_messages"` // default 100
	MaxChars    int `yaml:"max_chars"`    // default 100000
}

// SlackAllow restricts who may use the bot and where (empty: everyone,
// everywhere).
type SlackAllow struct {
	Users    []string `yaml:"users"`    // user ids
	Channels []string `yaml:"channels"` // channel ids or name globs
	// ExternalTeams lists the other organisations' teams (or enterprise
	// ids) whose people the bot answers in shared channels; "*" answers
	// every one. Empty, the default, answers only the bot's own
	// organisation.
	ExternalTeams []string `yaml:"external_teams"`
}

// Routing picks the agent per channel.
type Routing struct {
	Rules []RoutingRule `yaml:"rules"`
	// Deny lists channels (ids or name globs) where the bot never answers.
	Deny []string `yaml:"deny"`
}

// channelIDRe matches a channel id: public (C…), private (G…) or direct
// (D…). Channel names are lower case, so no name is taken for an id.
var channelIDRe = regexp.MustCompile(`^[CGD][A-Z0-9]{2,}$`)

// IsChannelID reports whether a channel pattern ("C0123", "#support-*")
// names a channel by its id rather than by its name; a "#" in front is
// ignored.
func IsChannelID(pattern string) bool {
	return channelIDRe.MatchString(strings.TrimPrefix(pattern, "#"))
}

// RoutingRule sends requests from matching channels to an agent.
type RoutingRule struct {
	Channels []string `yaml:"channels"` // channel ids or name globs ("#support-*" or "support-*")
	Agent    string   `yaml:"agent"`
	// On lists which requests the rule covers: mentions, dms, slash
	// (default all three).
	On []string `yaml:"on"`
}

// Values of Slack.Display.
const (
	DisplayAuto    = "auto"
	DisplayStream  = "stream"
	DisplayMessage = "message"
)

// Values of Slack.TaskDisplay.
const (
	TaskDisplayTimeline = "timeline"
	TaskDisplayPlan     = "plan"
)

// Defaults of the Slack headend.
const (
	defaultSlackAPIURL           = "https://slack.com/api/"
	DefaultSlashCommand          = "/ask"
	defaultProgressInterval      = 2 * time.Second
	defaultHistoryMessages       = 100
	defaultHistoryChars          = 100000
	defaultMaxConcurrentSessions = 20
	DefaultMaxSessionsPerUser    = 3
	DefaultMaxQueuedSessions     = 100
	DefaultShutdownGrace         = 30 * time.Second
	DefaultRejectionMessage      = "Sorry, I can't help with that here."
	DefaultFileMaxBytes          = 20 << 20
	DefaultFileMaxCount          = 10
	DefaultMaxAnswerMessages     = 3
	// DefaultFileHost is Slack's file host, where url_private_download
	// points.
	DefaultFileHost = "files.slack.com"
)

// slackRequestKinds are the values of a routing rule's on.
var slackRequestKinds = []string{"mentions", "dms", "slash"}

// State configures what the Slack headend remembers (event dedup, thread
// leases, the bot's threads, session records).
type State struct {
	Backend  string `yaml:"backend"` // memory | sqlite | redis; "" = the state package's default
	Path     string `yaml:"path"`    // sqlite file, relative to the config file
	RedisURL Secret `yaml:"redis_url"`
	// LeaseTTL is how long a thread lease and a session slot live without
	// renewal: a running session renews both every third of it, so a
	// replica that dies frees its threads and slots within LeaseTTL.
	LeaseTTL Duration `yaml:"lease_ttl"`
	// RedisPrefix starts every key the bot writes in Redis (default
	// "slackbot:"): bots with different prefixes share a server without
	// seeing one another's keys, replicas of one bot share a prefix.
	RedisPrefix string `yaml:"redis_prefix"`
	// SessionRetention is how long session records are kept, counted from
	// each session's start: older ones are deleted (SQLite), expire
	// (Redis) or are forgotten (memory).
	SessionRetention Duration `yaml:"session_retention"`
}

// Bounds and default of state.lease_ttl. Renewal every third of the TTL
// must fit a few store round trips and a retry, hence the floor. The
// default lets another replica take over a dead one's threads within
// about 20 s.
const (
	DefaultLeaseTTL = 20 * time.Second
	MinLeaseTTL     = 3 * time.Second
	maxLeaseTTL     = time.Hour
)

// Default and floor of state.session_retention.
const (
	defaultSessionRetention = 90 * 24 * time.Hour
	minSessionRetention     = time.Hour
)

// Quotas bound what each person and each channel may spend on the bot a
// day (UTC). A request over a budget gets Message and no model call; the
// session that crosses a budget still finishes.
type Quotas struct {
	User    Budget `yaml:"user"`
	Channel Budget `yaml:"channel"`
	// Message answers a request over budget (default: a short, polite
	// explanation).
	Message string `yaml:"message"`
}

// Budget is a daily allowance; zero fields set no limit.
type Budget struct {
	DailyTokens  int     `yaml:"daily_tokens"`
	DailyCostUSD float64 `yaml:"daily_cost_usd"`
}

// Limited reports whether the budget limits anything.
func (b Budget) Limited() bool { return b.DailyTokens > 0 || b.DailyCostUSD > 0 }

// DefaultQuotaMessage answers a request over its daily budget.
const DefaultQuotaMessage = "You've reached today's limit for using the bot here. It resets at midnight UTC."

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`  // debug | info | warn | error (default info)
	Format string `yaml:"format"` // json | console (default json)
}

// Metrics configures the HTTP endpoint of Prometheus metrics and health
// checks that `slackbot run` serves.
type Metrics struct {
	// Listen is the address of /metrics, /healthz and /readyz, such as
	// "127.0.0.1:9090" or ":9090"; empty serves nothing.
	Listen string `yaml:"listen"`
}

// Tracing configures OpenTelemetry traces, sent over OTLP/HTTP: a span per
// session, turn, model call and tool call.
type Tracing struct {
	// Endpoint is the OTLP/HTTP collector, such as http://127.0.0.1:4318
	// (the path /v1/traces is added when the URL has none). Empty leaves
	// tracing off unless OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set in the environment.
	Endpoint string `yaml:"endpoint"`
	// Headers are sent with every export (a vendor's API key).
	Headers map[string]Secret `yaml:"headers"`
	// ServiceName is the service.name of the spans (default "slackbot").
	ServiceName string `yaml:"service_name"`
	// SampleRatio is the share of sessions traced, from 0 to 1 (default 1).
	SampleRatio *float64 `yaml:"sample_ratio"`
}

// DefaultServiceName is the service.name of the bot's spans.
const DefaultServiceName = "slackbot"

// Ratio returns the share of sessions traced.
func (t Tracing) Ratio() float64 {
	if t.SampleRatio == nil {
		return 1
	}
	return *t.SampleRatio
}
