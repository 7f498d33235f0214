// Package emulator is a strict, in-process Slack emulator: the Web API under
// /api/ and Socket Mode over /ws, both on a loopback listener. Tests and the
// playground drive it (Mention, DM, Slash, Click, ...) and inspect what the bot
// did (Messages, Acks, Calls, ...). It answers like Slack does, errors
// included, so a bot that passes against it has met Slack's rules rather than
// a mock's.
//
// A test starts one, points the real slack-go clients at it and drives it:
//
//	srv, _ := emulator.New(emulator.Options{AckTimeout: 100 * time.Millisecond})
//	defer srv.Close()
//	api := slack.New(srv.BotToken(), slack.OptionAppLevelToken(srv.AppToken()),
//		slack.OptionAPIURL(srv.APIURL()))
//	go socketmode.New(api).RunContext(ctx) // the bot under test
//	ts := srv.Mention("C1", "U1", "summarise this thread")
//	srv.WaitFor(ctx, func() bool { return len(srv.Thread("C1", ts)) > 1 })
//
// Events are redelivered as new envelopes carrying the same event_id, as
// Slack does, so a bot must deduplicate on event_id, not envelope_id.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configures a Server. The zero value is usable: every field has a
// default.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0" (a free port).
	Addr string
	// BotToken is the token Web API calls must carry; default "xoxb-test".
	BotToken string
	// AppToken is the token apps.connections.open needs; default "xapp-test".
	AppToken string
	// TeamID, AppID, BotUserID and BotID name the workspace and the bot.
	// Defaults: T0EMULATOR, A0EMULATOR, U0BOT, B0BOT.
	TeamID, AppID, BotUserID, BotID string
	// EnterpriseID, when set, puts the workspace in an Enterprise Grid
	// organisation: auth.test reports it, and the people of the
	// organisation's other workspaces (AddTeamUser) belong to it.
	EnterpriseID string
	// BotName is the bot user's name; default "slackbot".
	BotName string
	// AckTimeout is how long an envelope may go unacked before Slack gives
	// up on it (events are redelivered); default 3 s, as on Slack.
	AckTimeout time.Duration
	// MaxRetries bounds redeliveries of one event; default 3, as on Slack.
	MaxRetries int
	// PingInterval is how often each socket gets a WebSocket ping; slack-go
	// drops a connection that sees none for 30 s. Default 10 s.
	PingInterval time.Duration
	// DisconnectGrace is how long a socket stays open after a disconnect
	// message, so the client can open its replacement first; default 1 s.
	DisconnectGrace time.Duration
	// RateLimits, by method, are enforced as Slack enforces its tiers:
	// a call over its budget is answered 429 with Retry-After. Nil
	// enforces none; SlackLimits() are Slack's own.
	RateLimits map[string]Limit
}

func (o *Options) defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&o.Addr, "127.0.0.1:0")
	def(&o.BotToken, "xoxb-test")
	def(&o.AppToken, "xapp-test")
	def(&o.TeamID, "T0EMULATOR")
	def(&o.AppID, "A0EMULATOR")
	def(&o.BotUserID, "U0BOT")
	def(&o.BotID, "B0BOT")
	def(&o.BotName, "slackbot")
	if o.AckTimeout <= 0 {
		o.AckTimeout = 3 * time.Second
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 3
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 10 * time.Second
	}
	if o.DisconnectGrace <= 0 {
		o.DisconnectGrace = time.Second
	}
}

// Server is a running emulator. All methods are safe for concurrent use.
type Server struct {
	opts Options
	ln   net.Listener
	http *http.Server
	url  string
	wg   sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	closed  bool
	seq     int // source of ids and timestamps
	tsBase  int64

	channels map[string]*channel
	users    map[string]*User
	groups   map[string][]string // user groups' members (AddUserGroup); nil until used
	tickets  map[string]bool

	calls      []Call
	rateLimits map[string]*injection
	buckets    map[string]bucket // the enforced RateLimits
	failures   map[string]*injection
	hangs      map[string]*injection // Hang; nil until used
	hangUp     chan struct{}         // closed by Close: hung calls end
	ephemerals []Ephemeral
	reactions  []Reaction
	statuses   []Status
	// streams and agentSessions are the streamed messages (by channel and
	// ts) and the threads' agent sessions; nil until used.
	streams       map[string]*Stream
	agentSessions map[string]*AgentSession
	responses     map[string]*responseURL
	posts         []ResponseURLPost
	// uploads are the files the bot uploaded (uploads.go), scopes the bot
	// token's when SetScopes changed them (scopes.go); nil until used.
	uploads map[string]*upload
	scopes  []string

	// prompts are the suggested prompts set, by channel and thread; nil
	// until used.
	prompts map[string]*SuggestedPrompts
	// files and downloads are the attached files (files.go); nil until used.
	files     map[string]*storedFile
	downloads []Download

	conns     map[int]*conn
	envelopes map[string]*envelope
	queue     []*envelope // waiting for a connection
	acks      []Ack
	modal     *viewsState // triggers and open views; nil until used
	pongs     int         // answers to our pings, over all connections
}

// injection is a queued fault for the next n calls of a method.
type injection struct {
	n          int
	err        string
	retryAfter time.Duration
}

// New starts an emulator listening on opts.Addr.
func New(opts Options) (*Server, error) {
	opts.defaults()
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("emulator: listen: %w", err)
	}
	s := &Server{
		opts:       opts,
		ln:         ln,
		url:        "http://" + ln.Addr().String(),
		changed:    make(chan struct{}),
		tsBase:     time.Now().Unix(),
		channels:   map[string]*channel{},
		users:      map[string]*User{},
		tickets:    map[string]bool{},
		rateLimits: map[string]*injection{},
		buckets:    map[string]bucket{},
		failures:   map[string]*injection{},
		responses:  map[string]*responseURL{},
		conns:      map[int]*conn{},
		envelopes:  map[string]*envelope{},
	}
	s.users[opts.BotUserID] = &User{ID: opts.BotUserID, Name: opts.BotName, RealName: opts.BotName, DisplayName: opts.BotName, IsBot: true}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Go(func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic("emulator: serve: " + err.Error())
		}
	})
	return s, nil
}

// Close stops the listener, closes every socket and stops redelivery timers.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.hangUp != nil {
		close(s.hangUp)
	}
	for _, e := range s.envelopes {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.kill()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	s.wg.Wait()
	return err
}

// URL is the server's base URL, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return s.url }

// APIURL is the Web API base with the trailing slash slack-go needs:
// slack.OptionAPIURL(srv.APIURL()).
func (s *Server) APIURL() string { return s.url + "/api/" }

// BotToken is the xoxb- token Web API calls must carry.
func (s *Server) BotToken() string { return s.opts.BotToken }

// AppToken is the xapp- token apps.connections.open needs.
func (s *Server) AppToken() string { return s.opts.AppToken }

// BotUserID is the bot's user id, as auth.test reports it.
func (s *Server) BotUserID() string { return s.opts.BotUserID }

// BotID is the bot's bot id, set on the bot's own messages.
func (s *Server) BotID() string { return s.opts.BotID }

// ServeHTTP routes the Web API, Socket Mode and response URLs.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/api/"):
		s.serveAPI(w, r, strings.TrimPrefix(p, "/api/"))
	case p == "/ws":
		s.serveWS(w, r)
	case strings.HasPrefix(p, "/response/"):
		s.serveResponseURL(w, r, strings.TrimPrefix(p, "/response/"))
	case strings.HasPrefix(p, "/upload/v1/"):
		s.serveUpload(w, r, strings.TrimPrefix(p, "/upload/v1/"))
	case strings.HasPrefix(p, "/files-pri/"):
		s.serveFile(w, r, strings.TrimPrefix(p, "/files-pri/"))
	case p == "/signin":
		serveSignIn(w, r)
	default:
		http.NotFound(w, r)
	}
}

// Changed returns a channel that is closed at the next change of the
// emulator's state (a call, a message, an ack, a connection). Take it before
// checking a condition, so a change in between is not missed.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// WaitFor blocks until cond returns true, re-checking it after every change,
// or until ctx ends. cond may call the Server's accessors.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		ch := s.Changed()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("emulator: condition not met: %w", ctx.Err())
		}
	}
}

// notify wakes waiters; s.mu must be held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextID returns a fresh id with the given prefix; s.mu must be held.
func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%06d", prefix, s.seq)
}

// nextTS returns a fresh message timestamp, later than every earlier one and
// of the same width, so timestamps order as strings too; s.mu must be held.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", s.tsBase+int64(s.seq/1e6), s.seq%1e6)
}
