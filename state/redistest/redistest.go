// Package redistest starts a real redis-server for tests: on a free
// loopback port, persisting nothing, and stopped by its pid when the test
// ends. A machine without redis-server fails the test with the command
// that installs it, so a missing peer is never mistaken for a pass.
package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one running redis-server.
type Server struct {
	// Addr is the server's host:port on loopback.
	Addr   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has ended
}

// URL is the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// startTimeout bounds how long a server may take to report it is ready.
const startTimeout = 10 * time.Second

// Start runs a redis-server for the rest of t and returns it once it
// accepts connections.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed: run make redis (or apt-get install -y redis-server)")
	}
	// The free port is found by binding and closing it, so another process
	// may take it before redis-server does: try a few.
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		s, err := start(bin, port)
		if err == nil {
			t.Cleanup(func() { s.stop() })
			return s
		}
		lastErr = err
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

// Restart stops the server and starts a new, empty one on the same port,
// as a Redis restarted without persistence looks to its clients.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	_, port, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(port)
	next, err := start(s.cmd.Path, n)
	if err != nil {
		t.Fatalf("redistest: restart: %v", err)
	}
	s.cmd, s.exited = next.cmd, next.exited
}

// start runs one server and waits for "Ready to accept connections", the
// line it logs once it listens.
func start(bin string, port int) (*Server, error) {
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "notice")
	w := &readyWriter{ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	s.exited = make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(s.exited) }()
	select {
	case <-w.ready:
	case <-s.exited:
		return nil, fmt.Errorf("redis-server on port %d exited before it was ready (%v):\n%s", port, waitErr, w.log())
	case <-time.After(startTimeout):
		s.stop()
		return nil, fmt.Errorf("redis-server on port %d was not ready after %s:\n%s", port, startTimeout, w.log())
	}
	if err := ping(s.Addr); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// stop ends the server by its pid and waits for it; stopping a stopped
// server does nothing.
func (s *Server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// ping checks the server answers PING with PONG, in RESP by hand so this
// package needs no client.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("ping %s: %w", addr, err)
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("ping %s: answered %q", addr, line)
	}
	return nil
}

// freePort returns a loopback port nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// readyWriter collects the server's log and closes ready at the line it
// writes once it listens.
type readyWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	ready chan struct{}
	seen  bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() < 64<<10 {
		w.buf.Write(p)
	}
	if !w.seen && strings.Contains(w.buf.String(), "Ready to accept connections") {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *readyWriter) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
