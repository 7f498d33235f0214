// Package playground is a Slack-like web page over the Slack emulator: a
// person types in a channel, a DM or a thread as in Slack, the emulator
// delivers it to the real bot over Socket Mode, and the bot's messages —
// progress, streamed timelines, answers, Stop buttons — are drawn from
// their Block Kit and stream chunks as Slack would, live, beside each
// session's operation tree.
//
// The page is server-rendered: messages are drawn in Go and pushed to the
// browser as HTML fragments over server-sent events; the embedded script
// only swaps them in and posts what the person types or clicks.
package playground

import (
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	bkhtml "github.com/slackbot/slackbot/blockkit/html"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/emulator"
)

// The workspace the page shows.
const (
	// General is the id of the #general channel.
	General = "C0GENERAL"
	// User is the person at the page.
	User = "U0YOU"
	// userName is how the page names that person.
	userName = "you"
)

//go:embed web
var web embed.FS

// Options configure a Playground.
type Options struct {
	// Server is the emulator the bot is connected to.
	Server *emulator.Server
	// SlashCommand is the bot's command; default /ask.
	SlashCommand string
	// Setup, when not empty, is shown above the messages: what to set for
	// the bot to reach a model.
	Setup []string
	// Log receives the page's lines; nil logs nothing.
	Log *zap.Logger
}

// Playground serves the page. Its Observe method is the bot's Observer.
type Playground struct {
	srv      *emulator.Server
	slash    string
	setup    []string
	log      *zap.Logger
	sessions *sessions
	drawer   bkhtml.Options // draws messages, naming the page's people
	dm       string         // the DM channel between the person and the bot
	token    string         // 128 random bits in the page; what drives the bot must carry them
}

// New prepares the emulator's workspace (#general, the person, the DM with
// the bot) and returns the page for it.
func New(o Options) (*Playground, error) {
	if o.Server == nil {
		return nil, errors.New("playground: an emulator is required")
	}
	if o.SlashCommand == "" {
		o.SlashCommand = "/ask"
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	o.Server.AddChannel(General, "general", true)
	o.Server.AddUser(User, userName)
	p := &Playground{srv: o.Server, slash: o.SlashCommand, setup: o.Setup, log: o.Log,
		sessions: newSessions(), dm: "D" + User, token: rand.Text()}
	p.drawer = bkhtml.Options{UserName: p.userName, ChannelName: channelName}
	return p, nil
}

// Observe records a session's event for the side panel; pass it as
// slack.Options.Observer.
func (p *Playground) Observe(t slack.Thread, e agent.Event) { p.sessions.observe(t, e) }

// Handler serves the page, its assets, the event stream and the endpoints
// the page posts to, to the page alone (see guard).
func (p *Playground) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(web, "web/static")
	mux.HandleFunc("GET /static/blockkit.css", blockKitCSS)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", p.page)
	mux.HandleFunc("GET /events", p.events)
	mux.HandleFunc("POST /send", p.send)
	mux.HandleFunc("POST /click", p.click)
	mux.HandleFunc("POST /stop", p.stopSession)
	mux.HandleFunc("POST /attach", p.attachFile)
	mux.HandleFunc("GET /file", p.file)
	mux.HandleFunc("POST /view", p.look)
	mux.HandleFunc("POST /prompt", p.prompt)
	mux.HandleFunc("POST /modal/submit", p.submitView)
	mux.HandleFunc("POST /modal/close", p.closeView)
	return p.guard(mux)
}

// Listen opens addr for the page. An address other than loopback shows the
// emulator, and so the bot, to the network: it is allowed, with a warning.
func Listen(addr string, log *zap.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("playground: %w", err)
	}
	if !loopback(ln.Addr()) {
		if log != nil {
			log.Warn("the playground listens beyond this machine: anyone who reaches it can talk to the bot and its tools",
				zap.String("addr", ln.Addr().String()))
		}
	}
	return ln, nil
}

// loopback tells whether a listener's address is reachable from this
// machine only.
func loopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// sendRequest is what the composer posts.
type sendRequest struct {
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
	Text     string `json:"text"`
	// Files are ids /attach gave.
	Files []string `json:"files"`
}

// sendResponse names the message posted and the thread to show.
type sendResponse struct {
	TS     string `json:"ts,omitempty"`
	Thread string `json:"thread,omitempty"`
}

// send delivers what the person typed: the slash command, a DM, a reply
// in a thread or a message in the channel ("@slackbot" mentions the bot).
func (p *Playground) send(w http.ResponseWriter, r *http.Request) {
	var req sendRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	text := strings.TrimSpace(req.Text)
	if text == "" && len(req.Files) == 0 || (req.Channel != General && req.Channel != p.dm) {
		http.Error(w, "a message needs text or files, and a known channel", http.StatusBadRequest)
		return
	}
	files, err := p.sharedFiles(req.Files)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var resp sendResponse
	switch {
	case req.ThreadTS == "" && (text == p.slash || strings.HasPrefix(text, p.slash+" ")):
		resp.Thread = p.slashCommand(r, req.Channel, strings.TrimSpace(strings.TrimPrefix(text, p.slash)))
	case req.Channel == p.dm && req.ThreadTS == "":
		_, resp.TS = p.srv.ShareDM(User, p.mentions(text), files...)
		resp.Thread = resp.TS
	default:
		resp.TS = p.srv.Share(req.Channel, req.ThreadTS, User, p.mentions(text), files...)
		resp.Thread = cmpOr(req.ThreadTS, resp.TS)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// slashCommand runs the command and returns the thread the bot opens for
// it: its first new top-level message in the channel, when it comes soon.
func (p *Playground) slashCommand(r *http.Request, channel, text string) string {
	before := len(p.srv.Messages(channel))
	p.srv.Slash(channel, User, p.slash, text)
	ctx, cancel := contextWithTimeout(r.Context())
	defer cancel()
	var thread string
	_ = p.srv.WaitFor(ctx, func() bool {
		msgs := p.srv.Messages(channel)
		for _, m := range msgs[min(before, len(msgs)):] {
			// A root that already has the answer below it carries its
			// own ts as thread_ts, as in Slack.
			if m.BotID != "" && (m.ThreadTS == "" || m.ThreadTS == m.TS) {
				thread = m.TS
				return true
			}
		}
		return false
	})
	return thread
}

// mentions writes "@slackbot" the way Slack sends a mention.
func (p *Playground) mentions(text string) string {
	return strings.ReplaceAll(text, "@slackbot", "<@"+p.srv.BotUserID()+">")
}

// click presses a button of a message, as the person.
func (p *Playground) click(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Channel  string `json:"channel"`
		TS       string `json:"ts"`
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if _, err := p.srv.Click(req.Channel, req.TS, User, req.ActionID, req.Value); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
