package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// deliverEvent wraps an inner event in an event_callback and delivers it;
// s.mu held.
func (s *Server) deliverEvent(ev map[string]any) string {
	e := s.newEnvelope("events_api", map[string]any{
		"token":      "emulator-verification-token",
		"team_id":    s.opts.TeamID,
		"api_app_id": s.opts.AppID,
		"event":      ev,
		"type":       "event_callback",
		"event_id":   s.nextID("Ev"),
		"event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{
			"team_id": s.opts.TeamID, "user_id": s.opts.BotUserID, "is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": s.sharedChannel(ev["channel"]),
	})
	return e.id
}

// Mention posts "<@BOT> text" as user in channel, which Slack delivers twice:
// as app_mention and, where the bot is a member, as a plain message. An
// unknown channel is created with the bot as a member.
func (s *Server) Mention(channel, user, text string) (ts string) {
	return s.Reply(channel, "", user, "<@"+s.opts.BotUserID+"> "+text)
}

// Reply posts text as user in the thread threadTS of channel ("" for a
// top-level message) and delivers it as a message event, plus app_mention
// when the text mentions the bot outside a DM.
func (s *Server) Reply(channel, threadTS, user, text string) (ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.ensureChannel(channel)
	return s.userMessage(c, threadTS, user, text).TS
}

// userMessage records and delivers a person's message; s.mu held.
func (s *Server) userMessage(c *channel, threadTS, user, text string, files ...File) *Message {
	ts := s.nextTS()
	if !c.im && strings.Contains(text, "<@"+s.opts.BotUserID+">") {
		ev := map[string]any{"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": c.id, "event_ts": ts, "team": s.opts.TeamID}
		s.addUserTeam(ev, user)
		if threadTS != "" {
			ev["thread_ts"] = threadTS
		}
		if len(files) > 0 {
			ev["files"] = filesJSON(files)
		}
		s.deliverEvent(ev)
	}
	return s.addMessage(c, ts, threadTS, user, text, nil, files...)
}

// DM sends text from user to the bot in their direct-message channel and
// returns the channel id and the message ts. The event is a message with
// channel_type "im".
func (s *Server) DM(user, text string) (channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.imWith(user)
	return c.id, s.userMessage(c, "", user, text).TS
}

// Slash runs command (e.g. "/ask") with text as user in channel and returns
// the envelope id. Its response_url accepts up to five posts, as Slack's does.
func (s *Server) Slash(channel, user, command, text string) (envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c := s.ensureChannel(channel)
	respURL := s.newResponseURL("slash_commands", c.id, user, "")
	team, enterprise := s.teamOf(user)
	e := s.newEnvelope("slash_commands", map[string]any{
		"token": "emulator-verification-token", "team_id": team, "enterprise_id": enterprise, "team_domain": "emulator",
		"channel_id": c.id, "channel_name": c.name, "user_id": user, "user_name": s.users[user].Name,
		"command": command, "text": text, "api_app_id": s.opts.AppID, "is_enterprise_install": "false",
		"response_url": respURL, "trigger_id": s.newTrigger(user),
	})
	return e.id
}

// ErrNoSuchAction is returned by Click when the message has no element with
// the action_id.
var ErrNoSuchAction = errors.New("emulator: no such action in the message")

// Click presses the element actionID (a button) in the message messageTS as
// user, delivering a block_actions interaction with the message, its
// container and a response_url. value overrides the element's own value when
// not empty. For feedback_buttons, value picks the button — the positive or
// the negative one's value — and the action carries that button's value and
// text, as Slack sends them.
func (s *Server) Click(channel, messageTS, user, actionID, value string) (envelopeID string, err error) {
	return s.ClickOn(0, channel, messageTS, user, actionID, value)
}

// ClickOn is Click delivered to the Socket Mode connection conn (an id
// from ConnectionIDs or Envelope.Conn) rather than one dealt at random, as
// Slack may hand any interaction to any of an app's connections; 0, or a
// connection no longer open, deals it at random.
func (s *Server) ClickOn(conn int, channel, messageTS, user, actionID, value string) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(user)
	c, ok := s.channels[channel]
	if !ok {
		return "", fmt.Errorf("emulator: click: channel %s not found", channel)
	}
	m := c.find(messageTS)
	if m == nil {
		return "", fmt.Errorf("emulator: click: message %s not found in %s", messageTS, channel)
	}
	blockID, el := findAction(m.Blocks, actionID)
	if el == nil {
		return "", ErrNoSuchAction
	}
	text, hasText := el["text"]
	if el["type"] == "feedback_buttons" {
		button := feedbackButton(el, value)
		if button == nil {
			return "", fmt.Errorf("emulator: click: feedback buttons %s have no button with value %q", actionID, value)
		}
		text, hasText = button["text"]
	} else if value == "" {
		value, _ = el["value"].(string)
	}
	now := time.Now()
	action := map[string]any{
		"type": el["type"], "action_id": actionID, "block_id": blockID, "value": value,
		"action_ts": fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000),
	}
	if hasText {
		action["text"] = text
	}
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": c.id, "is_ephemeral": false}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
	}
	team, _ := s.teamOf(user)
	e := s.newEnvelopeOn(conn, "interactive", map[string]any{
		"type":         "block_actions",
		"team":         map[string]any{"id": team, "domain": "emulator"},
		"user":         map[string]any{"id": user, "username": s.users[user].Name, "name": s.users[user].Name, "team_id": team},
		"api_app_id":   s.opts.AppID,
		"token":        "emulator-verification-token",
		"container":    container,
		"trigger_id":   s.newTrigger(user),
		"channel":      map[string]any{"id": c.id, "name": c.name},
		"message":      s.messageJSON(m),
		"response_url": s.newResponseURL("interactive", c.id, user, m.TS),
		"actions":      []any{action},
	})
	return e.id, nil
}

// feedbackButton is the button of a feedback_buttons element whose value is
// value, or nil.
func feedbackButton(el map[string]any, value string) map[string]any {
	for _, side := range []string{"positive_button", "negative_button"} {
		if b, ok := el[side].(map[string]any); ok && value != "" && b["value"] == value {
			return b
		}
	}
	return nil
}

// findAction looks through blocks for the element with actionID and returns
// it with the id of its block.
func findAction(blocks json.RawMessage, actionID string) (string, map[string]any) {
	var arr []map[string]any
	if json.Unmarshal(blocks, &arr) != nil {
		return "", nil
	}
	var walk func(v any) map[string]any
	walk = func(v any) map[string]any {
		switch v := v.(type) {
		case map[string]any:
			if v["action_id"] == actionID {
				return v
			}
			for _, x := range v {
				if el := walk(x); el != nil {
					return el
				}
			}
		case []any:
			for _, x := range v {
				if el := walk(x); el != nil {
					return el
				}
			}
		}
		return nil
	}
	for _, b := range arr {
		if el := walk(b); el != nil {
			id, _ := b["block_id"].(string)
			return id, el
		}
	}
	return "", nil
}

// Redeliver sends the payload of envelope id again, as a new envelope with
// retry_attempt one higher and retry_reason "timeout" and the same event_id,
// the duplicate a bot must recognise. It returns the new envelope's id.
func (s *Server) Redeliver(id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.envelopes[id]
	if !ok || e.raw != nil {
		return "", fmt.Errorf("emulator: redeliver: unknown envelope %s", id)
	}
	return s.retry(e, "timeout").id, nil
}

// DeliverRaw sends envelopeJSON verbatim to one connection, for envelopes the
// drivers do not make (unknown types, odd fields). An envelope_id in it is
// tracked for its ack but never retried.
func (s *Server) DeliverRaw(envelopeJSON []byte) error {
	var probe struct {
		ID   string `json:"envelope_id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(envelopeJSON, &probe); err != nil {
		return fmt.Errorf("emulator: deliver raw: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &envelope{id: probe.ID, typ: probe.Type, raw: append([]byte(nil), envelopeJSON...)}
	if e.id == "" {
		e.id = s.nextID("raw-")
	}
	s.envelopes[e.id] = e
	s.send(e)
	return nil
}
