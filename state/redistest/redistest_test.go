package redistest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
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
