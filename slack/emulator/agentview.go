package emulator

import (
	"encoding/json"
	"net/url"
	"slices"
	"time"
)

// The agent view: a person opens the bot's conversation (app_home_opened
// on its Messages tab, or assistant_thread_started with a thread of its
// own in the older assistant view), the bot sets the suggested prompts
// Slack offers there with assistant.threads.setSuggestedPrompts, and
// app_context_changed tells the bot which channel the person is looking at.

// Prompt is one suggested prompt: the label Slack shows and the message a
// press sends.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// SuggestedPrompts are the prompts set in a conversation (ThreadTS empty:
// the agent view's conversation itself) or an assistant thread.
type SuggestedPrompts struct {
	Channel, ThreadTS string
	// Title heads the list ("" when the call set none).
	Title   string
	Prompts []Prompt
	At      time.Time
}

// maxSuggestedPrompts is the most prompts Slack takes in one call.
const maxSuggestedPrompts = 4

// SuggestedPrompts are the prompts last set in channel and threadTS ("" for
// the conversation itself), and whether any were.
func (s *Server) SuggestedPrompts(channel, threadTS string) (SuggestedPrompts, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prompts[streamKey(channel, threadTS)]
	if !ok {
		return SuggestedPrompts{}, false
	}
	c := *p
	c.Prompts = slices.Clone(p.Prompts)
	return c, true
}

// assistantSetSuggestedPrompts keeps the prompts of a conversation the bot
// is in: at most four, each with a title and a message. A thread_ts names
// a thread of that conversation and must exist.
func (s *Server) assistantSetSuggestedPrompts(p url.Values) (result, *apiError) {
	ch, ok := s.channels[p.Get("channel_id")]
	if !ok || !ch.member {
		return nil, fail("channel_not_found")
	}
	threadTS := p.Get("thread_ts")
	if threadTS != "" && ch.find(threadTS) == nil {
		return nil, fail("invalid_thread_ts")
	}
	var prompts []Prompt
	if err := json.Unmarshal([]byte(p.Get("prompts")), &prompts); err != nil || len(prompts) == 0 || len(prompts) > maxSuggestedPrompts {
		return nil, fail("invalid_arguments")
	}
	for _, pr := range prompts {
		if pr.Title == "" || pr.Message == "" {
			return nil, fail("invalid_arguments")
		}
	}
	if s.prompts == nil {
		s.prompts = map[string]*SuggestedPrompts{}
	}
	s.prompts[streamKey(ch.id, threadTS)] = &SuggestedPrompts{Channel: ch.id, ThreadTS: threadTS, Title: p.Get("title"),
		Prompts: prompts, At: time.Now()}
	s.notify()
	return result{}, nil
}

// OpenAgentView is user opening the bot's conversation in the agent view:
// app_home_opened on the Messages tab of their direct-message channel
// with the bot, which it returns with the envelope id.
func (s *Server) OpenAgentView(user string) (channel, envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.imWith(user)
	id := s.deliverEvent(map[string]any{"type": "app_home_opened", "user": user, "channel": c.id, "tab": "messages",
		"event_ts": s.nextTS()})
	return c.id, id
}

// StartAssistantThread is user starting a new thread with the bot in the
// assistant view while looking at contextChannel ("" for none): the
// thread's root message is made, as Slack makes it (no message event),
// and assistant_thread_started is delivered. It returns the DM channel and
// the thread's ts.
func (s *Server) StartAssistantThread(user, contextChannel string) (channel, threadTS string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.imWith(user)
	ts := s.nextTS()
	c.messages = append(c.messages, &Message{Channel: c.id, TS: ts, User: user, Text: "New chat"})
	team, enterprise := s.teamOf(user)
	ctx := map[string]any{}
	if contextChannel != "" {
		ctx = map[string]any{"channel_id": contextChannel, "team_id": team, "enterprise_id": enterprise}
	}
	s.deliverEvent(map[string]any{"type": "assistant_thread_started", "event_ts": s.nextTS(),
		"assistant_thread": map[string]any{"user_id": user, "channel_id": c.id, "thread_ts": ts, "context": ctx}})
	s.notify()
	return c.id, ts
}

// ViewChannel is user, with the bot's conversation open, moving to
// channel in Slack: app_context_changed naming it as the first entity of
// the context (an empty context when channel is ""). It returns the
// envelope id.
func (s *Server) ViewChannel(user, channel string) (envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.imWith(user)
	ctx := map[string]any{}
	if channel != "" {
		team, _ := s.teamOf(user)
		ctx["entities"] = []map[string]any{{"type": "slack#/types/channel_id", "value": channel, "team_id": team}}
	}
	return s.deliverEvent(map[string]any{"type": "app_context_changed", "user": user, "channel": c.id, "context": ctx,
		"event_ts": s.nextTS()})
}
