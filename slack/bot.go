// Package slack is the bot's front door: it connects to Slack over Socket
// Mode, turns mentions, direct messages, thread follow-ups and the slash
// command into agent sessions, shows their progress in the thread, and
// posts their answers as Block Kit. Every envelope is acknowledged before
// any work; a redelivered event is answered once; what must be remembered
// across envelopes lives in a state.Store.
package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/attach"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/slack/ratelimit"
	"github.com/slackbot/slackbot/slack/storeguard"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/telemetry"
)

// Options configure a Bot.
type Options struct {
	// Config is the loaded configuration: its slack section and agents.
	Config *config.Config
	// Runner runs the sessions.
	Runner *agent.Runner
	// State remembers events, thread locks and the bot's threads; nil
	// keeps them in memory.
	State state.Store
	// Log receives the bot's lines; nil logs nothing.
	Log *zap.Logger
	// Observer, when set, also receives every session's events (a
	// playground's side panel); Thread tells which thread each belongs to.
	Observer func(t Thread, e agent.Event)
	// OnFeedback, when set, is called with "positive" or "negative" after
	// a click on an answer's feedback buttons has been recorded.
	OnFeedback func(value string)
	// Metrics, when set, counts sessions, their waits, model and tool
	// calls, and every Web API request.
	Metrics *telemetry.Metrics
	// Tracer, when set, traces every session.
	Tracer *telemetry.Tracer
	// StorePatience is how long a decision that needs the state store
	// (event dedup, a thread lease, a session slot) retries a failing store
	// before the bot decides without it; 0 means storeguard.DefaultPatience
	// (20 s).
	StorePatience time.Duration
	// AnswerTimeout is how long a tool's question to the asker (an MCP
	// elicitation) waits for an answer before it is cancelled; 0 means the
	// configuration's approval_timeout.
	AnswerTimeout time.Duration
	// ChannelRefresh is how often the channel directory that rules by name
	// resolve through is read again with conversations.list, forgetting
	// what it learned before; 0 (or less) means every 30 minutes.
	ChannelRefresh time.Duration
}

// Thread names where a session answers.
type Thread struct {
	Channel string
	TS      string
}

// How long the state remembers things.
const (
	eventTTL  = 24 * time.Hour      // redeliveries come within minutes; a day is plenty
	threadTTL = 30 * 24 * time.Hour // follow-ups in a thread the bot answered
)

// Bot is the Slack headend. Build it with New and serve with Run.
type Bot struct {
	cfg    config.Slack
	conf   *config.Config
	runner *agent.Runner
	log    *zap.Logger
	watch  func(Thread, agent.Event)
	api    *slackapi.Client
	owner  string // this process's name in thread leases
	// undropped holds the sessions, ended here, whose progress records
	// the store could not forget; retried with each liveness mark.
	undropped undropped
	// leaseTTL bounds thread leases and session slots (state.lease_ttl);
	// both are renewed every third of it while the session runs.
	leaseTTL time.Duration
	// The state store, through the views each concern needs (store.go);
	// every call passes the guard.
	guard    *storeguard.Guard
	events   events
	claims   claims
	marks    marks
	records  records
	counters counters
	// refreshChannels is how often the channel directory is read again
	// (Options.ChannelRefresh).
	refreshChannels time.Duration

	metrics   *telemetry.Metrics
	tracer    *telemetry.Tracer
	connected atomic.Bool // the Socket Mode connection is up

	limiter *ratelimit.Transport // every Web API call waits here for its rate budget
	fetcher *attach.Fetcher      // downloads attached files (files.go)
	// approvals are the tool calls waiting here for a click (approval.go).
	approvals approvals
	pace      *ratelimit.Pacer // how often progress messages may be refreshed

	botUserID, botID, teamID string

	slots    chan struct{} // max_concurrent_sessions
	sessions sync.WaitGroup
	work     context.Context // the sessions' parent; cancelled after the shutdown grace
	stopWork context.CancelFunc
	// cosmetic is the parent of what only decorates a question (reactions,
	// the assistant status): cancelled as soon as the shutdown begins, so
	// those calls are dropped, never waited for. asides counts their
	// goroutines.
	cosmetic     context.Context
	dropCosmetic context.CancelFunc
	asides       sync.WaitGroup
	closing      atomic.Bool

	mu      sync.Mutex
	running map[string]*run                // by session id, for Stop
	threads map[string]chan struct{}       // one session per thread in this process
	names   *expirable.LRU[string, string] // user id → display name, nameTTL

	enterpriseID string        // the bot's Enterprise Grid organisation ("" outside one)
	teams        teams         // people's teams, for Slack Connect
	channels     directory     // channel names, for rules by name
	admissions   admissions    // questions waiting, and each person's
	usage        usageAverages // what a session costs, for quota reservations
	// streamRefusals are the reasons Slack gave lately for not streaming.
	streamRefusals streamRefusals
	// view is what the agent view told of the channels people look at.
	view agentView

	feedbackHook func(value string) // Options.OnFeedback

	questions  questions     // tools' questions waiting for their askers
	answerWait time.Duration // Options.AnswerTimeout
}

// New checks the configuration and builds a Bot; it does not connect.
func New(o Options) (*Bot, error) {
	if o.Config == nil || o.Runner == nil {
		return nil, errors.New("slack: a configuration and a runner are required")
	}
	cfg := o.Config.Slack
	if cfg.BotToken == "" || cfg.AppToken == "" {
		return nil, errors.New("slack.bot_token and slack.app_token must both be set (xoxb-… and xapp-…)")
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	st := o.State
	if st == nil {
		st = state.NewMemory()
	}
	b := &Bot{
		cfg: cfg, conf: o.Config, runner: o.Runner, log: log, watch: o.Observer,
		metrics: o.Metrics, tracer: o.Tracer,
		owner:    "slackbot-" + randomHex(8),
		leaseTTL: cmp.Or(o.Config.State.LeaseTTL.D(), config.DefaultLeaseTTL),
		slots:    make(chan struct{}, max(cfg.MaxConcurrentSessions, 1)),
		running:  map[string]*run{}, threads: map[string]chan struct{}{},
		names:        expirable.NewLRU[string, string](maxNames, nil, nameTTL),
		teams:        newTeams(),
		feedbackHook: o.OnFeedback,
		answerWait:   o.AnswerTimeout,
	}
	b.guard = storeguard.New(storeguard.Options{Patience: o.StorePatience, Log: log, Cause: redact.Cause})
	g := guarded{s: st, g: b.guard}
	b.events, b.claims, b.marks, b.records, b.counters = g, g, g, g, g
	b.refreshChannels = channelRefresh
	if o.ChannelRefresh > 0 {
		b.refreshChannels = o.ChannelRefresh
	}
	if _, err := b.defaultAgent(); err != nil {
		return nil, err
	}
	limits := cfg.RateLimits
	if limits == nil { // a configuration built in code, without Load's defaults
		limits = config.DefaultSlackRateLimits
	}
	hc := httpClient()
	// The metrics sit nearest the network, so they see every attempt and
	// every 429; the limiter in front of them decides when a call may go.
	hc.Transport = o.Metrics.SlackTransport(hc.Transport)
	b.limiter = ratelimit.New(ratelimit.Options{Next: hc.Transport, Shared: st, Guard: b.guard, Local: state.NewMemory(),
		Limits: limits, Wire: slackCallTimeout, Log: log, Cause: redact.Cause})
	hc.Transport = b.limiter
	b.pace = &ratelimit.Pacer{Base: cfg.ProgressInterval.D(), Rate: func() float64 { return b.limiter.Rate("chat.update") }, Cause: redact.Cause}
	b.metrics.WatchBudgets(b.budgets)
	b.fetcher = newFetcher(cfg)
	b.api = slackapi.New(cfg.BotToken.Reveal(), slackapi.OptionAPIURL(cfg.APIURL),
		slackapi.OptionAppLevelToken(cfg.AppToken.Reveal()), slackapi.OptionHTTPClient(hc))
	return b, nil
}

// Run identifies the bot (auth.test), connects over Socket Mode and serves
// until ctx ends. It then stops taking work, lets running sessions finish
// within slack.shutdown_grace, stops the rest (their threads get a short
// "interrupted" note) and returns.
func (b *Bot) Run(ctx context.Context) error {
	auth, err := b.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack auth.test: %w", slackError(err))
	}
	b.botUserID, b.botID, b.teamID, b.enterpriseID = auth.UserID, auth.BotID, auth.TeamID, auth.EnterpriseID
	b.limiter.SetWorkspace(auth.TeamID)
	b.log.Info("slack connected as", zap.String("bot_user", auth.UserID), zap.String("team", auth.Team))

	b.work, b.stopWork = context.WithCancel(context.WithoutCancel(ctx))
	defer b.stopWork()
	b.cosmetic, b.dropCosmetic = context.WithCancel(b.work)
	defer b.dropCosmetic()
	// The replica is alive from before its first session until its last
	// one is over, and settles what dead replicas left meanwhile.
	b.markAlive(b.work)
	reapCtx, stopReaping := context.WithCancel(b.work)
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		defer b.survive("the reaper")
		b.reap(reapCtx)
	}()
	sm := socketmode.New(b.api)
	connCtx, disconnect := context.WithCancel(ctx)
	defer disconnect()
	var loops sync.WaitGroup
	loops.Go(func() {
		defer b.survive("the fleet's progress count")
		b.pace.Count(connCtx, b.counters, b.teamID, b.log)
	})
	loops.Go(func() {
		defer b.survive("the channel directory")
		b.keepChannels(connCtx)
	})
	loops.Add(2)
	go func() {
		defer loops.Done()
		b.connect(connCtx, sm)
	}()
	go func() {
		defer loops.Done()
		b.serve(connCtx, sm)
	}()
	<-ctx.Done()
	b.closing.Store(true)
	b.dropCosmetic()
	disconnect()
	loops.Wait()
	b.connected.Store(false)
	b.shutdown()
	stopReaping()
	<-reaped
	b.asides.Wait()
	return nil
}

// connect keeps the Socket Mode connection up: slack-go reconnects on
// Slack's disconnect requests itself and returns only when a reconnection
// failed; then this waits a little and starts again.
func (b *Bot) connect(ctx context.Context, sm *socketmode.Client) {
	wait := time.Second
	for ctx.Err() == nil {
		err := sm.RunContext(ctx)
		b.connected.Store(false)
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("slack connection lost; reconnecting", zap.Error(slackError(err)), zap.Duration("in", wait))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 30*time.Second)
	}
}

// Connected reports whether the Socket Mode connection is up now: false
// before Run connects, while it reconnects, and after Run returns.
func (b *Bot) Connected() bool { return b.connected.Load() }

// ReadyCheck is the readiness check of the Slack socket.
func (b *Bot) ReadyCheck() telemetry.Check {
	return telemetry.Check{Name: "slack", Ready: func(context.Context) error {
		if !b.Connected() {
			return telemetry.Unready("socket not connected")
		}
		return nil
	}}
}

// cosmeticCtx is the context of a call that only decorates a question:
// the bot's cosmetic context once Run has begun, else ctx.
func (b *Bot) cosmeticCtx(ctx context.Context) context.Context {
	if b.cosmetic == nil {
		return ctx
	}
	return b.cosmetic
}

// shutdown waits for running sessions up to the grace, then stops them.
func (b *Bot) shutdown() {
	done := make(chan struct{})
	go func() {
		b.sessions.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(b.cfg.ShutdownGrace.D()):
	}
	b.mu.Lock()
	n := len(b.running)
	for _, r := range b.running {
		r.interrupted.Store(true)
	}
	b.mu.Unlock()
	b.log.Warn("stopping sessions still running at shutdown", zap.Int("sessions", n))
	b.stopWork()
	<-done
}

// defaultAgent is the agent that answers when no routing rule names one:
// slack.agent, else the only agent there is.
func (b *Bot) defaultAgent() (*config.Agent, error) {
	if b.cfg.Agent != "" {
		if a := b.conf.Agents[b.cfg.Agent]; a != nil {
			return a, nil
		}
		return nil, fmt.Errorf("slack.agent %q is not a configured agent", b.cfg.Agent)
	}
	if len(b.conf.Agents) == 1 {
		for _, a := range b.conf.Agents {
			return a, nil
		}
	}
	return nil, errors.New("set slack.agent: the agent that answers in Slack")
}

// slackCallTimeout bounds one Web API call on the wire, from the moment
// its rate budget lets it go (the limiter applies it, so time spent queued
// for a token does not count); a hung connection must not hold an answer
// forever.
const slackCallTimeout = 30 * time.Second

// httpClient is the Web API's client: one pool of kept-alive connections
// for every session (slack-go's default keeps two). It sets no Timeout of
// its own: that would run from before the limiter's queue, so a call that
// waited for its budget would be cut short or fail unsent.
func httpClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Transport: http.DefaultTransport}
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: t}
}

// RateStats reports how the bot spends its Slack rate budgets: calls, 429s
// and queue waits per Web API method, each budget's use, and the pace of
// progress refreshes.
func (b *Bot) RateStats() ratelimit.Stats {
	return ratelimit.Stats{Methods: b.limiter.Methods(), LiveProgress: b.pace.Live(), ProgressInterval: b.pace.Interval()}
}

// budgets is RateStats for the metrics, methods in name order.
func (b *Bot) budgets() telemetry.Budgets {
	st := b.RateStats()
	out := telemetry.Budgets{LiveProgress: st.LiveProgress, ProgressInterval: st.ProgressInterval}
	for _, name := range slices.Sorted(maps.Keys(st.Methods)) {
		m := st.Methods[name]
		out.Methods = append(out.Methods, telemetry.MethodBudget{Method: name, Calls: m.Calls, Waiting: m.Waiting,
			Wait: m.Wait, PerMinute: m.PerMinute, Utilisation: m.Utilisation})
	}
	return out
}
