package slacktest

import "net/http"

// Hang makes the next n calls of method never answer: each waits until
// its caller gives up (its request is cancelled) or the server closes, as
// a Slack API call stuck on a dead connection does. It is still counted
// in Calls, when it ends, with the error "hung".
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
	s.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-r.Context().Done():
	case <-up:
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: name, Error: "hung"})
	s.notify()
	s.mu.Unlock()
	return true
}
