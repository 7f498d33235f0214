package emulator

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// conn is one Socket Mode connection. Its writer goroutine owns all writes,
// because a gorilla connection allows one writer at a time.
type conn struct {
	id       int
	ws       *websocket.Conn
	out      chan outgoing
	quit     chan struct{}
	once     sync.Once
	draining bool // sent a disconnect: gets no new envelopes
}

// kill closes the socket without a close frame, like a lost network.
func (c *conn) kill() {
	c.once.Do(func() {
		close(c.quit)
		_ = c.ws.Close()
	})
}

// envelope is one delivery attempt of a Socket Mode request.
// outgoing is a message for one socket; env, when set, is the envelope it
// carries, told when it was written.
type outgoing struct {
	data []byte
	env  *envelope
}

type envelope struct {
	// sentAt is when the envelope was last written to a socket (Unix ns);
	// the writer goroutine sets it without the server's lock.
	sentAt  atomic.Int64
	id      string
	typ     string
	payload json.RawMessage
	raw     []byte // sent verbatim instead of the fields above (DeliverRaw)
	attempt int
	reason  string
	conn    int
	pin     int // the connection it must go to while open; 0 for any
	timer   *time.Timer
	acked   bool
	expired bool // unacked past the timeout and not retried further
	retried bool // superseded by a later attempt
}

// Envelope is a snapshot of a Socket Mode delivery.
type Envelope struct {
	ID          string
	Type        string // events_api, slash_commands, interactive
	Payload     json.RawMessage
	Attempt     int    // retry_attempt: 0 for the first delivery
	RetryReason string // "timeout" for a redelivery
	Conn        int    // the connection it went to; 0 while queued
	Acked       bool
	Expired     bool // never acked, and Slack has given up on it
	// SentAt is when it was written to the socket (zero while queued):
	// an ack's At minus SentAt is how long the bot took to ack it.
	SentAt time.Time
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket] && !s.closed
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid or used ticket: call apps.connections.open", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws, out: make(chan outgoing, 1024), quit: make(chan struct{})}

	ws.SetPongHandler(func(string) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.pongs++
		s.notify()
		return nil
	})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.seq++
	c.id = s.seq
	s.conns[c.id] = c
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": len(s.conns),
		"connection_info": map[string]any{"app_id": s.opts.AppID},
		"debug_info":      map[string]any{"host": "applink-emulator", "build_number": 1, "approximate_connection_time": 18060},
	})
	c.out <- outgoing{data: hello}
	queued := s.queue
	s.queue = nil
	for _, e := range queued {
		s.send(e)
	}
	s.notify()
	s.mu.Unlock()

	s.wg.Go(func() { s.writeLoop(c) })
	s.wg.Go(func() { s.readLoop(c) })
}

func (s *Server) writeLoop(c *conn) {
	defer c.kill()
	ping := time.NewTicker(s.opts.PingInterval)
	defer ping.Stop()
	// slack-go counts the time from connecting to the first ping too.
	if c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)) != nil {
		return
	}
	for {
		select {
		case <-c.quit:
			return
		case msg := <-c.out:
			_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if c.ws.WriteMessage(websocket.TextMessage, msg.data) != nil {
				return
			}
			if msg.env != nil {
				msg.env.sentAt.Store(time.Now().UnixNano())
			}
		case <-ping.C:
			if c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)) != nil {
				return
			}
		}
	}
}

func (s *Server) readLoop(c *conn) {
	defer func() {
		c.kill()
		s.mu.Lock()
		delete(s.conns, c.id)
		s.notify()
		s.mu.Unlock()
	}()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var resp struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &resp) != nil || resp.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		if e, ok := s.envelopes[resp.EnvelopeID]; ok {
			e.acked = true
			if e.timer != nil {
				e.timer.Stop()
			}
		}
		s.acks = append(s.acks, Ack{EnvelopeID: resp.EnvelopeID, Payload: resp.Payload, Conn: c.id, At: time.Now()})
		s.viewAnswered(resp.EnvelopeID, resp.Payload)
		s.notify()
		s.mu.Unlock()
	}
}

// newEnvelope creates and sends a first delivery; s.mu held.
func (s *Server) newEnvelope(typ string, payload any) *envelope {
	return s.newEnvelopeOn(0, typ, payload)
}

// newEnvelopeOn is newEnvelope sent to connection conn while it is open
// (0: any); s.mu held.
func (s *Server) newEnvelopeOn(conn int, typ string, payload any) *envelope {
	raw, _ := json.Marshal(payload)
	e := &envelope{id: s.nextID("env-"), typ: typ, payload: raw, pin: conn}
	s.envelopes[e.id] = e
	s.send(e)
	return e
}

// wire is an envelope as it goes over the socket.
func (e *envelope) wire() []byte {
	if e.raw != nil {
		return e.raw
	}
	b, _ := json.Marshal(map[string]any{
		"type":                     e.typ,
		"envelope_id":              e.id,
		"payload":                  e.payload,
		"accepts_response_payload": e.typ != "events_api",
		"retry_attempt":            e.attempt,
		"retry_reason":             e.reason,
	})
	return b
}

// send hands e to one open connection at random, preferring one other than
// its last, and starts its ack timer; with no connection it waits in the
// queue for the next. s.mu held.
func (s *Server) send(e *envelope) {
	var live []*conn
	for _, c := range s.conns {
		if !c.draining {
			live = append(live, c)
		}
	}
	for _, c := range live {
		if e.pin != 0 && c.id == e.pin {
			live = []*conn{c}
			break
		}
	}
	if len(live) > 1 && e.conn != 0 {
		for i, c := range live {
			if c.id == e.conn {
				live = append(live[:i], live[i+1:]...)
				break
			}
		}
	}
	if len(live) == 0 || s.closed {
		s.queue = append(s.queue, e)
		return
	}
	c := live[rand.IntN(len(live))]
	select {
	case c.out <- outgoing{data: e.wire(), env: e}:
	default:
		// A client this far behind is as good as gone.
		c.kill()
		s.queue = append(s.queue, e)
		return
	}
	e.conn = c.id
	id := e.id
	e.timer = time.AfterFunc(s.opts.AckTimeout, func() { s.timeout(id) })
	s.notify()
}

// timeout handles an envelope that went unacked. Slack retries events but
// not slash commands or interactions, whose users see an error instead.
func (s *Server) timeout(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.envelopes[id]
	if !ok || e.acked || e.retried || s.closed {
		return
	}
	if e.typ != "events_api" || e.raw != nil || e.attempt >= s.opts.MaxRetries {
		e.expired = true
		s.notify()
		return
	}
	s.retry(e, "timeout")
}

// retry sends e again as a new envelope with retry_attempt one higher and
// the same payload (so the same event_id); s.mu held.
func (s *Server) retry(e *envelope, reason string) *envelope {
	e.retried = true
	n := &envelope{id: s.nextID("env-"), typ: e.typ, payload: e.payload, attempt: e.attempt + 1, reason: reason, conn: e.conn}
	s.envelopes[n.id] = n
	s.send(n)
	return n
}

// ConnectionIDs returns the ids of the open Socket Mode connections, in
// the order they were opened.
func (s *Server) ConnectionIDs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int, 0, len(s.conns))
	for id := range s.conns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Connections returns how many Socket Mode connections are open.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Disconnect sends every connection {"type":"disconnect","reason":reason}
// ("refresh_requested", "warning", "link_disabled") and closes it after
// Options.DisconnectGrace. Envelopes go to newer connections meanwhile.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{
		"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "applink-emulator"},
	})
	for _, c := range s.conns {
		if c.draining {
			continue
		}
		c.draining = true
		select {
		case c.out <- outgoing{data: msg}:
		default:
		}
		time.AfterFunc(s.opts.DisconnectGrace, c.kill)
	}
}

// DropConnections closes every socket at once without a close frame, as a
// network loss would.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for id, c := range s.conns {
		conns = append(conns, c)
		// Forget them now rather than when their readers notice, so that
		// nothing delivered from here on goes to a dead socket.
		delete(s.conns, id)
	}
	s.notify()
	s.mu.Unlock()
	for _, c := range conns {
		c.kill()
	}
}

// Envelopes returns every delivery so far, in no particular order.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, 0, len(s.envelopes))
	for _, e := range s.envelopes {
		out = append(out, e.snapshot())
	}
	return out
}

func (e *envelope) snapshot() Envelope {
	env := Envelope{ID: e.id, Type: e.typ, Payload: e.payload, Attempt: e.attempt, RetryReason: e.reason,
		Conn: e.conn, Acked: e.acked, Expired: e.expired}
	if ns := e.sentAt.Load(); ns != 0 {
		env.SentAt = time.Unix(0, ns)
	}
	return env
}

// EnvelopesPending counts deliveries still awaiting an ack: sent or queued,
// neither acked, expired nor superseded by a retry.
func (s *Server) EnvelopesPending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.envelopes {
		if !e.acked && !e.expired && !e.retried {
			n++
		}
	}
	return n
}
