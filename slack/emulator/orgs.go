package emulator

import (
	"net/url"
	"slices"
	"strings"
)

// AddTeamUser creates a person of another workspace: team is their own
// workspace and enterprise their organisation ("" for none). A person of a
// team other than Options.TeamID in no enterprise, or another enterprise,
// is of another organisation, as in a Slack Connect channel. Their events
// carry user_team, source_team and user_profile.team; their slash commands
// and clicks carry their team (and enterprise) ids; users.info reports
// them.
func (s *Server) AddTeamUser(id, name, team, enterprise string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = &User{ID: id, Name: name, RealName: name, DisplayName: name, Team: team, Enterprise: enterprise}
	s.notify()
}

// teamOf is a user's team and enterprise ids; s.mu held.
func (s *Server) teamOf(user string) (team, enterprise string) {
	team, enterprise = s.opts.TeamID, s.opts.EnterpriseID
	if u, ok := s.users[user]; ok && u.Team != "" {
		team, enterprise = u.Team, u.Enterprise
	}
	return team, enterprise
}

// addUserTeam adds to an event or message the team of its author when
// that is another workspace's, as Slack does in shared channels; s.mu
// held.
func (s *Server) addUserTeam(ev map[string]any, user string) {
	team, _ := s.teamOf(user)
	if team == s.opts.TeamID {
		return
	}
	ev["team"], ev["user_team"], ev["source_team"] = team, team, team
	ev["user_profile"] = map[string]any{"team": team, "name": s.users[user].Name}
}

// sharedChannel reports whether the channel id (an event's "channel") is
// shared with another organisation; s.mu held.
func (s *Server) sharedChannel(id any) bool {
	ch, _ := id.(string)
	c, ok := s.channels[ch]
	return ok && c.shared
}

// ShareChannel marks a channel as shared with another organisation (a
// Slack Connect channel): its events say so.
func (s *Server) ShareChannel(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureChannel(id).shared = true
	s.notify()
}

// AddPrivateChannel creates a private channel. A private channel the bot
// is not a member of is invisible to it: conversations.info answers
// channel_not_found and conversations.list leaves it out.
func (s *Server) AddPrivateChannel(id, name string, member bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = &channel{id: id, name: name, member: member, private: true}
	s.notify()
}

// CreateChannel creates a public channel, the bot not a member, as a
// person does, and delivers channel_created.
func (s *Server) CreateChannel(id, name, creator string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureUser(creator)
	s.channels[id] = &channel{id: id, name: name}
	s.deliverEvent(map[string]any{"type": "channel_created", "channel": map[string]any{
		"id": id, "name": name, "is_channel": true, "created": s.tsBase, "creator": creator,
	}, "event_ts": s.nextTS()})
	s.notify()
}

// RenameChannel renames a channel and delivers channel_rename, or
// group_rename for a private channel (to its members only, as Slack does).
func (s *Server) RenameChannel(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ensureChannel(id)
	c.name = name
	typ := "channel_rename"
	if c.private {
		typ = "group_rename"
	}
	if !c.private || c.member {
		s.deliverEvent(map[string]any{"type": typ, "channel": map[string]any{
			"id": id, "name": name, "is_channel": !c.private, "is_group": c.private, "created": s.tsBase,
		}, "event_ts": s.nextTS()})
	}
	s.notify()
}

// RenameChannelQuietly renames a channel without delivering any event, as
// when the bot's connection was down while it was renamed.
func (s *Server) RenameChannelQuietly(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureChannel(id).name = name
	s.notify()
}

// conversationsList lists the conversations of the types asked for
// (public_channel by default), ids in order, private channels only where
// the bot is a member, paged by cursor.
func (s *Server) conversationsList(p url.Values) (result, *apiError) {
	types := []string{"public_channel"}
	if t := p.Get("types"); t != "" {
		types = strings.Split(t, ",")
	}
	for _, t := range types {
		if !slices.Contains([]string{"public_channel", "private_channel", "mpim", "im"}, t) {
			return nil, fail("invalid_types")
		}
	}
	var all []*channel
	for _, c := range s.channels {
		kind := "public_channel"
		switch {
		case c.im:
			kind = "im"
		case c.private:
			kind = "private_channel"
		}
		if !slices.Contains(types, kind) || c.private && !c.member {
			continue
		}
		all = append(all, c)
	}
	slices.SortFunc(all, func(a, b *channel) int { return strings.Compare(a.id, b.id) })
	offset, end, next, err := page(p, 100, len(all))
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, end-offset)
	for _, c := range all[offset:end] {
		j := map[string]any{"id": c.id, "is_channel": !c.im && !c.private, "is_group": c.private, "is_im": c.im,
			"is_private": c.private || c.im, "is_member": c.member, "is_ext_shared": c.shared}
		if c.im {
			j["user"] = c.imUser
		} else {
			j["name"] = c.name
		}
		out = append(out, j)
	}
	return result{"channels": out, "response_metadata": map[string]any{"next_cursor": next}}, nil
}

// JoinEnterprise puts the emulated workspace in the Enterprise Grid
// organisation id from now on: auth.test reports it to bots that connect
// after.
func (s *Server) JoinEnterprise(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.EnterpriseID = id
	s.notify()
}
