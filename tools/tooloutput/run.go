package tooloutput

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// runPrefix starts the name of every run directory; the pid that follows
// lets a later process tell a crashed run's leftovers from a live one's.
const runPrefix = "slackbot-"

// Run is this process's directory for stored results,
// <base>/slackbot-<pid>-<random hex>/, holding one directory per session.
type Run struct {
	dir string
	log *zap.Logger
}

// OpenRun creates the run directory under base (os.TempDir() when base is
// "") and removes the directories left by processes that are no longer
// running, so a crash leaks at most one run's files until the next start.
func OpenRun(base string, log *zap.Logger) (*Run, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if base == "" {
		base = os.TempDir()
	}
	abs, err := filepath.Abs(base)
	if err != nil {
		return nil, fmt.Errorf("tool_output.dir %q: cannot create the directory: %w", base, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("tool_output.dir %q: cannot create the directory: %w", base, err)
	}
	removeStale(abs, log)
	dir := filepath.Join(abs, runPrefix+strconv.Itoa(os.Getpid())+"-"+randomHex(6))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tool_output.dir %q: cannot create %s in it (is it writable?): %w", base, filepath.Base(dir), err)
	}
	// Mkdir applies the umask; a stricter one must not lock us out, and a
	// laxer one must not open the results to other users.
	if err := os.Chmod(dir, 0o700); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("tool_output.dir %q: cannot set the mode of %s: %w", base, dir, err)
	}
	log.Info("tool output directory ready", zap.String("dir", dir))
	return &Run{dir: dir, log: log}, nil
}

// Dir returns the run directory's absolute path.
func (r *Run) Dir() string { return r.dir }

// Close removes the run directory and everything in it.
func (r *Run) Close() error {
	if err := os.RemoveAll(r.dir); err != nil {
		return fmt.Errorf("tool output: removing %s: %w", r.dir, err)
	}
	return nil
}

// NewStore returns an empty store for one session. Its directory is made
// on the first Put, so sessions whose results all fit cost nothing.
func (r *Run) NewStore() *Store {
	return &Store{run: r, log: r.log, entries: map[string]*Entry{}}
}

// removeStale deletes the run directories under base whose process has
// ended. Failures are logged, not returned: leftovers must not stop a start.
func removeStale(base string, log *zap.Logger) {
	list, err := os.ReadDir(base)
	if err != nil {
		log.Warn("tool output: cannot list the directory for stale runs", zap.String("dir", base), zap.Error(err))
		return
	}
	for _, de := range list {
		pid, ok := runPID(de.Name())
		if !ok || !de.IsDir() || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		path := filepath.Join(base, de.Name())
		if err := os.RemoveAll(path); err != nil {
			log.Warn("tool output: cannot remove a stale run directory", zap.String("dir", path), zap.Error(err))
			continue
		}
		log.Info("tool output: removed the directory of an ended run", zap.String("dir", path), zap.Int("pid", pid))
	}
}

// runPID parses the pid out of "slackbot-<pid>-<hex>".
func runPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, runPrefix)
	if !ok {
		return 0, false
	}
	p, h, ok := strings.Cut(rest, "-")
	if !ok || h == "" {
		return 0, false
	}
	if _, err := hex.DecodeString(h); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b)
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

var errClosed = errors.New("the session's tool output store is closed")
