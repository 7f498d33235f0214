package emulator

import (
	"net/url"
	"slices"
	"time"
)

// Agent sessions: agents.sessions.setStatus creates or changes the
// session of a thread (processing, active, suspended, closed — with a
// title and the person who started it); agents.sessions.rename changes its
// title. Slack shows a Stop control on a session; StopAgentSession is a
// person pressing it: the streams open in the thread are halted and the
// app gets agent_session_stopped.

// AgentSession is a thread's agent session as the emulator holds it.
type AgentSession struct {
	Channel, ThreadTS string
	Status, Title     string
	Initiator         string
	// Statuses are every status set, in order.
	Statuses []string
	// Titles are every title set or renamed to, in order.
	Titles []string
	At     time.Time
}

var agentStatuses = []string{"processing", "active", "suspended", "closed"}

// AgentSession is the agent session of a thread, and whether there is one.
func (s *Server) AgentSession(channel, threadTS string) (AgentSession, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agentSessions[streamKey(channel, threadTS)]
	if !ok {
		return AgentSession{}, false
	}
	c := *a
	c.Statuses, c.Titles = slices.Clone(a.Statuses), slices.Clone(a.Titles)
	return c, true
}

func (s *Server) agentsSetStatus(p url.Values) (result, *apiError) {
	ch, ok := s.channels[p.Get("channel_id")]
	if !ok {
		return nil, fail("channel_not_found")
	}
	threadTS := p.Get("thread_ts")
	if threadTS == "" || ch.find(threadTS) == nil {
		return nil, fail("invalid_thread_ts")
	}
	status := p.Get("status")
	if !slices.Contains(agentStatuses, status) {
		return nil, fail("invalid_status")
	}
	if s.agentSessions == nil {
		s.agentSessions = map[string]*AgentSession{}
	}
	key := streamKey(ch.id, threadTS)
	a := s.agentSessions[key]
	if a == nil {
		a = &AgentSession{Channel: ch.id, ThreadTS: threadTS}
		s.agentSessions[key] = a
	}
	a.Status, a.At = status, time.Now()
	a.Statuses = append(a.Statuses, status)
	if t := p.Get("title"); t != "" {
		a.Title = t
		a.Titles = append(a.Titles, t)
	}
	if u := p.Get("initiator_user_id"); u != "" {
		a.Initiator = u
	}
	s.notify()
	return result{"status": status, "agent_status": status, "title": a.Title}, nil
}

func (s *Server) agentsRename(p url.Values) (result, *apiError) {
	title := p.Get("title")
	if title == "" {
		return nil, fail("invalid_title")
	}
	a := s.agentSessions[streamKey(p.Get("channel_id"), p.Get("thread_ts"))]
	if a == nil {
		return nil, fail("session_not_found")
	}
	a.Title = title
	a.Titles = append(a.Titles, title)
	s.notify()
	return result{"title": title}, nil
}

// StopAgentSession is user pressing Slack's Stop on the agent session of
// a thread: the streams open in it are halted (later appends and stops
// answer message_not_in_streaming_state) and agent_session_stopped,
// naming them, goes to the Socket Mode connection conn (0 deals it at
// random, as Slack may hand any event to any connection).
func (s *Server) StopAgentSession(conn int, channel, threadTS, user string) (envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	var halted []string
	for _, st := range s.streams {
		if st.Channel == channel && st.ThreadTS == threadTS && st.Open {
			st.Open, st.StoppedBy = false, user
			halted = append(halted, st.TS)
		}
	}
	slices.Sort(halted)
	now := s.nextTS()
	ev := map[string]any{"type": "agent_session_stopped", "channel": channel, "thread_ts": threadTS, "user": user,
		"streaming_message_ts": halted, "event_ts": now}
	e := s.newEnvelopeOn(conn, "events_api", map[string]any{
		"token": "emulator-verification-token", "team_id": s.opts.TeamID, "api_app_id": s.opts.AppID,
		"event": ev, "type": "event_callback", "event_id": s.nextID("Ev"), "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": s.opts.TeamID, "user_id": s.opts.BotUserID, "is_bot": true}},
	})
	s.notify()
	return e.id
}
