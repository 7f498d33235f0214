// Package llmtest is a scripted fake language-model server for tests. It
// listens on 127.0.0.1 and speaks both wire formats the project uses, the
// OpenAI Chat Completions API and the Anthropic Messages API, streamed (SSE)
// and not, in the shapes the real services send, so that tests drive the real
// SDK clients against it.
//
// A test scripts the answers as Replies (text, tool calls, errors, delays,
// stalls), runs the code under test, then inspects what the server received,
// decoded back into llm types, through Requests.
package llmtest

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wire formats, as recorded in Recorded.Format.
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
)

// Usage is the token count a reply reports, in neutral terms: Input counts
// the uncached input tokens only, as llm.Usage does. On the OpenAI wire
// prompt_tokens is Input+CacheRead+CacheWrite, with CacheRead as
// prompt_tokens_details.cached_tokens; on the Anthropic wire the four figures
// are sent as they are.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// DefaultUsage is the usage a Reply without Usage reports.
func DefaultUsage() Usage { return Usage{Input: 120, Output: 30} }

// ToolCall is one tool call in a scripted reply. Arguments is sent as raw
// text and may be malformed JSON on purpose. An empty ID is generated
// ("call_…" for OpenAI, "toolu_…" for Anthropic).
type ToolCall struct {
	ID, Name, Arguments string
}

// Reply is one scripted answer. The zero Reply is a successful, empty answer.
type Reply struct {
	// Text is the assistant's text.
	Text string
	// ToolCalls are the calls the model makes, in order. A non-streamed
	// Anthropic reply must carry a JSON object as input: arguments that are
	// not valid JSON are sent there as a JSON string, and empty ones as {}.
	ToolCalls []ToolCall
	// Finish overrides the finish_reason (OpenAI) or stop_reason (Anthropic)
	// sent on the wire. By default it is tool_calls/tool_use when the reply
	// has tool calls, stop/end_turn otherwise.
	Finish string
	// Usage overrides DefaultUsage. &Usage{} reports zeros.
	Usage *Usage
	// ChunkSize is the size in bytes (whole runes) of the pieces that
	// streamed text and tool-call arguments are cut into; 0 means 5.
	ChunkSize int

	// Status, when non-zero, answers with this HTTP status and the format's
	// error body (with Raw: the status of the raw body).
	Status int
	// ErrorType answers with an error: an OpenAI error code
	// ("rate_limit_exceeded", "insufficient_quota", "invalid_api_key",
	// "model_not_found", "context_length_exceeded", "server_error") or an
	// Anthropic error type ("rate_limit_error", "authentication_error",
	// "permission_error", "overloaded_error", "api_error", …). Codes of one
	// format are translated when the request came in the other. Without
	// Status the HTTP status follows from the type (429, 401, 529, …).
	ErrorType string
	// ErrorMessage overrides the error message in the body.
	ErrorMessage string
	// RetryAfter is sent as the Retry-After header (seconds or HTTP date).
	RetryAfter string
	// RetryAfterMs is sent as the retry-after-ms header.
	RetryAfterMs string
	// Header holds extra response headers.
	Header map[string]string

	// Delay waits this long before answering; the wait ends early when the
	// client goes away.
	Delay time.Duration
	// StallAfter, when positive, sends that many SSE events of a streamed
	// answer and then hangs until the client goes away.
	StallAfter int
	// EndAfter, when positive, sends that many SSE events of a streamed
	// answer and then ends the body cleanly, without a finish, as a proxy
	// that cuts a stream does.
	EndAfter int
	// StreamError, for a streamed answer, sends the content and then an
	// error event of this type (Anthropic "event: error", OpenAI
	// "data: {"error":…}") instead of finishing.
	StreamError string

	// Raw is sent verbatim with ContentType (default application/json) and
	// Status (default 200), whatever the request asked for: an unparseable
	// answer, or a gateway's HTML error page.
	Raw string
	// ContentType is the Content-Type of a Raw reply.
	ContentType string
}

// Server is a scripted fake LLM server. Its methods are safe for concurrent
// use.
type Server struct {
	t    testing.TB
	srv  *httptest.Server
	done chan struct{}

	mu         sync.Mutex
	script     []Reply
	respond    func(*Recorded) Reply
	reqs       []*Recorded
	arrived    chan struct{} // closed and replaced whenever a request is recorded
	unscripted int
	seq        int
}

// NewServer starts a server on 127.0.0.1 that answers with replies, in
// order, shared by both wire formats. It is closed when the test ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{
		t:       t,
		done:    make(chan struct{}),
		script:  append([]Reply(nil), replies...),
		arrived: make(chan struct{}),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(func() {
		// Release handlers that hang (Delay, StallAfter) before Close
		// waits for them.
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// URL returns the server's base URL, "http://127.0.0.1:PORT". The OpenAI SDK
// wants URL()+"/v1/", the Anthropic SDK URL().
func (s *Server) URL() string { return s.srv.URL }

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Respond sets a responder that answers requests once the script is empty.
func (s *Server) Respond(f func(r *Recorded) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}

// Remaining returns the number of scripted replies not yet used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Exhausted reports whether a request arrived when the script was empty and
// no responder was set. Such a request is answered with HTTP 500
// "llmtest: script exhausted".
func (s *Server) Exhausted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unscripted > 0
}

// Requests returns every request received so far, in order of arrival.
func (s *Server) Requests() []*Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Recorded(nil), s.reqs...)
}

// Last returns the most recent request, or nil.
func (s *Server) Last() *Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return nil
	}
	return s.reqs[len(s.reqs)-1]
}

// WaitContext blocks until at least n requests have arrived (they are
// recorded on arrival, before any Delay) and returns them, or returns
// ctx.Err().
func (s *Server) WaitContext(ctx context.Context, n int) ([]*Recorded, error) {
	for {
		s.mu.Lock()
		if len(s.reqs) >= n {
			reqs := append([]*Recorded(nil), s.reqs...)
			s.mu.Unlock()
			return reqs, nil
		}
		ch := s.arrived
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Wait is WaitContext with a generous deadline that fails the test. Call it
// from the test's goroutine.
func (s *Server) Wait(n int) []*Recorded {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reqs, err := s.WaitContext(ctx, n)
	if err != nil {
		s.t.Fatalf("llmtest: waiting for %d requests: %v (got %d)", n, err, len(s.Requests()))
	}
	return reqs
}

// next records rec and picks its reply. ok is false when there is none.
func (s *Server) next(rec *Recorded) (reply Reply, ok bool) {
	s.mu.Lock()
	s.seq++
	rec.seq = s.seq
	s.reqs = append(s.reqs, rec)
	close(s.arrived)
	s.arrived = make(chan struct{})
	if rec.Invalid != "" {
		s.mu.Unlock()
		return Reply{}, true
	}
	if len(s.script) > 0 {
		reply = s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		return reply, true
	}
	respond := s.respond
	if respond == nil {
		s.unscripted++
		s.mu.Unlock()
		return Reply{}, false
	}
	s.mu.Unlock()
	return respond(rec), true
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	var format string
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		format = FormatOpenAI
	case strings.HasSuffix(path, "/messages"):
		format = FormatAnthropic
	default:
		s.next(&Recorded{Path: r.URL.Path, Header: r.Header.Clone(), Invalid: "unknown path"})
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": "llmtest: no route for " + r.Method + " " + r.URL.Path, "type": "invalid_request_error", "param": nil, "code": "unknown_url"}})
		return
	}
	rec := decodeRequest(format, r)
	if r.Method != http.MethodPost {
		rec.Invalid = "method " + r.Method + " not allowed"
	}
	reply, ok := s.next(rec)
	w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
	switch {
	case rec.Invalid != "":
		writeError(w, format, rec, Reply{Status: http.StatusBadRequest, ErrorType: "invalid_request_error", ErrorMessage: rec.Invalid})
		return
	case !ok:
		writeError(w, format, rec, Reply{Status: http.StatusInternalServerError, ErrorType: "api_error", ErrorMessage: "llmtest: script exhausted"})
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	if reply.Delay > 0 && !s.pause(r.Context(), reply.Delay) {
		return
	}
	switch {
	case reply.Raw != "":
		ct := reply.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(cmp.Or(reply.Status, http.StatusOK))
		_, _ = w.Write([]byte(reply.Raw))
	case reply.Status != 0 || (reply.ErrorType != "" && reply.StreamError == ""):
		writeError(w, format, rec, reply)
	case format == FormatOpenAI && rec.Stream:
		s.stream(w, r, reply, openaiEvents(rec, reply))
	case format == FormatOpenAI:
		writeJSON(w, http.StatusOK, openaiCompletion(rec, reply))
	case rec.Stream:
		s.stream(w, r, reply, anthropicEvents(rec, reply))
	default:
		writeJSON(w, http.StatusOK, anthropicMessage(rec, reply))
	}
}

// pause waits d, or until the client or the server goes away; it reports
// whether the wait ran its course.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// stream writes SSE events one by one, flushing each, honouring StallAfter
// and EndAfter.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, reply Reply, events []string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for i, ev := range events {
		if reply.StallAfter > 0 && i == reply.StallAfter {
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return
		}
		if reply.EndAfter > 0 && i == reply.EndAfter {
			return
		}
		if _, err := w.Write([]byte(ev)); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// chunks cuts s into pieces of at most size bytes without splitting a rune
// (a rune longer than size makes a piece of its own).
func chunks(s string, size int) []string {
	if size <= 0 {
		size = 5
	}
	var out []string
	for len(s) > 0 {
		n := 0
		for i, r := range s {
			l := len(string(r))
			if i > 0 && i+l > size {
				break
			}
			n = i + l
			if n >= size {
				break
			}
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func (r Reply) usage() Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return DefaultUsage()
}

func idSuffix(seq, i int) string {
	return fmt.Sprintf("%04dx%02dLLMTEST", seq, i)
}

// toolCallID returns the wire id of a reply's i-th tool call.
func (r Reply) toolCallID(prefix string, seq, i int) string {
	if id := r.ToolCalls[i].ID; id != "" {
		return id
	}
	return prefix + idSuffix(seq, i)
}
