package state

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Progress is a progress message showing in Slack while its session runs:
// which session, where the message is, and which replica runs it. The
// Slack headend records one when it posts the message and drops it when
// the session concludes, so a message whose replica died (SIGKILL, OOM, a
// panic it could not catch) can be found and settled by another.
type Progress struct {
	Session string `json:"session"`
	Channel string `json:"channel"`
	TS      string `json:"ts"`
	Owner   string `json:"owner"` // the replica running the session
	// Tasks are the tasks a streamed message shows still running, so that
	// whoever settles the stream of a replica that died can end them too.
	Tasks []OpenTask `json:"tasks,omitempty"`
}

// OpenTask is a task of a streamed message not finished yet.
type OpenTask struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// check reports what keeps p from being recorded.
func (p Progress) check() error {
	if p.Session == "" || p.Channel == "" || p.TS == "" || p.Owner == "" {
		return fmt.Errorf("state: a progress record needs a session, a channel, a ts and an owner")
	}
	return nil
}

// sortProgress orders records by session, so every backend lists them alike.
func sortProgress(list []Progress) {
	slices.SortFunc(list, func(a, b Progress) int { return strings.Compare(a.Session, b.Session) })
}

// PutProgress implements Store.
func (m *Memory) PutProgress(_ context.Context, p Progress) error {
	if err := p.check(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.progress == nil {
		m.progress = map[string]Progress{}
	}
	p.Tasks = slices.Clone(p.Tasks)
	m.progress[p.Session] = p
	return nil
}

// DropProgress implements Store.
func (m *Memory) DropProgress(_ context.Context, session string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.progress, session)
	return nil
}

// Progresses implements Store.
func (m *Memory) Progresses(context.Context) ([]Progress, error) {
	m.mu.Lock()
	out := make([]Progress, 0, len(m.progress))
	for _, p := range m.progress {
		p.Tasks = slices.Clone(p.Tasks)
		out = append(out, p)
	}
	m.mu.Unlock()
	sortProgress(out)
	return out, nil
}
