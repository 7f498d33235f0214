// Package state is what the bot must remember beyond one session and share
// between the goroutines (and, with a shared backend, the replicas) that
// serve Slack: which events were already handled, which thread a session
// is working in, which threads are the bot's own, how many sessions run at
// once, how much each user has spent, and what each session did. Store is
// the interface; Memory keeps it in this process, SQLite in a file, and
// Open picks one from the configuration.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// Store remembers keys with expiry, concurrency slots, usage counters and
// session records. Implementations must be safe for concurrent use; every
// method is atomic.
type Store interface {
	// Once reports whether key is seen for the first time, and remembers it
	// for ttl either way: the dedup of redelivered events.
	Once(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// Lock takes the lease on key for owner for ttl. It reports false when
	// another owner holds an unexpired lease; an owner locking again
	// renews its own.
	Lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// Unlock releases owner's lease on key; another owner's is left alone.
	Unlock(ctx context.Context, key, owner string) error
	// Mark remembers key for ttl (a thread the bot answered in).
	Mark(ctx context.Context, key string, ttl time.Duration) error
	// Marked reports whether key is remembered.
	Marked(ctx context.Context, key string) (bool, error)

	// Acquire takes one of limit slots of the counting semaphore name for
	// holder for ttl (max_concurrent_sessions, tool queues). A holder that
	// already has a slot renews it. It reports false when all limit slots
	// are held by other holders whose slots have not expired.
	Acquire(ctx context.Context, name, holder string, limit int, ttl time.Duration) (bool, error)
	// Release gives back holder's slot of name; releasing a slot not held
	// is not an error.
	Release(ctx context.Context, name, holder string) error

	// Add adds delta to the counter key and returns the new total. An
	// absent or expired counter starts at 0 and expires ttl later; later
	// adds do not extend that, so a daily budget resets on schedule.
	Add(ctx context.Context, key string, delta float64, ttl time.Duration) (float64, error)
	// Get returns the counter key, 0 when it is absent or expired.
	Get(ctx context.Context, key string) (float64, error)

	// Take takes one token from the token bucket key when more than keep
	// tokens are in it, and returns 0. Otherwise it takes nothing and
	// returns how long until the bucket will hold keep+1. The bucket
	// holds at most burst tokens, gains rate tokens a second and starts
	// full; keep is at most burst-1. Time is the store's own clock, so
	// replicas sharing a store share each bucket (the Slack rate budgets).
	Take(ctx context.Context, key string, rate float64, burst, keep int) (time.Duration, error)

	// PutSession inserts r, or replaces the record with r.ID.
	PutSession(ctx context.Context, r SessionRecord) error
	// Session returns the record id, and false when there is none.
	Session(ctx context.Context, id string) (SessionRecord, bool, error)
	// Sessions returns the records matching f, newest (by Started) first.
	Sessions(ctx context.Context, f SessionFilter) ([]SessionRecord, error)
	// SetFeedback records f, one person's click on the feedback buttons
	// of the session id's answer. A person's later click replaces their
	// earlier one: the record keeps one verdict per person. It returns
	// ErrNoSession when there is no session id.
	SetFeedback(ctx context.Context, id string, f Feedback) error

	// PutProgress records a live progress message, replacing the record
	// of its session.
	PutProgress(ctx context.Context, p Progress) error
	// DropProgress forgets session's progress message; forgetting one not
	// recorded is not an error.
	DropProgress(ctx context.Context, session string) error
	// Progresses returns every recorded progress message, by session.
	Progresses(ctx context.Context) ([]Progress, error)

	// Ping reports whether the store answers, as cheaply as it can: the
	// readiness check calls it every few seconds. It fails once the store
	// is closed.
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// ErrClosed is returned by Ping on a store that was closed.
var ErrClosed = errors.New("state: the store is closed")

// SessionRecord is what the bot keeps about one session: who asked where,
// which agent answered, how it went and what it cost.
type SessionRecord struct {
	ID, User, Channel, ThreadTS, Agent, Status  string
	Turns, ToolCalls, InputTokens, OutputTokens int
	CostUSD                                     float64
	Started                                     time.Time
	Duration                                    time.Duration
	Report                                      string // the final report's text (bounded by the caller)
	// Feedback holds each person's last verdict on the answer, oldest
	// first.
	Feedback []Feedback
	// Approvals are the decisions on the session's tool calls that waited
	// for a person, in the order they were made.
	Approvals []Approval
}

// Feedback is one person's verdict on an answer.
type Feedback struct {
	User  string    `json:"user"`
	Value string    `json:"value"` // "positive" or "negative", as Slack's buttons are named
	At    time.Time `json:"at"`
}

// mergeFeedback returns list with f as its person's verdict, replacing an
// earlier one, ordered oldest first (ties by user). list is not modified.
func mergeFeedback(list []Feedback, f Feedback) []Feedback {
	out := make([]Feedback, 0, len(list)+1)
	for _, g := range list {
		if g.User != f.User {
			out = append(out, g)
		}
	}
	out = append(out, f)
	sortFeedback(out)
	return out
}

// sortFeedback orders verdicts oldest first, ties by user.
func sortFeedback(list []Feedback) {
	slices.SortStableFunc(list, func(a, b Feedback) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.User, b.User)
	})
}

// encodeFeedback is list as stored in one text field: JSON, "" for none.
func encodeFeedback(list []Feedback) string {
	if len(list) == 0 {
		return ""
	}
	data, _ := json.Marshal(list) // strings and times always encode
	return string(data)
}

// decodeFeedback reads what encodeFeedback wrote. A field that is not a
// JSON list holds the single verdict of an older release, who gave it not
// known.
func decodeFeedback(s string) []Feedback {
	if s == "" {
		return nil
	}
	var list []Feedback
	if strings.HasPrefix(s, "[") && json.Unmarshal([]byte(s), &list) == nil {
		return list
	}
	return []Feedback{{Value: s}}
}

// SessionFilter selects session records; zero fields match everything.
type SessionFilter struct {
	User, Channel string
	Since         time.Time // records started at or after Since
	Limit         int       // at most this many; 0 means DefaultSessionLimit
}

// DefaultSessionLimit is how many records Sessions returns when the filter
// sets no limit, so an unbounded listing cannot load the whole history.
const DefaultSessionLimit = 100

// ErrNoSession is returned by SetFeedback for an unknown session id.
var ErrNoSession = errors.New("state: no such session")

// limit returns how many records f asks for.
func (f SessionFilter) limit() int {
	if f.Limit <= 0 {
		return DefaultSessionLimit
	}
	return f.Limit
}
