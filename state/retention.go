package state

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Retainer is a store that keeps session records for a limited time,
// counted from each session's start: Memory, SQLite and Redis all are.
// Without a retention set, records are kept for good. A record whose
// start is the zero time is never old.
type Retainer interface {
	// SetRetention keeps records for d from now on, and forgets the
	// older ones at once where the store can (SQLite deletes them;
	// Redis lets each record expire as it is written).
	SetRetention(ctx context.Context, d time.Duration) error
}

// retention is a store's session retention, 0 for none.
type retention struct{ d atomic.Int64 }

// cutoff is when the oldest record still kept started, and false when
// records are kept for good.
func (r *retention) cutoff(now time.Time) (time.Time, bool) {
	d := time.Duration(r.d.Load())
	if d <= 0 {
		return time.Time{}, false
	}
	return now.Add(-d), true
}

// set records d, refusing a negative one.
func (r *retention) set(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("state: a session retention cannot be negative")
	}
	r.d.Store(int64(d))
	return nil
}

// old reports whether a record started at started is past the retention.
func (r *retention) old(started, now time.Time) bool {
	cut, ok := r.cutoff(now)
	return ok && !started.IsZero() && started.Before(cut)
}

// SetRetention implements Retainer.
func (m *Memory) SetRetention(_ context.Context, d time.Duration) error {
	if err := m.retention.set(d); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetOld(m.now())
	return nil
}

// forgetOld drops the records past the retention; m.mu is held.
func (m *Memory) forgetOld(now time.Time) {
	for id, r := range m.sessions {
		if m.retention.old(r.Started, now) {
			delete(m.sessions, id)
		}
	}
}

// SetRetention implements Retainer: the records already past it are
// deleted at once, the later ones as sessions are recorded.
func (s *SQLite) SetRetention(ctx context.Context, d time.Duration) error {
	if err := s.retention.set(d); err != nil {
		return err
	}
	return s.deleteOld(ctx)
}

// deleteOld deletes the records past the retention (index sessions_started
// finds them).
func (s *SQLite) deleteOld(ctx context.Context) error {
	cut, ok := s.retention.cutoff(s.now())
	if !ok {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE started < ?`, cut.UnixNano()); err != nil {
		return fmt.Errorf("state: sqlite: deleting old session records: %w", err)
	}
	return nil
}

// SetRetention implements Retainer: each record written from now on
// expires when it is d old, and each write trims the indexes it touches.
// Records written before keep their expiry until rewritten.
func (r *Redis) SetRetention(_ context.Context, d time.Duration) error {
	return r.retention.set(d)
}
