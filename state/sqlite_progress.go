package state

import (
	"context"
	"encoding/json"
	"fmt"
)

// progressSchema holds the live progress messages; created on open beside
// schema, so files of earlier releases gain it.
const progressSchema = `
CREATE TABLE IF NOT EXISTS progress (
	session TEXT PRIMARY KEY,
	channel TEXT NOT NULL,
	ts      TEXT NOT NULL,
	owner   TEXT NOT NULL,
	tasks   TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
`

// PutProgress implements Store.
func (s *SQLite) PutProgress(ctx context.Context, p Progress) error {
	if err := p.check(); err != nil {
		return err
	}
	tasks := ""
	if len(p.Tasks) > 0 {
		b, _ := json.Marshal(p.Tasks) // strings always encode
		tasks = string(b)
	}
	_, err := s.exec(ctx, `INSERT OR REPLACE INTO progress (session, channel, ts, owner, tasks) VALUES (?, ?, ?, ?, ?)`,
		p.Session, p.Channel, p.TS, p.Owner, tasks)
	return err
}

// DropProgress implements Store.
func (s *SQLite) DropProgress(ctx context.Context, session string) error {
	_, err := s.exec(ctx, `DELETE FROM progress WHERE session = ?`, session)
	return err
}

// Progresses implements Store.
func (s *SQLite) Progresses(ctx context.Context) ([]Progress, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT session, channel, ts, owner, tasks FROM progress ORDER BY session`)
	if err != nil {
		return nil, fmt.Errorf("state: sqlite: %w", err)
	}
	defer rows.Close()
	out := []Progress{}
	for rows.Next() {
		var p Progress
		var tasks string
		if err := rows.Scan(&p.Session, &p.Channel, &p.TS, &p.Owner, &tasks); err != nil {
			return nil, fmt.Errorf("state: sqlite: %w", err)
		}
		if tasks != "" && json.Unmarshal([]byte(tasks), &p.Tasks) != nil {
			p.Tasks = nil // written by a later release: the stream is still ended
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: sqlite: %w", err)
	}
	return out, nil
}
