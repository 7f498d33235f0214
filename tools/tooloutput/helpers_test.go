package tooloutput

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// newStore returns an empty store in a fresh run under a test directory,
// and the log lines it and its run write.
func newStore(t testing.TB) (*Store, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	run, err := OpenRun(t.TempDir(), zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	s := run.NewStore()
	t.Cleanup(func() { s.Close() })
	return s, logs
}

func put(t testing.TB, s *Store, tool, args, content string) *Entry {
	t.Helper()
	e, err := s.Put(tool, args, content)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// nonceRe finds the nonce a prompt asks the model to use.
var nonceRe = regexp.MustCompile(`<ai-agent-([A-Za-z0-9]+)-FINAL`)

func nonceOf(t testing.TB, system string) string {
	t.Helper()
	m := nonceRe.FindStringSubmatch(system)
	if m == nil {
		t.Fatalf("prompt has no nonce:\n%s", system)
	}
	return m[1]
}

// wrap answers in the wrapper a prompt asks for.
func wrap(system, content string) string {
	n := nonceRe.FindStringSubmatch(system)[1]
	return `<ai-agent-` + n + `-FINAL format="text">` + content + `</ai-agent-` + n + `-FINAL>`
}

// scripted is a Model that records its calls and answers with a function.
type scripted struct {
	mu      sync.Mutex
	maps    []call
	reduces []call
	answer  func(system, user string) (string, error)
}

type call struct{ system, user string }

func (m *scripted) model(_ context.Context, system, user string) (string, error) {
	m.mu.Lock()
	if strings.Contains(system, "synthesize multiple chunk extractions") {
		m.reduces = append(m.reduces, call{system, user})
	} else {
		m.maps = append(m.maps, call{system, user})
	}
	m.mu.Unlock()
	return m.answer(system, user)
}

// chunkOf takes the chunk back out of a map call's user message.
func chunkOf(user string) string {
	_, s, _ := strings.Cut(user, "-----BEGIN CHUNK-----\n")
	s, _, _ = strings.Cut(s, "\n-----END CHUNK-----")
	return s
}
