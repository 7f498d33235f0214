// Package redistest starts a real redis-server for tests: on a free
// loopback port, persisting nothing (or, from StartPersistent, everything,
// to an append-only file of the test's), and stopped by its pid when the
// test ends. Down and Up take it away and bring it back on the same port,
// as an outage looks to its clients; Hang and Resume freeze it with its
// port open, as a hung server or a partitioned network looks. A machine
// without redis-server fails the test with the command that installs it,
// so a missing peer is never mistaken for a pass.
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
	dir    string // the append-only file's directory; "" persists nothing
	mu     sync.Mutex
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
	return startIn(t, "")
}

// StartPersistent is Start with persistence: every write goes to an
// append-only file, fsynced before the reply, in a directory of the test's,
// so the server keeps its keys across Down and Up as a production Redis
// with appendonly does.
func StartPersistent(t testing.TB) *Server {
	t.Helper()
	return startIn(t, t.TempDir())
}

func startIn(t testing.TB, dir string) *Server {
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
		s, err := start(bin, port, dir)
		if err == nil {
			t.Cleanup(func() { s.stop() })
			return s
		}
		lastErr = err
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

// Restart stops the server and starts it again on the same port: empty,
// as a Redis restarted without persistence looks to its clients, or with
// its keys when it was started by StartPersistent.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	s.Up(t)
}

// Down kills the server (SIGKILL, as a crash), and returns once it is gone;
// its clients see refused connections until Up.
func (s *Server) Down() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	_ = cmd.Process.Kill()
	<-exited
}

// Hang freezes the server (SIGSTOP) and returns: its port still accepts
// connections, but nothing is read or answered until Resume, as a hung
// server or a network that drops every packet looks to its clients.
func (s *Server) Hang() { s.signal(syscall.SIGSTOP) }

// Resume lets a server frozen by Hang run again.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	_ = cmd.Process.Signal(sig)
}

// Up starts the server again on its port (and append-only file) and
// returns once it accepts connections.
func (s *Server) Up(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	bin := s.cmd.Path
	s.mu.Unlock()
	_, port, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(port)
	next, err := start(bin, n, s.dir)
	if err != nil {
		t.Fatalf("redistest: start again: %v", err)
	}
	s.mu.Lock()
	s.cmd, s.exited = next.cmd, next.exited
	s.mu.Unlock()
}

// start runs one server and waits for "Ready to accept connections", the
// line it logs once it listens. With dir it persists every write there.
func start(bin string, port int, dir string) (*Server, error) {
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--loglevel", "notice"}
	if dir != "" {
		args = append(args, "--dir", dir, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	cmd := exec.Command(bin, args...)
	w := &readyWriter{ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd}
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

// stop ends the server by its pid and waits for it, a frozen one too;
// stopping a stopped server does nothing.
func (s *Server) stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Process.Signal(syscall.SIGCONT) // a server frozen by Hang handles the TERM once it runs
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
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
