package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

// healthyAfter is how long a connection must stay up for the next failure
// to restart at once again, as if it were the first.
const healthyAfter = 2 * time.Minute

type phase int

const (
	phaseIdle       phase = iota // not running: never started, released or closed
	phaseConnecting              // a start attempt is under way
	phaseConnected               // tools published
	phaseDown                    // the last attempt failed or the server died; a restart is scheduled
)

// server is the one shared instance of a configured MCP server.
type server struct {
	name string
	cfg  config.MCPServer
	reg  *Registry
	log  *zap.Logger

	mu        sync.Mutex
	phase     phase
	conn      *conn
	set       toolSet
	instr     string
	lastErr   error
	changed   chan struct{} // closed and replaced on every phase change
	refs      int
	listeners map[*handle]func()
	calls     calls              // tool calls in flight, for elicitation
	cancel    context.CancelFunc // stops the supervisor
	done      chan struct{}      // closed when the supervisor has returned
}

func newServer(name string, cfg config.MCPServer, reg *Registry) *server {
	return &server{
		name:      name,
		cfg:       cfg,
		reg:       reg,
		log:       reg.log.With(zap.String("mcp_server", name), zap.String("transport", cfg.Transport())),
		changed:   make(chan struct{}),
		listeners: map[*handle]func(){},
	}
}

// start runs the supervisor unless it already runs. Caller holds s.mu.
func (s *server) startLocked() {
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	s.setPhaseLocked(phaseConnecting, nil)
	go s.supervise(ctx, s.done)
}

// stop ends the supervisor and waits until the server is down (its
// process group killed).
func (s *server) stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (s *server) setPhaseLocked(p phase, err error) {
	s.phase, s.lastErr = p, err
	close(s.changed)
	s.changed = make(chan struct{})
}

// notify calls every listener, outside the lock: they call back into
// Tools.
func (s *server) notify() {
	s.mu.Lock()
	fs := make([]func(), 0, len(s.listeners))
	for _, f := range s.listeners {
		fs = append(fs, f)
	}
	s.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// supervise connects, watches and restarts the server until ctx ends.
func (s *server) supervise(ctx context.Context, done chan struct{}) {
	defer close(done)
	attempt := 0
	for {
		s.log.Info("MCP server starting", zap.Int("attempt", attempt+1))
		began := time.Now()
		c, err := s.connect(ctx)
		if ctx.Err() != nil {
			if c != nil {
				c.close()
			}
			s.down(phaseIdle, nil)
			s.log.Info("MCP server stopped")
			return
		}
		if err != nil {
			wait := s.reg.backoff(attempt)
			attempt++
			s.down(phaseDown, err)
			s.log.Warn("MCP server failed to start", zap.Error(err), zap.Duration("restart_in", wait))
			if !s.reg.opts.sleep(ctx, wait) {
				s.down(phaseIdle, nil)
				s.log.Info("MCP server stopped")
				return
			}
			s.setConnecting()
			continue
		}
		up := time.Now()
		s.up(c)
		s.log.Info("MCP server connected", zap.Int("tools", len(s.tools().list)),
			zap.Duration("latency", up.Sub(began)))

		cause := scrubbed(s.cfg, s.watch(ctx, c))
		c.markDead(cause)
		s.down(phaseDown, cause)
		c.close()
		if ctx.Err() != nil {
			s.down(phaseIdle, nil)
			s.log.Info("MCP server stopped")
			return
		}
		if time.Since(up) >= healthyAfter {
			attempt = 0
		}
		wait := s.reg.backoff(attempt)
		attempt++
		s.log.Warn("MCP server died", zap.Error(cause), zap.Duration("uptime", time.Since(up)))
		s.log.Info("MCP server restart scheduled", zap.Duration("wait", wait))
		if !s.reg.opts.sleep(ctx, wait) {
			s.down(phaseIdle, nil)
			s.log.Info("MCP server stopped")
			return
		}
		s.setConnecting()
	}
}

// connect takes a slot of the registry's start concurrency, then connects.
func (s *server) connect(ctx context.Context) (*conn, error) {
	select {
	case s.reg.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.reg.sem }()
	c, err := connect(ctx, s.name, s.cfg, s.elicitOptions()...)
	return c, scrubbed(s.cfg, err)
}

func (s *server) setConnecting() {
	s.mu.Lock()
	s.setPhaseLocked(phaseConnecting, nil)
	s.mu.Unlock()
}

// up publishes a new connection and its tools.
func (s *server) up(c *conn) {
	set := buildTools(s.name, s.cfg, c.remote)
	s.mu.Lock()
	s.conn, s.set, s.instr = c, set, c.instructions
	s.setPhaseLocked(phaseConnected, nil)
	s.mu.Unlock()
	s.notify()
}

// down withdraws the tools; listeners hear of it when there were any.
func (s *server) down(p phase, err error) {
	s.mu.Lock()
	had := s.conn != nil
	s.conn, s.set = nil, toolSet{}
	s.setPhaseLocked(p, err)
	s.mu.Unlock()
	if had {
		s.notify()
	}
}

func (s *server) tools() toolSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set
}

// watch returns why the connection ended: ctx ended, the process exited,
// or a health probe failed. Meanwhile it follows list_changed.
func (s *server) watch(ctx context.Context, c *conn) error {
	t := time.NewTicker(s.reg.opts.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return errStopped
		case <-c.dead:
			return c.deadCause
		case <-c.listChanged:
			if err := s.refresh(ctx, c); err != nil {
				s.log.Warn("MCP server tools/list after list_changed failed", zap.Error(err))
				poke(c.suspect)
			}
		case <-c.suspect:
			if err := s.probe(ctx, c); err != nil {
				return err
			}
		case <-t.C:
			if err := s.probe(ctx, c); err != nil {
				return err
			}
		}
	}
}

// probe checks that the server answers, with ping or tools/list.
func (s *server) probe(ctx context.Context, c *conn) error {
	// A probe may take as long as the interval between probes, within
	// probeTimeout: a server that cannot answer a ping in that time is hung.
	ctx, cancel := context.WithTimeout(ctx, min(s.reg.opts.ProbeInterval, probeTimeout))
	defer cancel()
	var err error
	if s.cfg.Probe() == "list_tools" {
		_, err = listTools(ctx, c.client)
	} else {
		//lint:ignore SA1019 ping exists on the handshake protocol we pin.
		err = c.client.Ping(ctx)
	}
	if err != nil && ctx.Err() != context.Canceled {
		return fmt.Errorf("health probe (%s) failed: %w", s.cfg.Probe(), err)
	}
	return nil
}

// refresh lists the tools again after notifications/tools/list_changed.
func (s *server) refresh(ctx context.Context, c *conn) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	remote, err := listTools(ctx, c.client)
	if err != nil {
		return err
	}
	set := buildTools(s.name, s.cfg, remote)
	s.mu.Lock()
	if s.conn != c {
		s.mu.Unlock()
		return nil
	}
	s.set = set
	s.mu.Unlock()
	s.log.Info("MCP server tools changed", zap.Int("tools", len(set.list)))
	s.notify()
	return nil
}

// awaitReady waits until the server is connected, or the attempt under
// way fails, or ctx ends.
func (s *server) awaitReady(ctx context.Context) error {
	for {
		s.mu.Lock()
		p, err, ch := s.phase, s.lastErr, s.changed
		s.mu.Unlock()
		switch p {
		case phaseConnected:
			return nil
		case phaseDown:
			return llm.RedactedError(fmt.Sprintf("MCP server %s is not available; it is being restarted", s.name), err)
		case phaseIdle:
			return fmt.Errorf("MCP server %s is not running", s.name)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("MCP server %s did not get ready in time: %w", s.name, ctx.Err())
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
