package state

import (
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// How the Redis client behaves while the server is away. The bot retries
// what it must itself, with backoff and a bound (see the slack package), so
// one call should fail in a second or two rather than wait out go-redis's
// defaults (a 5 s dial, three retries). A URL that sets one of these
// (dial_timeout=…, read_timeout=…, …) keeps its own value.
const (
	redisCallDialTimeout = 2 * time.Second
	redisIOTimeout       = 2 * time.Second
	redisPoolTimeout     = 3 * time.Second
)

// failFast sets the client's timeouts and retries for an outage: calls
// while the server is down fail within a few seconds, calls honour their
// context's deadline, and one retry covers a connection the server closed
// when it restarted. go-redis reconnects by itself once the server is back.
func failFast(opts *redis.Options) {
	if opts.DialTimeout == 0 {
		opts.DialTimeout = redisCallDialTimeout
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = redisIOTimeout
	}
	if opts.WriteTimeout == 0 {
		opts.WriteTimeout = redisIOTimeout
	}
	if opts.PoolTimeout == 0 {
		opts.PoolTimeout = redisPoolTimeout
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 1
	}
	if opts.DialerRetries == 0 {
		opts.DialerRetries = 2
	}
	opts.ContextTimeoutEnabled = true
}

// onceScript records KEYS[1] for ARGV[2] ms with the caller's token
// ARGV[1] and reports 1 when it was absent, or already held that token. A
// call retried after its first attempt's reply was lost — by go-redis, or
// by the caller with the same token — therefore still reports "first":
// with SETNX it would read its own write as a duplicate and the event
// would never be answered.
var onceScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if v == ARGV[1] then
  return 1
end
return 0`)

// onceToken is a value no other Once call writes: a Once without a token
// of the caller's is still safe against go-redis's own retry.
func onceToken() string { return rand.Text() }

// quietRedis drops go-redis's own log lines. It writes one for every failed
// dial, to the standard logger, which would flood the bot's log while the
// server is away; the store's errors carry the same cause, and the bot logs
// those once per kind of call.
type quietRedis struct{}

// quietOnce installs quietRedis once, before the first client is made:
// go-redis keeps one logger for the whole process.
var quietOnce sync.Once

func (quietRedis) Printf(context.Context, string, ...any) {}
