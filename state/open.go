package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/slackbot/slackbot/config"
)

// defaultPath is the SQLite file used when the configuration names none,
// relative to the working directory (config resolves a configured path
// against the config file's directory instead).
const defaultPath = "var/slackbot.db"

// Open returns the Store cfg.Backend names: "memory", "sqlite" (the
// default, at cfg.Path or defaultPath) or "redis" (at cfg.RedisURL),
// keeping session records for cfg.SessionRetention (for good when 0).
func Open(cfg config.State) (Store, error) {
	s, err := open(cfg)
	if err != nil {
		return nil, err
	}
	if r, ok := s.(Retainer); ok && cfg.SessionRetention > 0 {
		if err := r.SetRetention(context.Background(), cfg.SessionRetention.D()); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// open opens the backend cfg names.
func open(cfg config.State) (Store, error) {
	switch cfg.Backend {
	case "memory":
		return NewMemory(), nil
	case "", "sqlite":
		path := cfg.Path
		if path == "" {
			path = defaultPath
		}
		s, err := NewSQLite(path)
		if err != nil {
			return nil, err
		}
		return s, nil // not returned directly: a nil *SQLite must not become a non-nil Store
	case "redis":
		if cfg.RedisURL == "" {
			return nil, errors.New("state: the redis backend needs state.redis_url")
		}
		r, err := openRedis(cfg)
		if err != nil {
			return nil, err
		}
		return r, nil
	default:
		return nil, fmt.Errorf("state: unknown backend %q; use memory, sqlite or redis", cfg.Backend)
	}
}
