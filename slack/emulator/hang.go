package emulator

import (
	"net/http"
	"time"
)

// Hang makes the next n calls of method never answer: each waits until
// its caller gives up (its request is cancelled) or the server closes, as
// a Slack API call stuck on a dead connection does. It is counted in
// Calls as it arrives, with the error "hung".
func (s *Server) Hang(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hangs == nil {
		s.hangs = map[string]*injection{}
		s.hangUp = make(chan struct{})
	}
	s.hangs[method] = &injection{n: n}
}

// hang holds a call Hang applies to until its caller or the server gives
// up, and reports whether it did.
func (s *Server) hang(r *http.Request, name string) bool {
	s.mu.Lock()
	_, ok := take(s.hangs, name)
	up := s.hangUp
	if ok {
		s.calls = append(s.calls, Call{Method: name, At: time.Now(), Error: "hung"})
		s.notify()
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-r.Context().Done():
	case <-up:
	}
	return true
}
