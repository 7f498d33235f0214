package emulator

import (
	"encoding/json"
	"net/url"
	"slices"
	"time"
)

// User is a workspace member as users.info describes it.
type User struct {
	ID, Name, RealName, DisplayName string
	IsBot                           bool
	// Team and Enterprise are the user's own workspace and organisation;
	// empty means the emulated workspace's (AddTeamUser sets others).
	Team, Enterprise string
}

// channel is a conversation and its messages, oldest first.
type channel struct {
	id, name string
	member   bool
	im       bool
	private  bool   // a private channel: listed and described only to its members
	shared   bool   // shared with another organisation (Slack Connect)
	imUser   string // the other party of a DM
	messages []*Message
}

// Message is one message as the emulator holds it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // empty for a top-level message; equals TS for a thread root with replies
	User     string // the author; the bot user for the bot's posts
	BotID    string // set on the bot's posts, as on Slack
	Text     string
	Blocks   json.RawMessage // as posted; nil without blocks
	Files    []File          // shared with the message (Share, or the bot's uploads)
	Deleted  bool
	// History holds the earlier versions replaced by chat.update, oldest first.
	History []Version
}

// Version is an earlier text and blocks of a message.
type Version struct {
	Text   string
	Blocks json.RawMessage
	At     time.Time
}

// Call is one Web API call and its outcome.
type Call struct {
	Method string
	At     time.Time
	Params url.Values // form or JSON fields; the token is left out
	Status int        // HTTP status
	Error  string     // Slack error code; empty when ok
}

// Ephemeral is a chat.postEphemeral message.
type Ephemeral struct {
	Channel, User, ThreadTS, TS, Text string
	Blocks                            json.RawMessage
}

// Reaction is an emoji reaction the bot has on a message.
type Reaction struct {
	Channel, TS, Name string
}

// Status is one assistant.threads.setStatus call.
type Status struct {
	Channel, ThreadTS, Status string
	LoadingMessages           string
	At                        time.Time
}

// ResponseURLPost is one POST to a response_url.
type ResponseURLPost struct {
	URL     string
	Kind    string // "slash_commands" or "interactive"
	Channel string
	User    string
	Body    json.RawMessage
	// Error is set when the emulator refused the post, e.g. "used_url" past
	// the fifth post.
	Error string
	At    time.Time
}

// Ack is an acknowledgement received over Socket Mode.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil without a payload
	Conn       int             // which connection sent it
	At         time.Time
}

// AddChannel creates or changes a channel. member says whether the bot is in
// it: posting where it is not answers not_in_channel, and Slack delivers
// message events only from channels the bot is in.
func (s *Server) AddChannel(id, name string, member bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.channels[id]; ok {
		c.name, c.member = name, member
	} else {
		s.channels[id] = &channel{id: id, name: name, member: member}
	}
	s.notify()
}

// AddUser creates or renames a user; real and display names default to name.
func (s *Server) AddUser(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = &User{ID: id, Name: name, RealName: name, DisplayName: name}
	s.notify()
}

// ensureUser registers a user a driver names without AddUser; s.mu held.
func (s *Server) ensureUser(id string) {
	if _, ok := s.users[id]; !ok {
		s.users[id] = &User{ID: id, Name: id, RealName: id, DisplayName: id}
	}
}

// ensureChannel returns a channel a driver names, creating it with the bot as
// a member when it is unknown; s.mu held.
func (s *Server) ensureChannel(id string) *channel {
	c, ok := s.channels[id]
	if !ok {
		c = &channel{id: id, name: id, member: true}
		s.channels[id] = c
	}
	return c
}

// imWith returns the DM channel between the bot and user; s.mu held.
func (s *Server) imWith(user string) *channel {
	for _, c := range s.channels {
		if c.im && c.imUser == user {
			return c
		}
	}
	c := &channel{id: "D" + user, name: user, member: true, im: true, imUser: user}
	s.channels[c.id] = c
	return c
}

func (c *channel) find(ts string) *Message {
	for _, m := range c.messages {
		if m.TS == ts && !m.Deleted {
			return m
		}
	}
	return nil
}

func (m *Message) clone() Message {
	out := *m
	out.History = slices.Clone(m.History)
	out.Files = slices.Clone(m.Files)
	return out
}

// Messages returns every message of a channel, oldest first, thread replies
// included, deleted ones marked Deleted.
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[channelID]
	if !ok {
		return nil
	}
	out := make([]Message, 0, len(c.messages))
	for _, m := range c.messages {
		out = append(out, m.clone())
	}
	return out
}

// Thread returns the live messages of the thread rooted at ts, the root
// first.
func (s *Server) Thread(channelID, ts string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[channelID]
	if !ok {
		return nil
	}
	var out []Message
	for _, m := range c.thread(ts) {
		out = append(out, m.clone())
	}
	return out
}

// thread lists the live root and replies of a thread, oldest first.
func (c *channel) thread(ts string) []*Message {
	var out []*Message
	for _, m := range c.messages {
		if !m.Deleted && (m.TS == ts || m.ThreadTS == ts) {
			out = append(out, m)
		}
	}
	return out
}

// BotMessages returns the bot's live messages in a channel, oldest first.
func (s *Server) BotMessages(channelID string) []Message {
	var out []Message
	for _, m := range s.Messages(channelID) {
		if m.BotID != "" && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// Calls returns the Web API calls of method, or of every method for "".
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Ephemerals returns every chat.postEphemeral message.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemerals)
}

// Reactions returns the reactions the bot currently has on messages.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

// Statuses returns every assistant.threads.setStatus call in order.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses)
}

// ResponseURLPosts returns every POST to a response_url, refused ones too.
func (s *Server) ResponseURLPosts() []ResponseURLPost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.posts)
}

// Acks returns every acknowledgement received, in order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acks)
}
