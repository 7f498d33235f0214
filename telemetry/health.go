package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/redact"
	"github.com/slackbot/slackbot/state"
)

// Check is one part the bot needs to answer: the Slack socket, the state
// store, the MCP servers. Ready returns nil when the part works now.
type Check struct {
	Name  string
	Ready func(ctx context.Context) error
}

// Unready is an error whose words /readyz may show: names from the
// configuration, never an address, a path or a credential. The text of any
// other error goes to the log only, and /readyz says "failing".
type Unready string

func (u Unready) Error() string { return string(u) }

// StoreCheck is ready while the state store answers Ping.
func StoreCheck(s state.Store) Check {
	return Check{Name: "state", Ready: func(ctx context.Context) error {
		if err := s.Ping(ctx); err != nil {
			if errors.Is(err, state.ErrClosed) {
				return Unready("closed")
			}
			return err
		}
		return nil
	}}
}

// MCPCheck is ready while down (an MCP registry's Down) names no server.
func MCPCheck(down func() []string) Check {
	return Check{Name: "mcp", Ready: func(context.Context) error {
		if d := down(); len(d) > 0 {
			return Unready("down: " + strings.Join(d, ", "))
		}
		return nil
	}}
}

// checkTimeout bounds one readiness check.
const checkTimeout = 3 * time.Second

// Handler serves /metrics (m), /healthz (200 while the process serves
// HTTP) and /readyz: 200 when every check passes, else 503; both answer
// with a small JSON object naming each check and its state. A check that
// changes state is logged, with its error.
func Handler(m *Metrics, log *zap.Logger, checks ...Check) http.Handler {
	if log == nil {
		log = zap.NewNop()
	}
	h := &health{log: log, checks: checks, last: map[string]bool{}}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, "ok", nil)
	})
	mux.HandleFunc("GET /readyz", h.ready)
	return mux
}

type health struct {
	log    *zap.Logger
	checks []Check

	mu   sync.Mutex
	last map[string]bool // each check's last result, to log changes only
}

func (h *health) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
	defer cancel()
	errs := make([]error, len(h.checks))
	var wg sync.WaitGroup
	for i, c := range h.checks {
		wg.Go(func() { errs[i] = c.Ready(ctx) })
	}
	wg.Wait()
	states := make(map[string]string, len(h.checks))
	ready := true
	for i, c := range h.checks {
		err := errs[i]
		h.logChange(c.Name, err)
		if err == nil {
			states[c.Name] = "ok"
			continue
		}
		ready = false
		var u Unready
		if errors.As(err, &u) {
			states[c.Name] = string(u)
		} else {
			states[c.Name] = "failing"
		}
	}
	if ready {
		writeStatus(w, http.StatusOK, "ready", states)
		return
	}
	writeStatus(w, http.StatusServiceUnavailable, "not ready", states)
}

func (h *health) logChange(name string, err error) {
	h.mu.Lock()
	was, seen := h.last[name]
	h.last[name] = err == nil
	h.mu.Unlock()
	switch {
	case err != nil && (was || !seen):
		h.log.Warn("not ready", zap.String("check", name), zap.String("error", redact.Cause(err)))
	case err == nil && seen && !was:
		h.log.Info("ready again", zap.String("check", name))
	}
}

func writeStatus(w http.ResponseWriter, code int, status string, checks map[string]string) {
	body := struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks,omitempty"`
	}{status, checks}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// Server serves a Handler on its own listener until Close.
type Server struct {
	srv    *http.Server
	addr   string
	served chan error
}

// Listen binds addr (host:port; port 0 picks one) and serves h on it. The
// address is bound before Listen returns, so a taken port is an error here
// and not later.
func Listen(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String(), served: make(chan error, 1)}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.addr }

// Close stops taking requests, lets those being answered finish within
// ctx, and waits for the serving goroutine.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
