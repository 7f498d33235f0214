package emulator

import (
	"net/url"
	"slices"
)

// AddUserGroup makes a user group (an S… id) with these members, or
// replaces its members.
func (s *Server) AddUserGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string][]string{}
	}
	for _, m := range members {
		s.ensureUser(m)
	}
	s.groups[id] = slices.Clone(members)
	s.notify()
}

// usergroupsUsersList answers a group's members, as Slack does
// ("no_such_subteam" for an unknown group).
func (s *Server) usergroupsUsersList(p url.Values) (result, *apiError) {
	members, ok := s.groups[p.Get("usergroup")]
	if !ok {
		return nil, fail("no_such_subteam")
	}
	return result{"users": slices.Clone(members)}, nil
}
