package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver: no cgo, nothing to install
)

// SQLite is a Store in one SQLite file: the default for a single replica,
// embedded and surviving restarts. Every operation but SetFeedback is one
// statement, which SQLite runs atomically; SetFeedback is a transaction. Times are
// stored as Unix nanoseconds; expired rows are ignored by every read and
// deleted every sweepEvery writes.
type SQLite struct {
	// w is the only connection that writes, so this process's writers
	// queue in Go instead of spinning in SQLite's busy handler; r serves
	// reads, which WAL lets run beside the writer. The busy timeout still
	// covers other processes on the same file (slackbot sessions).
	w, r *sql.DB
	now  func() time.Time
	ops  atomic.Int64
	// retention bounds how long session records are kept; each record
	// written deletes those past it.
	retention retention
}

// busyTimeout is how long a statement waits for another process's write
// to finish before failing with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// schema is created on open. user_version numbers it so that a later
// release can tell which migrations an existing file needs.
const schema = `
CREATE TABLE IF NOT EXISTS keys (
	key     TEXT PRIMARY KEY,
	owner   TEXT NOT NULL,   -- '' for Once and Mark; the lease holder for Lock
	expires INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS keys_expires ON keys (expires);

CREATE TABLE IF NOT EXISTS slots (
	name    TEXT NOT NULL,
	holder  TEXT NOT NULL,
	expires INTEGER NOT NULL,
	PRIMARY KEY (name, holder)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS slots_expires ON slots (expires);

CREATE TABLE IF NOT EXISTS counters (
	key     TEXT PRIMARY KEY,
	value   REAL NOT NULL,
	expires INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS counters_expires ON counters (expires);

CREATE TABLE IF NOT EXISTS buckets (
	key     TEXT PRIMARY KEY,
	tokens  REAL NOT NULL,    -- left after the last take
	at      INTEGER NOT NULL, -- when it was taken
	expires INTEGER NOT NULL  -- when it is full again, and may be forgotten
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS buckets_expires ON buckets (expires);

CREATE TABLE IF NOT EXISTS sessions (
	id            TEXT PRIMARY KEY,
	user          TEXT NOT NULL,
	channel       TEXT NOT NULL,
	thread_ts     TEXT NOT NULL,
	agent         TEXT NOT NULL,
	status        TEXT NOT NULL,
	turns         INTEGER NOT NULL,
	tool_calls    INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	cost_usd      REAL NOT NULL,
	started       INTEGER,        -- NULL for a zero time, which has no Unix nanoseconds
	duration      INTEGER NOT NULL,
	report        TEXT NOT NULL,
	feedback      TEXT NOT NULL,
	approvals     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS sessions_started ON sessions (started DESC, id);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user, started DESC, id);
CREATE INDEX IF NOT EXISTS sessions_channel ON sessions (channel, started DESC, id);

PRAGMA user_version = 1;
`

// NewSQLite opens (creating when missing) the SQLite store in the file at
// path, creating its directory, in WAL mode so readers do not wait for the
// writer.
func NewSQLite(path string) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("state: sqlite: no file path")
	}
	if strings.ContainsRune(path, '?') {
		// The driver reads everything after '?' as connection parameters.
		return nil, fmt.Errorf("state: sqlite: file path %q contains '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("state: sqlite: %w", err)
	}
	params := fmt.Sprintf("?_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL", busyTimeout.Milliseconds())
	// BEGIN IMMEDIATE, so that a transaction added later takes the write
	// lock up front instead of failing to upgrade a read under WAL.
	w, err := sql.Open("sqlite", path+params+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("state: sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0) // keep the one connection: reopening re-runs the pragmas
	if _, err := w.Exec(schema + progressSchema); err != nil {
		w.Close()
		return nil, fmt.Errorf("state: sqlite %s: creating the schema: %w", path, err)
	}
	// Files of earlier releases gain the columns added since.
	for _, c := range []struct{ table, column string }{{"sessions", "approvals"}, {"progress", "tasks"}} {
		if err := addColumn(w, c.table, c.column, `TEXT NOT NULL DEFAULT ''`); err != nil {
			w.Close()
			return nil, fmt.Errorf("state: sqlite %s: adding the %s column: %w", path, c.column, err)
		}
	}
	r, err := sql.Open("sqlite", path+params+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("state: sqlite %s: %w", path, err)
	}
	return &SQLite{w: w, r: r, now: time.Now}, nil
}

// exec runs a write, returning how many rows it changed, and sweeps
// expired rows every sweepEvery writes.
func (s *SQLite) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.w.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	s.wrote(ctx)
	return n, nil
}

// wrote counts a write and, every sweepEvery writes, deletes expired
// rows: reads already ignore them, so the sweep only bounds the file.
func (s *SQLite) wrote(ctx context.Context) {
	if s.ops.Add(1)%sweepEvery != 0 {
		return
	}
	now := s.now().UnixNano()
	for _, table := range []string{"keys", "slots", "counters", "buckets"} {
		// A failed sweep is retried at the next one; the write it
		// follows has succeeded and must not be reported as failed.
		_, _ = s.w.ExecContext(ctx, "DELETE FROM "+table+" WHERE expires <= ?", now)
	}
}

// Once implements Store.
func (s *SQLite) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	now := s.now()
	n, err := s.exec(ctx, `INSERT INTO keys (key, owner, expires) VALUES (?1, '', ?2)
		ON CONFLICT (key) DO UPDATE SET owner = '', expires = excluded.expires
		WHERE keys.expires <= ?3`,
		key, now.Add(ttl).UnixNano(), now.UnixNano())
	return n == 1, err
}

// Lock implements Store.
func (s *SQLite) Lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	now := s.now()
	n, err := s.exec(ctx, `INSERT INTO keys (key, owner, expires) VALUES (?1, ?2, ?3)
		ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
		WHERE keys.owner = excluded.owner OR keys.expires <= ?4`,
		key, owner, now.Add(ttl).UnixNano(), now.UnixNano())
	return n == 1, err
}

// Unlock implements Store.
func (s *SQLite) Unlock(ctx context.Context, key, owner string) error {
	_, err := s.exec(ctx, `DELETE FROM keys WHERE key = ? AND owner = ?`, key, owner)
	return err
}

// Mark implements Store.
func (s *SQLite) Mark(ctx context.Context, key string, ttl time.Duration) error {
	_, err := s.exec(ctx, `INSERT INTO keys (key, owner, expires) VALUES (?, '', ?)
		ON CONFLICT (key) DO UPDATE SET owner = '', expires = excluded.expires`,
		key, s.now().Add(ttl).UnixNano())
	return err
}

// Marked implements Store.
func (s *SQLite) Marked(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM keys WHERE key = ? AND expires > ?)`,
		key, s.now().UnixNano()).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("state: sqlite: %w", err)
	}
	return ok, nil
}

// Acquire implements Store. The row is inserted (or the holder's renewed)
// only when the holder already has a live slot or fewer than limit others
// do; the count and the write are one statement, so they cannot race.
func (s *SQLite) Acquire(ctx context.Context, name, holder string, limit int, ttl time.Duration) (bool, error) {
	now := s.now()
	n, err := s.exec(ctx, `INSERT INTO slots (name, holder, expires)
		SELECT ?1, ?2, ?3
		WHERE EXISTS (SELECT 1 FROM slots WHERE name = ?1 AND holder = ?2 AND expires > ?4)
		   OR (SELECT count(*) FROM slots WHERE name = ?1 AND holder <> ?2 AND expires > ?4) < ?5
		ON CONFLICT (name, holder) DO UPDATE SET expires = excluded.expires`,
		name, holder, now.Add(ttl).UnixNano(), now.UnixNano(), limit)
	return n == 1, err
}

// Release implements Store.
func (s *SQLite) Release(ctx context.Context, name, holder string) error {
	_, err := s.exec(ctx, `DELETE FROM slots WHERE name = ? AND holder = ?`, name, holder)
	return err
}

// Add implements Store. An expired counter is restarted in place rather
// than deleted first, so the add stays one statement.
func (s *SQLite) Add(ctx context.Context, key string, delta float64, ttl time.Duration) (float64, error) {
	now := s.now()
	var v float64
	err := s.w.QueryRowContext(ctx, `INSERT INTO counters (key, value, expires) VALUES (?1, ?2, ?3)
		ON CONFLICT (key) DO UPDATE SET
			value = CASE WHEN counters.expires <= ?4 THEN excluded.value ELSE counters.value + excluded.value END,
			expires = CASE WHEN counters.expires <= ?4 THEN excluded.expires ELSE counters.expires END
		RETURNING value`,
		key, delta, now.Add(ttl).UnixNano(), now.UnixNano()).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	s.wrote(ctx)
	return v, nil
}

// Get implements Store.
func (s *SQLite) Get(ctx context.Context, key string) (float64, error) {
	var v float64
	err := s.r.QueryRowContext(ctx, `SELECT value FROM counters WHERE key = ? AND expires > ?`,
		key, s.now().UnixNano()).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	return v, nil
}

// Take implements Store. The read and the write are one transaction on
// the single writer connection, so no other take comes between them.
func (s *SQLite) Take(ctx context.Context, key string, rate float64, burst, keep int) (time.Duration, error) {
	keep, err := checkBucket(key, rate, burst, keep)
	if err != nil {
		return 0, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	now := s.now()
	var old bucket
	var at int64
	ok := true
	err = tx.QueryRowContext(ctx, `SELECT tokens, at FROM buckets WHERE key = ?`, key).Scan(&old.tokens, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		ok = false
	case err != nil:
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	old.at = time.Unix(0, at)
	b, wait := old.take(ok, now, rate, burst, keep)
	if wait > 0 {
		return wait, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO buckets (key, tokens, at, expires) VALUES (?, ?, ?, ?)`,
		key, b.tokens, b.at.UnixNano(), b.full(rate, burst).UnixNano()); err != nil {
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("state: sqlite: %w", err)
	}
	s.wrote(ctx)
	return 0, nil
}

// sessionColumns are the sessions table's columns in the order
// scanSession reads them.
const sessionColumns = `id, user, channel, thread_ts, agent, status, turns, tool_calls,
	input_tokens, output_tokens, cost_usd, started, duration, report, feedback, approvals`

// PutSession implements Store.
func (s *SQLite) PutSession(ctx context.Context, r SessionRecord) error {
	var started any // NULL: a zero time's UnixNano is undefined
	if !r.Started.IsZero() {
		started = r.Started.UnixNano()
	}
	_, err := s.exec(ctx, `INSERT OR REPLACE INTO sessions (`+sessionColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.User, r.Channel, r.ThreadTS, r.Agent, r.Status, r.Turns, r.ToolCalls,
		r.InputTokens, r.OutputTokens, r.CostUSD, started, int64(r.Duration), r.Report, encodeFeedback(r.Feedback),
		encodeApprovals(r.Approvals))
	if err != nil {
		return err
	}
	// A failed sweep is tried again with the next record; the record
	// itself was written.
	_ = s.deleteOld(ctx)
	return nil
}

// scanSession reads one row of sessionColumns.
func scanSession(row interface{ Scan(...any) error }) (SessionRecord, error) {
	var r SessionRecord
	var started sql.NullInt64
	var duration int64
	var feedback, approvals string
	err := row.Scan(&r.ID, &r.User, &r.Channel, &r.ThreadTS, &r.Agent, &r.Status, &r.Turns, &r.ToolCalls,
		&r.InputTokens, &r.OutputTokens, &r.CostUSD, &started, &duration, &r.Report, &feedback, &approvals)
	r.Feedback = decodeFeedback(feedback)
	r.Approvals = decodeApprovals(approvals)
	if started.Valid {
		r.Started = time.Unix(0, started.Int64)
	}
	r.Duration = time.Duration(duration)
	return r, err
}

// Session implements Store.
func (s *SQLite) Session(ctx context.Context, id string) (SessionRecord, bool, error) {
	r, err := scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return SessionRecord{}, false, nil
	}
	if err != nil {
		return SessionRecord{}, false, fmt.Errorf("state: sqlite: %w", err)
	}
	return r, true, nil
}

// Sessions implements Store. The WHERE clause names only the filter's set
// fields so that SQLite can pick the user or channel index.
func (s *SQLite) Sessions(ctx context.Context, f SessionFilter) ([]SessionRecord, error) {
	var where []string
	var args []any
	if f.User != "" {
		where, args = append(where, "user = ?"), append(args, f.User)
	}
	if f.Channel != "" {
		where, args = append(where, "channel = ?"), append(args, f.Channel)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "started >= ?"), append(args, f.Since.UnixNano())
	}
	q := `SELECT ` + sessionColumns + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started DESC, id LIMIT ?"
	rows, err := s.r.QueryContext(ctx, q, append(args, f.limit())...)
	if err != nil {
		return nil, fmt.Errorf("state: sqlite: %w", err)
	}
	defer rows.Close()
	out := []SessionRecord{}
	for rows.Next() {
		r, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("state: sqlite: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: sqlite: %w", err)
	}
	return out, nil
}

// SetFeedback implements Store. Reading the verdicts and writing them
// back is one transaction on the writer connection, so clicks landing at
// once do not lose each other.
func (s *SQLite) SetFeedback(ctx context.Context, id string, f Feedback) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state: sqlite: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	var stored string
	err = tx.QueryRowContext(ctx, `SELECT feedback FROM sessions WHERE id = ?`, id).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	if err != nil {
		return fmt.Errorf("state: sqlite: %w", err)
	}
	merged := encodeFeedback(mergeFeedback(decodeFeedback(stored), f))
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET feedback = ? WHERE id = ?`, merged, id); err != nil {
		return fmt.Errorf("state: sqlite: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state: sqlite: %w", err)
	}
	s.wrote(ctx)
	return nil
}

// Ping implements Store with a query that reads the schema but no row, on
// the readers' pool, so a long write does not delay it.
func (s *SQLite) Ping(ctx context.Context) error {
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM keys WHERE 0").Scan(&n); err != nil {
		if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
			return ErrClosed
		}
		return fmt.Errorf("state: sqlite does not answer: %w", err)
	}
	return nil
}

// Close implements Store.
func (s *SQLite) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}
