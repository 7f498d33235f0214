package tooloutput

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/llm"
)

// Store holds one session's oversized results, each in its own file named
// by its handle. It is safe for concurrent use; Close removes the files.
type Store struct {
	run *Run
	log *zap.Logger

	// mu guards the directory's life: Puts write under the read lock so
	// they run in parallel, and Close takes the write lock so it never
	// removes the directory under a write in progress.
	mu     sync.RWMutex
	dir    string
	closed bool

	emu     sync.Mutex
	entries map[string]*Entry
	order   []string // handles in the order they were stored
}

// Entry describes one stored result.
type Entry struct {
	Handle string // a UUID: the file name, and what the model passes to tool_output
	Tool   string // the tool's full name
	Args   string // its arguments, verbatim JSON
	Bytes  int
	Lines  int
	Tokens int // estimated (llm.EstimateTokens)
	Path   string
}

// Put writes content to a new file and returns its entry. The token count
// is an estimate: an exact count of a result of tens of megabytes would
// cost more than the call that produced it.
func (s *Store) Put(tool, args, content string) (*Entry, error) {
	dir, err := s.lockDir()
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	e := &Entry{Handle: newUUID(), Tool: tool, Args: args, Bytes: len(content),
		Lines: countLines(content), Tokens: llm.EstimateTokens(content)}
	e.Path = filepath.Join(dir, e.Handle)
	f, err := os.OpenFile(e.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("tool output: storing the result of %s: %w", tool, err)
	}
	_, werr := f.WriteString(content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(e.Path)
		return nil, fmt.Errorf("tool output: storing the result of %s: %w", tool, werr)
	}
	s.emu.Lock()
	s.entries[e.Handle] = e
	s.order = append(s.order, e.Handle)
	s.emu.Unlock()
	s.log.Debug("tool output stored", zap.String("handle", e.Handle), zap.String("tool", tool),
		zap.Int("bytes", e.Bytes), zap.Int("lines", e.Lines), zap.Int("tokens", e.Tokens))
	return e, nil
}

// lockDir returns the session directory, creating it on first use, with
// the read lock held (the caller releases it).
func (s *Store) lockDir() (string, error) {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return "", errClosed
	}
	if s.dir != "" {
		return s.dir, nil
	}
	s.mu.RUnlock()
	s.mu.Lock()
	if !s.closed && s.dir == "" {
		dir := filepath.Join(s.run.dir, "session-"+newUUID())
		if err := os.Mkdir(dir, 0o700); err != nil {
			s.mu.Unlock()
			return "", fmt.Errorf("tool output: creating the session directory: %w", err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			s.mu.Unlock()
			return "", fmt.Errorf("tool output: setting the mode of %s: %w", dir, err)
		}
		s.dir = dir
	}
	s.mu.Unlock()
	return s.lockDir()
}

// Get returns the entry of handle, if this store holds it.
func (s *Store) Get(handle string) (*Entry, bool) {
	s.emu.Lock()
	defer s.emu.Unlock()
	e, ok := s.entries[handle]
	return e, ok
}

// Len returns how many results the store holds.
func (s *Store) Len() int {
	s.emu.Lock()
	defer s.emu.Unlock()
	return len(s.entries)
}

// Entries returns the stored entries in the order they were stored.
func (s *Store) Entries() []*Entry {
	s.emu.Lock()
	defer s.emu.Unlock()
	out := make([]*Entry, 0, len(s.order))
	for _, h := range s.order {
		out = append(out, s.entries[h])
	}
	return out
}

// Dir returns the session directory, "" until the first Put.
func (s *Store) Dir() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dir
}

// Close removes the session directory. It is idempotent; Puts after it fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.dir == "" {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("tool output: removing %s: %w", s.dir, err)
	}
	return nil
}

// handleList describes the store's handles for a model that named a wrong one.
func (s *Store) handleList() string {
	es := s.Entries()
	if len(es) == 0 {
		return "This session has no stored tool outputs."
	}
	lines := make([]string, 0, len(es))
	for _, e := range slices.Backward(es) {
		lines = append(lines, fmt.Sprintf("- %s (from %s, %d bytes)", e.Handle, e.Tool, e.Bytes))
	}
	return "Valid handles in this session (newest first):\n" + strings.Join(lines, "\n")
}

// countLines counts lines as an editor shows them: a last line without a
// newline still counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}
