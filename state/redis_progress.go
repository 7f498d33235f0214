package state

import (
	"context"
	"encoding/json"
	"fmt"
)

// progressKey is the hash of live progress messages: one field per
// session, its record as JSON. The set is small (the sessions running in
// the fleet), so listing it is one HGETALL.
func (r *Redis) progressKey() string { return r.prefix + "progress" }

// PutProgress implements Store.
func (r *Redis) PutProgress(ctx context.Context, p Progress) error {
	if err := p.check(); err != nil {
		return err
	}
	data, _ := json.Marshal(p) // strings always encode
	if err := r.client.HSet(ctx, r.progressKey(), p.Session, string(data)).Err(); err != nil {
		return fmt.Errorf("state: put progress: %w", err)
	}
	return nil
}

// DropProgress implements Store.
func (r *Redis) DropProgress(ctx context.Context, session string) error {
	if err := r.client.HDel(ctx, r.progressKey(), session).Err(); err != nil {
		return fmt.Errorf("state: drop progress: %w", err)
	}
	return nil
}

// Progresses implements Store. A field that does not read as a record
// (written by hand, or by a later release) is left out.
func (r *Redis) Progresses(ctx context.Context) ([]Progress, error) {
	m, err := r.client.HGetAll(ctx, r.progressKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("state: list progress: %w", err)
	}
	out := make([]Progress, 0, len(m))
	for _, v := range m {
		var p Progress
		if json.Unmarshal([]byte(v), &p) == nil && p.check() == nil {
			out = append(out, p)
		}
	}
	sortProgress(out)
	return out, nil
}
