package tooloutput

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/llm"
)

func TestStoreLifecycle(t *testing.T) {
	t.Parallel()
	s, logs := newStore(t)
	if s.Dir() != "" || s.Len() != 0 {
		t.Fatalf("a new store has a directory (%q) or entries (%d)", s.Dir(), s.Len())
	}
	content := "line one\nline two\nthree"
	e := put(t, s, "github__search", `{"q":"x"}`, content)
	dir := s.Dir()
	if dir == "" || !strings.HasPrefix(filepath.Base(dir), "session-") {
		t.Fatalf("session directory %q", dir)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, e.Path: 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s has mode %v, want %v", path, st.Mode(), want)
		}
	}
	want := Entry{Handle: e.Handle, Tool: "github__search", Args: `{"q":"x"}`, Bytes: len(content), Lines: 3,
		Tokens: llm.EstimateTokens(content), Path: filepath.Join(dir, e.Handle)}
	if *e != want {
		t.Errorf("entry %+v, want %+v", *e, want)
	}
	if got, _ := os.ReadFile(e.Path); string(got) != content {
		t.Errorf("file holds %q", got)
	}
	if got, ok := s.Get(e.Handle); !ok || got != e {
		t.Error("Get does not find the stored handle")
	}
	if l := logs.FilterMessage("tool output stored").All(); len(l) != 1 || l[0].ContextMap()["bytes"] != int64(len(content)) {
		t.Errorf("store log lines: %v", l)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", dir, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := s.Put("t", "{}", "x"); err == nil {
		t.Error("Put after Close succeeded")
	}
}

func TestLinesCountAsAnEditorShowsThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text  string
		lines int
	}{{"", 0}, {"a", 1}, {"a\n", 1}, {"a\nb", 2}, {"\n\n", 2}} {
		if got := countLines(tc.text); got != tc.lines {
			t.Errorf("countLines(%q) = %d, want %d", tc.text, got, tc.lines)
		}
	}
}

func TestHandlesBelongToTheirStore(t *testing.T) {
	t.Parallel()
	a, _ := newStore(t)
	b := a.run.NewStore()
	defer b.Close()
	e := put(t, a, "t", "{}", "x")
	if _, ok := b.Get(e.Handle); ok {
		t.Error("another session's store finds the handle")
	}
	put(t, b, "t", "{}", "y")
	if a.Dir() == b.Dir() {
		t.Error("two sessions share a directory")
	}
}

func TestConcurrentPutsAllLand(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := s.Put("t", "{}", strings.Repeat("x", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if s.Len() != 20 || len(s.Entries()) != 20 {
		t.Errorf("%d entries, want 20", s.Len())
	}
}

func TestOpenRunCleansUpAfterEndedProcesses(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	// A process that has ended: its pid is free.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(base, "slackbot-"+strconv.Itoa(cmd.Process.Pid)+"-abcdef")
	live := filepath.Join(base, "slackbot-"+strconv.Itoa(os.Getppid())+"-abcdef")
	mine := filepath.Join(base, "slackbot-"+strconv.Itoa(os.Getpid())+"-012345")
	other := filepath.Join(base, "slackbot-notes")
	for _, d := range []string{dead, live, mine, other} {
		if err := os.MkdirAll(filepath.Join(d, "session-x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run, err := OpenRun(base, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the ended process's directory is still there: %v", err)
	}
	for _, d := range []string{live, mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	name := filepath.Base(run.Dir())
	if !strings.HasPrefix(name, "slackbot-"+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("run directory %q is not named for this process", name)
	}
	if st, err := os.Stat(run.Dir()); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("run directory mode: %v %v", st, err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(run.Dir()); !os.IsNotExist(err) {
		t.Errorf("Close left the run directory: %v", err)
	}
}

func TestOpenRunNamesTheDirectoryItCannotUse(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(file, "sub")
	_, err := OpenRun(base, nil)
	if err == nil {
		t.Fatal("OpenRun under a file succeeded")
	}
	if want := "tool_output.dir " + strconv.Quote(base) + ": cannot create"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not start with %q", err, want)
	}
}

func TestOpenRunDefaultsToTheTempDir(t *testing.T) {
	t.Parallel()
	run, err := OpenRun("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if filepath.Dir(run.Dir()) != filepath.Clean(os.TempDir()) {
		t.Errorf("run directory %s is not in %s", run.Dir(), os.TempDir())
	}
}
