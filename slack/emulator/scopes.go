package emulator

import (
	"slices"
	"strings"
)

// Scopes. Every answer to the bot token carries the token's scopes in the
// X-OAuth-Scopes header, as Slack's do, and a method that needs a scope the
// token lacks answers missing_scope with the scope it needed and those the
// token has.

// DefaultScopes are the bot token's scopes unless SetScopes changes them:
// every scope the bot asks for in its manifest.
var DefaultScopes = []string{
	"app_mentions:read", "chat:write", "im:history", "im:read", "im:write",
	"channels:history", "groups:history", "mpim:history", "channels:read", "groups:read", "mpim:read",
	"users:read", "usergroups:read", "reactions:write", "commands", "assistant:write", "files:read", "files:write",
}

// methodScopes are the scopes the emulator checks, by method.
var methodScopes = map[string]string{
	"files.getUploadURLExternal":   "files:write",
	"files.completeUploadExternal": "files:write",
}

// SetScopes replaces the bot token's scopes.
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = slices.Clone(scopes)
	if s.scopes == nil {
		s.scopes = []string{}
	}
}

// botScopes are the bot token's scopes; s.mu held.
func (s *Server) botScopes() []string {
	if s.scopes == nil {
		return DefaultScopes
	}
	return s.scopes
}

// missingScope answers missing_scope when method needs a scope the bot
// token lacks; s.mu held.
func (s *Server) missingScope(method string) *apiError {
	need, ok := methodScopes[method]
	if !ok || slices.Contains(s.botScopes(), need) {
		return nil
	}
	return &apiError{code: "missing_scope", extra: map[string]any{"needed": need, "provided": strings.Join(s.botScopes(), ",")}}
}
