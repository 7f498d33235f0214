package state

import (
	"context"
	"fmt"
)

// progressSchema holds the live progress messages; created on open beside
// schema, so files of earlier releases gain it.
const progressSchema = `
CREATE TABLE IF NOT EXISTS progress (
	session TEXT PRIMARY KEY,
	channel TEXT NOT NULL,
	ts      TEXT NOT NULL,
	owner   TEXT NOT NULL
) WITHOUT ROWID;
`

// PutProgress implements Store.
func (s *SQLite) PutProgress(ctx context.Context, p Progress) error {
	if err := p.check(); err != nil {
		return err
	}
	_, err := s.exec(ctx, `INSERT OR REPLACE INTO progress (session, channel, ts, owner) VALUES (?, ?, ?, ?)`,
		p.Session, p.Channel, p.TS, p.Owner)
	return err
}

// DropProgress implements Store.
func (s *SQLite) DropProgress(ctx context.Context, session string) error {
	_, err := s.exec(ctx, `DELETE FROM progress WHERE session = ?`, session)
	return err
}

// Progresses implements Store.
func (s *SQLite) Progresses(ctx context.Context) ([]Progress, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT session, channel, ts, owner FROM progress ORDER BY session`)
	if err != nil {
		return nil, fmt.Errorf("state: sqlite: %w", err)
	}
	defer rows.Close()
	out := []Progress{}
	for rows.Next() {
		var p Progress
		if err := rows.Scan(&p.Session, &p.Channel, &p.TS, &p.Owner); err != nil {
			return nil, fmt.Errorf("state: sqlite: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: sqlite: %w", err)
	}
	return out, nil
}
