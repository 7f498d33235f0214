package slack

import (
	"strings"
	"sync"
	"time"
)

// Slack refuses to stream for reasons that hold for a while — the
// workspace has not enabled it, the app lacks a scope, the asker is of
// another organisation — and a session that meets one shows a progress
// message instead. The reason is remembered for streamRefusalMemory, so
// the sessions after it do not ask again (user_not_found for that asker
// only, the others for the whole workspace), and each reason is logged
// once.

// streamRefusalMemory is how long a refusal to stream is remembered.
const streamRefusalMemory = 10 * time.Minute

// refusedStream reports whether chat.startStream's error code is a
// refusal that will hold for a while, rather than a failure of the moment.
func refusedStream(code string) bool {
	switch code {
	case "not_allowed", "not_enabled", "feature_not_enabled", "missing_scope", "not_allowed_token_type",
		"missing_recipient_team_id", "missing_recipient_user_id", "user_not_found",
		"method_not_supported_for_channel_type", "unknown_method":
		return true
	}
	return false
}

// streamRefusals are the refusals to stream met lately. Its zero value is
// ready to use.
type streamRefusals struct {
	mu     sync.Mutex
	until  map[string]time.Time // by refusalKey
	logged map[string]bool      // reasons already logged
}

// refusalKey scopes a refusal: a person's, or the workspace's.
func refusalKey(code string, req request) string {
	if code == "user_not_found" {
		return code + ":" + req.user
	}
	return code
}

// remember notes that Slack refused to stream for req with code.
func (r *streamRefusals) remember(code string, req request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.until == nil {
		r.until = map[string]time.Time{}
	}
	r.until[refusalKey(code, req)] = time.Now().Add(streamRefusalMemory)
}

// recent is a refusal remembered for req, "" when there is none.
func (r *streamRefusals) recent(req request) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for key, until := range r.until {
		if now.After(until) {
			delete(r.until, key)
		}
	}
	for key := range r.until {
		code, user, personal := strings.Cut(key, ":")
		if !personal || user == req.user {
			return code
		}
	}
	return ""
}

// firstTime reports whether reason is met for the first time, for
// logging it once.
func (r *streamRefusals) firstTime(reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.logged == nil {
		r.logged = map[string]bool{}
	}
	if r.logged[reason] {
		return false
	}
	r.logged[reason] = true
	return true
}
