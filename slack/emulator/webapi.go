package emulator

import (
	"encoding/json"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// apiError is a Slack error answer: HTTP 200, ok false, error code, and for
// some codes more detail.
type apiError struct {
	code  string
	extra map[string]any
}

func fail(code string) *apiError { return &apiError{code: code} }

// result is a successful answer's fields besides "ok".
type result map[string]any

// method is a Web API method: the token it needs and what it does. Handlers
// run with s.mu held.
type method struct {
	appToken bool
	fn       func(s *Server, p url.Values) (result, *apiError)
}

var methods = map[string]method{
	"auth.test":                   {fn: (*Server).authTest},
	"apps.connections.open":       {appToken: true, fn: (*Server).connectionsOpen},
	"chat.postMessage":            {fn: (*Server).chatPostMessage},
	"chat.update":                 {fn: (*Server).chatUpdate},
	"chat.delete":                 {fn: (*Server).chatDelete},
	"chat.postEphemeral":          {fn: (*Server).chatPostEphemeral},
	"conversations.replies":       {fn: (*Server).conversationsReplies},
	"conversations.info":          {fn: (*Server).conversationsInfo},
	"conversations.open":          {fn: (*Server).conversationsOpen},
	"conversations.list":          {fn: (*Server).conversationsList},
	"users.info":                  {fn: (*Server).usersInfo},
	"usergroups.users.list":       {fn: (*Server).usergroupsUsersList},
	"reactions.add":               {fn: (*Server).reactionsAdd},
	"reactions.remove":            {fn: (*Server).reactionsRemove},
	"assistant.threads.setStatus": {fn: (*Server).assistantSetStatus},
	"chat.startStream":            {fn: (*Server).chatStartStream},
	"chat.appendStream":           {fn: (*Server).chatAppendStream},
	"chat.stopStream":             {fn: (*Server).chatStopStream},
	"agents.sessions.setStatus":   {fn: (*Server).agentsSetStatus},
	"agents.sessions.rename":      {fn: (*Server).agentsRename},

	"assistant.threads.setSuggestedPrompts": {fn: (*Server).assistantSetSuggestedPrompts},
	"files.getUploadURLExternal":            {fn: (*Server).filesGetUploadURLExternal},
	"files.completeUploadExternal":          {fn: (*Server).filesCompleteUploadExternal},
	"files.info":                            {fn: (*Server).filesInfo},
	"views.open":                            {fn: (*Server).viewsOpen},
}

// RateLimit makes the next n calls of method answer HTTP 429 with a
// Retry-After of retryAfter (whole seconds, rounded up) and error
// "ratelimited", as Slack does when a tier's budget is spent.
func (s *Server) RateLimit(method string, n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimits[method] = &injection{n: n, retryAfter: retryAfter}
}

// Fail makes the next n calls of method answer ok:false with slackError
// (e.g. "internal_error", "fatal_error") without doing anything.
func (s *Server) Fail(method, slackError string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = &injection{n: n, err: slackError}
}

// take consumes one use of an injection, reporting whether it applied.
func take(m map[string]*injection, method string) (*injection, bool) {
	inj, ok := m[method]
	if !ok || inj.n <= 0 {
		return nil, false
	}
	inj.n--
	return inj, true
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, name string) {
	p, err := params(r)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	token := p.Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}
	p.Del("token")
	if s.hang(r, name) {
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	status, body, retryAfter := s.limited(name, p)
	if status == 0 {
		status, body = s.run(name, token, p)
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(retryAfter.Seconds())))))
	}
	if token == s.opts.BotToken {
		w.Header().Set("X-OAuth-Scopes", strings.Join(s.botScopes(), ","))
	}
	errCode, _ := body["error"].(string)
	s.calls = append(s.calls, Call{Method: name, At: time.Now(), Params: p, Status: status, Error: errCode})
	s.notify()
	writeJSON(w, status, body)
}

// limited answers 429 to a call over its budget: an injected rate limit
// first, then the enforced RateLimits. It returns a zero status when the
// call may run; s.mu held.
func (s *Server) limited(name string, p url.Values) (int, map[string]any, time.Duration) {
	if inj, ok := take(s.rateLimits, name); ok {
		return http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"}, inj.retryAfter
	}
	if _, ok := methods[name]; ok {
		if wait := s.takeToken(name, p.Get("channel")); wait > 0 {
			return http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"}, wait
		}
	}
	return 0, nil, 0
}

// run runs one method; s.mu held.
func (s *Server) run(name, token string, p url.Values) (int, map[string]any) {
	m, ok := methods[name]
	if !ok {
		return http.StatusOK, map[string]any{"ok": false, "error": "unknown_method"}
	}
	want, other := s.opts.BotToken, s.opts.AppToken
	if m.appToken {
		want, other = other, want
	}
	switch token {
	case "":
		return http.StatusOK, map[string]any{"ok": false, "error": "not_authed"}
	case want:
	case other:
		return http.StatusOK, map[string]any{"ok": false, "error": "not_allowed_token_type"}
	default:
		return http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"}
	}
	if inj, ok := take(s.failures, name); ok {
		return http.StatusOK, map[string]any{"ok": false, "error": inj.err}
	}
	var res result
	aerr := s.missingScope(name)
	if aerr == nil {
		res, aerr = m.fn(s, p)
	}
	if aerr != nil {
		body := map[string]any{"ok": false, "error": aerr.code}
		for k, v := range aerr.extra {
			body[k] = v
		}
		return http.StatusOK, body
	}
	body := map[string]any{"ok": true}
	for k, v := range res {
		body[k] = v
	}
	return http.StatusOK, body
}

// params reads a call's arguments from the query, a form body or a JSON body.
// JSON values that are not strings keep their JSON text, so "blocks" reads
// the same from either encoding.
func params(r *http.Request) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		return r.Form, nil
	}
	p := r.URL.Query()
	body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if len(strings.TrimSpace(string(body))) > 0 && string(body) != "null" {
		if err := json.Unmarshal(body, &fields); err != nil {
			return nil, err
		}
	}
	for k, raw := range fields {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			p.Set(k, str)
		} else {
			p.Set(k, string(raw))
		}
	}
	return p, nil
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
