package emulator

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (s *Server) authTest(url.Values) (result, *apiError) {
	out := result{
		"url":     "https://emulator.slack.com/",
		"team":    "Emulator",
		"user":    s.opts.BotName,
		"team_id": s.opts.TeamID,
		"user_id": s.opts.BotUserID,
		"bot_id":  s.opts.BotID,
	}
	if s.opts.EnterpriseID != "" {
		out["enterprise_id"] = s.opts.EnterpriseID
	}
	return out, nil
}

// connectionsOpen hands out a one-use ticket in the URL, as Slack's are: a
// client must call apps.connections.open again for each new socket.
func (s *Server) connectionsOpen(url.Values) (result, *apiError) {
	ticket := s.nextID("ticket")
	s.tickets[ticket] = true
	return result{"url": "ws://" + s.ln.Addr().String() + "/ws?ticket=" + ticket}, nil
}

// postTarget resolves the channel argument of a posting method: a channel id
// or a user id (the DM with that user). Slack refuses to post where the bot
// is not a member.
func (s *Server) postTarget(id string) (*channel, *apiError) {
	if u, ok := s.users[id]; ok && !u.IsBot {
		return s.imWith(id), nil
	}
	c, ok := s.channels[id]
	if !ok {
		return nil, fail("channel_not_found")
	}
	if !c.member {
		return nil, fail("not_in_channel")
	}
	return c, nil
}

func (s *Server) chatPostMessage(p url.Values) (result, *apiError) {
	c, aerr := s.postTarget(p.Get("channel"))
	if aerr != nil {
		return nil, aerr
	}
	text, blocks, aerr := content(p, "", nil)
	if aerr != nil {
		return nil, aerr
	}
	m := s.addMessage(c, s.nextTS(), p.Get("thread_ts"), s.opts.BotUserID, text, blocks)
	return result{"channel": c.id, "ts": m.TS, "message": s.messageJSON(m)}, nil
}

// addMessage records a message and delivers it as a message event, as Slack
// does for every message in a channel the bot is in, its own included;
// s.mu held.
func (s *Server) addMessage(c *channel, ts, threadTS, user, text string, blocks json.RawMessage, files ...File) *Message {
	m := &Message{Channel: c.id, TS: ts, ThreadTS: threadTS, User: user, Text: text, Blocks: blocks, Files: files}
	if user == s.opts.BotUserID {
		m.BotID = s.opts.BotID
	}
	if threadTS != "" {
		if root := c.find(threadTS); root != nil && root.ThreadTS == "" {
			root.ThreadTS = root.TS
		}
	}
	c.messages = append(c.messages, m)
	if c.member {
		ev := s.messageJSON(m)
		ev["channel"] = c.id
		ev["event_ts"] = m.TS
		ev["channel_type"] = c.kind()
		if len(files) > 0 {
			ev["subtype"] = "file_share"
		}
		s.deliverEvent(ev)
	}
	s.notify()
	return m
}

func (c *channel) kind() string {
	if c.im {
		return "im"
	}
	return "channel"
}

// content reads and checks text and blocks the way Slack does before it
// accepts a message. Absent fields keep oldText and oldBlocks (chat.update).
func content(p url.Values, oldText string, oldBlocks json.RawMessage) (string, json.RawMessage, *apiError) {
	text, blocks := oldText, oldBlocks
	if p.Has("text") {
		text = p.Get("text")
	}
	if p.Has("blocks") {
		blocks = nil
		if raw := strings.TrimSpace(p.Get("blocks")); raw != "" && raw != "[]" && raw != "null" {
			blocks = json.RawMessage(raw)
		}
	}
	if strings.TrimSpace(text) == "" && blocks == nil && !p.Has("attachments") {
		return "", nil, fail("no_text")
	}
	if blockkitLen(text) > maxTextLen {
		return "", nil, fail("msg_too_long")
	}
	if blocks != nil {
		if aerr := checkBlocks(blocks); aerr != nil {
			return "", nil, aerr
		}
	}
	return text, blocks, nil
}

// messageJSON is a message as Web API answers and events show it.
func (s *Server) messageJSON(m *Message) map[string]any {
	out := map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS, "team": s.opts.TeamID}
	s.addUserTeam(out, m.User)
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.BotID != "" {
		out["bot_id"] = m.BotID
		out["app_id"] = s.opts.AppID
	}
	if m.Blocks != nil {
		out["blocks"] = m.Blocks
	}
	if len(m.Files) > 0 {
		out["files"] = filesJSON(m.Files)
	}
	if len(m.History) > 0 {
		out["edited"] = map[string]any{"user": m.User, "ts": strconv.FormatInt(m.History[len(m.History)-1].At.Unix(), 10) + ".000000"}
	}
	return out
}

// botMessage finds a live message the bot may change; s.mu held.
func (s *Server) botMessage(p url.Values, denied string) (*channel, *Message, *apiError) {
	c, ok := s.channels[p.Get("channel")]
	if !ok {
		return nil, nil, fail("channel_not_found")
	}
	m := c.find(p.Get("ts"))
	if m == nil {
		return nil, nil, fail("message_not_found")
	}
	if m.BotID == "" {
		return nil, nil, fail(denied)
	}
	return c, m, nil
}

func (s *Server) chatUpdate(p url.Values) (result, *apiError) {
	c, m, aerr := s.botMessage(p, "cant_update_message")
	if aerr != nil {
		return nil, aerr
	}
	text, blocks, aerr := content(p, m.Text, m.Blocks)
	if aerr != nil {
		return nil, aerr
	}
	prev := s.messageJSON(m)
	m.History = append(m.History, Version{Text: m.Text, Blocks: m.Blocks, At: time.Now()})
	m.Text, m.Blocks = text, blocks
	if c.member {
		ts := s.nextTS()
		s.deliverEvent(map[string]any{
			"type": "message", "subtype": "message_changed", "hidden": true, "channel": c.id,
			"ts": ts, "event_ts": ts, "channel_type": c.kind(),
			"message": s.messageJSON(m), "previous_message": prev,
		})
	}
	s.notify()
	return result{"channel": c.id, "ts": m.TS, "text": m.Text, "message": s.messageJSON(m)}, nil
}

func (s *Server) chatDelete(p url.Values) (result, *apiError) {
	c, m, aerr := s.botMessage(p, "cant_delete_message")
	if aerr != nil {
		return nil, aerr
	}
	m.Deleted = true
	if c.member {
		ts := s.nextTS()
		s.deliverEvent(map[string]any{
			"type": "message", "subtype": "message_deleted", "hidden": true, "channel": c.id,
			"ts": ts, "deleted_ts": m.TS, "event_ts": ts, "channel_type": c.kind(),
			"previous_message": s.messageJSON(m),
		})
	}
	s.notify()
	return result{"channel": c.id, "ts": m.TS}, nil
}

func (s *Server) chatPostEphemeral(p url.Values) (result, *apiError) {
	c, aerr := s.postTarget(p.Get("channel"))
	if aerr != nil {
		return nil, aerr
	}
	if _, ok := s.users[p.Get("user")]; !ok {
		return nil, fail("user_not_found")
	}
	text, blocks, aerr := content(p, "", nil)
	if aerr != nil {
		return nil, aerr
	}
	e := Ephemeral{Channel: c.id, User: p.Get("user"), ThreadTS: p.Get("thread_ts"), TS: s.nextTS(), Text: text, Blocks: blocks}
	s.ephemerals = append(s.ephemerals, e)
	return result{"message_ts": e.TS}, nil
}

func (s *Server) conversationsReplies(p url.Values) (result, *apiError) {
	c, ok := s.channels[p.Get("channel")]
	if !ok {
		return nil, fail("channel_not_found")
	}
	if !c.member {
		return nil, fail("not_in_channel")
	}
	m := c.find(p.Get("ts"))
	if m == nil {
		return nil, fail("thread_not_found")
	}
	root := m.TS
	if m.ThreadTS != "" {
		root = m.ThreadTS
	}
	msgs := c.thread(root)
	offset, end, next, err := page(p, 1000, len(msgs))
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, end-offset)
	for _, m := range msgs[offset:end] {
		j := s.messageJSON(m)
		if m.TS == root && len(msgs) > 1 {
			j["reply_count"] = len(msgs) - 1
			var users []string
			for _, r := range msgs[1:] {
				if !slices.Contains(users, r.User) {
					users = append(users, r.User)
				}
			}
			j["reply_users"] = users
			j["reply_users_count"] = len(users)
			j["latest_reply"] = msgs[len(msgs)-1].TS
		}
		out = append(out, j)
	}
	return result{"messages": out, "has_more": next != "", "response_metadata": map[string]any{"next_cursor": next}}, nil
}

func (s *Server) conversationsInfo(p url.Values) (result, *apiError) {
	c, ok := s.channels[p.Get("channel")]
	if !ok {
		return nil, fail("channel_not_found")
	}
	if c.private && !c.member {
		return nil, fail("channel_not_found") // Slack hides a private channel from non-members
	}
	info := map[string]any{
		"id": c.id, "name": c.name, "is_channel": !c.im, "is_im": c.im, "is_private": c.private,
		"is_member": c.member, "is_archived": false, "is_ext_shared": c.shared,
	}
	if c.im {
		info["user"] = c.imUser
		delete(info, "name")
	}
	return result{"channel": info}, nil
}

// conversationsOpen opens (or finds) the bot's DM with one user; group DMs
// are not emulated.
func (s *Server) conversationsOpen(p url.Values) (result, *apiError) {
	users := strings.Split(p.Get("users"), ",")
	if len(users) != 1 || users[0] == "" {
		return nil, fail("users_list_not_supplied")
	}
	if _, ok := s.users[users[0]]; !ok {
		return nil, fail("user_not_found")
	}
	c := s.imWith(users[0])
	return result{"channel": map[string]any{"id": c.id, "is_im": true, "user": users[0]}}, nil
}

func (s *Server) usersInfo(p url.Values) (result, *apiError) {
	u, ok := s.users[p.Get("user")]
	if !ok {
		return nil, fail("user_not_found")
	}
	team, enterprise := s.teamOf(u.ID)
	out := map[string]any{
		"id": u.ID, "team_id": team, "name": u.Name, "real_name": u.RealName, "is_bot": u.IsBot, "deleted": false,
		"profile": map[string]any{
			"real_name": u.RealName, "display_name": u.DisplayName,
			"real_name_normalized": u.RealName, "display_name_normalized": u.DisplayName, "team": team,
		},
	}
	if enterprise != "" {
		out["enterprise_user"] = map[string]any{"id": u.ID, "enterprise_id": enterprise, "teams": []string{team}}
	}
	return result{"user": out}, nil
}

// reactionTarget finds the message a reaction call names; s.mu held.
func (s *Server) reactionTarget(p url.Values) (Reaction, *apiError) {
	c, ok := s.channels[p.Get("channel")]
	if !ok {
		return Reaction{}, fail("channel_not_found")
	}
	if c.find(p.Get("timestamp")) == nil {
		return Reaction{}, fail("message_not_found")
	}
	if p.Get("name") == "" {
		return Reaction{}, fail("invalid_name")
	}
	return Reaction{Channel: c.id, TS: p.Get("timestamp"), Name: strings.Trim(p.Get("name"), ":")}, nil
}

func (s *Server) reactionsAdd(p url.Values) (result, *apiError) {
	r, aerr := s.reactionTarget(p)
	if aerr != nil {
		return nil, aerr
	}
	if slices.Contains(s.reactions, r) {
		return nil, fail("already_reacted")
	}
	s.reactions = append(s.reactions, r)
	return result{}, nil
}

func (s *Server) reactionsRemove(p url.Values) (result, *apiError) {
	r, aerr := s.reactionTarget(p)
	if aerr != nil {
		return nil, aerr
	}
	i := slices.Index(s.reactions, r)
	if i < 0 {
		return nil, fail("no_reaction")
	}
	s.reactions = slices.Delete(s.reactions, i, i+1)
	return result{}, nil
}

func (s *Server) assistantSetStatus(p url.Values) (result, *apiError) {
	if _, ok := s.channels[p.Get("channel_id")]; !ok {
		return nil, fail("channel_not_found")
	}
	if p.Get("thread_ts") == "" {
		return nil, fail("invalid_arguments")
	}
	s.statuses = append(s.statuses, Status{
		Channel: p.Get("channel_id"), ThreadTS: p.Get("thread_ts"), Status: p.Get("status"),
		LoadingMessages: p.Get("loading_messages"), At: time.Now(),
	})
	return result{}, nil
}
