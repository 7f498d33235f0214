package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalTB records a Fatalf and ends the goroutine as testing does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestAMissingRedisServerFailsAndSaysHowToInstallIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(tb)
	}()
	<-done
	if !strings.Contains(tb.msg, "run make redis") {
		t.Fatalf("Start without redis-server: %q; want it to say run make redis", tb.msg)
	}
}

func TestAServerAnswersAndComesBackEmptyAfterARestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	if err := ping(s.Addr); err != nil {
		t.Fatal(err)
	}
	pid := s.cmd.Process.Pid
	s.Restart(t)
	if s.cmd.Process.Pid == pid {
		t.Fatal("a restart kept the old process")
	}
	if err := ping(s.Addr); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}

// send writes one inline command and returns the first line of the reply.
func send(t *testing.T, addr, command string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, command+"\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(line, "$") && line != "$-1\r\n" {
		line, err = r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
	}
	return strings.TrimSpace(line)
}

func TestAPersistentServerKeepsItsKeysAcrossACrash(t *testing.T) {
	t.Parallel()
	s := StartPersistent(t)
	if got := send(t, s.Addr, "SET k v1"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	s.Down()
	if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the server still accepts connections after Down")
	}
	s.Up(t)
	if got := send(t, s.Addr, "GET k"); got != "v1" {
		t.Fatalf("GET after Down and Up: %q, want v1", got)
	}
	// Without persistence the same outage forgets everything.
	e := Start(t)
	send(t, e.Addr, "SET k v1")
	e.Down()
	e.Up(t)
	if got := send(t, e.Addr, "GET k"); got != "$-1" {
		t.Fatalf("GET on a server without persistence after Down and Up: %q, want nil", got)
	}
}
