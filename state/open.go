package state

import (
	"errors"
	"fmt"

	"github.com/slackbot/slackbot/config"
)

// DefaultPath is the SQLite file used when the configuration names none,
// relative to the working directory (config resolves a configured path
// against the config file's directory instead).
const DefaultPath = "var/slackbot.db"

// ErrRedisNotBuilt is returned by Open for the redis backend while this
// build has no Redis implementation.
var ErrRedisNotBuilt = errors.New("state: redis backend not built")

// redisOpener opens the Redis backend. It is a variable only so that this
// package compiles before state/redis.go exists: that file sets it (from
// an init func) to its openRedis. Once redis.go is merged, Open should
// call openRedis directly and this variable should go.
var redisOpener func(config.State) (Store, error)

// Open returns the Store cfg.Backend names: "memory", "sqlite" (the
// default, at cfg.Path or DefaultPath) or "redis" (at cfg.RedisURL).
func Open(cfg config.State) (Store, error) {
	switch cfg.Backend {
	case "memory":
		return NewMemory(), nil
	case "", "sqlite":
		path := cfg.Path
		if path == "" {
			path = DefaultPath
		}
		s, err := NewSQLite(path)
		if err != nil {
			return nil, err
		}
		return s, nil // not returned directly: a nil *SQLite must not become a non-nil Store
	case "redis":
		if redisOpener == nil {
			return nil, ErrRedisNotBuilt
		}
		return redisOpener(cfg)
	default:
		return nil, fmt.Errorf("state: unknown backend %q; use memory, sqlite or redis", cfg.Backend)
	}
}
