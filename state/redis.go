package state

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/redact"
)

// Redis is a Store in a Redis server that several replicas share: every
// replica pointed at the same server and prefix sees the others' dedup
// keys, leases, slots, counters and session records. Leases, slots and
// counters change in Lua scripts, so each call is one atomic step on the
// server, and expiry is judged by the server's clock, never a replica's.
//
// Redis needs Redis 6.2 or later, one server (or a primary with replicas)
// and not Redis Cluster: the session scripts touch index keys they derive
// themselves.
type Redis struct {
	client *redis.Client
	prefix string
	// retention is how long session records are kept (SetRetention).
	retention retention
}

// defaultRedisPrefix starts every key the bot writes when no prefix is
// configured, so the bot can share a Redis server with other applications.
const defaultRedisPrefix = config.DefaultRedisPrefix

// redisDialTimeout bounds the first PING of openRedis, so a bot pointed at
// an unreachable server stops at startup instead of hanging.
const redisDialTimeout = 5 * time.Second

// openRedis opens the store that config.State describes with backend
// "redis": at redis_url, every key under redis_prefix.
func openRedis(cfg config.State) (*Redis, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisDialTimeout)
	defer cancel()
	return DialRedis(ctx, cfg.RedisURL.Reveal(), cfg.RedisPrefix)
}

// DialRedis connects to the Redis server at rawURL (redis:// or rediss://,
// with an optional user, password and database number) and checks that it
// answers. Every key is stored under prefix ("" means defaultRedisPrefix).
// The URL may carry a password, so no error repeats it.
func DialRedis(ctx context.Context, rawURL, prefix string) (*Redis, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		// url.Error quotes the whole URL, password included: keep only
		// what is wrong with it.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("state: redis_url is not a usable redis:// or rediss:// URL: %w", err)
	}
	// Maintenance notifications are a Redis Enterprise feature; asking a
	// plain server for them only adds a failed command to every connection.
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	failFast(opts)
	quietOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("state: the redis server of state.redis_url does not answer: %s", redact.Cause(err))
	}
	return NewRedis(client, prefix), nil
}

// NewRedis returns a store on an existing client, with every key under
// prefix ("" means defaultRedisPrefix). Close closes the client.
func NewRedis(client *redis.Client, prefix string) *Redis {
	quietOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	if prefix == "" {
		prefix = defaultRedisPrefix
	}
	return &Redis{client: client, prefix: prefix}
}

// Keys. Once, Lock and Mark share one namespace, as they do in Memory.
func (r *Redis) keyKey(key string) string        { return r.prefix + "key:" + key }
func (r *Redis) slotKey(name string) string      { return r.prefix + "slots:" + name }
func (r *Redis) counterKey(key string) string    { return r.prefix + "counter:" + key }
func (r *Redis) bucketKey(key string) string     { return r.prefix + "bucket:" + key }
func (r *Redis) sessionKey(id string) string     { return r.prefix + "session:" + id }
func (r *Redis) sessionsKey() string             { return r.prefix + "sessions" }
func (r *Redis) userKey(user string) string      { return r.prefix + "sessions:user:" + user }
func (r *Redis) channelKey(ch string) string     { return r.prefix + "sessions:channel:" + ch }
func (r *Redis) indexPrefixes() (string, string) { return r.userKey(""), r.channelKey("") }

// millis is ttl in whole milliseconds, rounded up and at least 1: Redis
// rejects a zero expiry, and rounding down would let a short lease lapse
// early.
func millis(ttl time.Duration) int64 {
	ms := int64((ttl + time.Millisecond - 1) / time.Millisecond)
	return max(ms, 1)
}

// Once implements Store.
func (r *Redis) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return r.OnceToken(ctx, key, onceToken(), ttl)
}

// OnceToken implements TokenOnce.
func (r *Redis) OnceToken(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	n, err := onceScript.Run(ctx, r.client, []string{r.keyKey(key)}, token, millis(ttl)).Int()
	if err != nil {
		return false, fmt.Errorf("state: once %q: %w", key, err)
	}
	return n == 1, nil
}

// lockScript takes the lease KEYS[1] for owner ARGV[1] for ARGV[2] ms when
// it is free or already the owner's.
var lockScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`)

// unlockScript deletes the lease KEYS[1] only when owner ARGV[1] holds it.
var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// Lock implements Store.
func (r *Redis) Lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	n, err := lockScript.Run(ctx, r.client, []string{r.keyKey(key)}, owner, millis(ttl)).Int()
	if err != nil {
		return false, fmt.Errorf("state: lock %q: %w", key, err)
	}
	return n == 1, nil
}

// Unlock implements Store.
func (r *Redis) Unlock(ctx context.Context, key, owner string) error {
	if err := unlockScript.Run(ctx, r.client, []string{r.keyKey(key)}, owner).Err(); err != nil {
		return fmt.Errorf("state: unlock %q: %w", key, err)
	}
	return nil
}

// Mark implements Store.
func (r *Redis) Mark(ctx context.Context, key string, ttl time.Duration) error {
	if err := r.client.Set(ctx, r.keyKey(key), "", time.Duration(millis(ttl))*time.Millisecond).Err(); err != nil {
		return fmt.Errorf("state: mark %q: %w", key, err)
	}
	return nil
}

// Marked implements Store.
func (r *Redis) Marked(ctx context.Context, key string) (bool, error) {
	n, err := r.client.Exists(ctx, r.keyKey(key)).Result()
	if err != nil {
		return false, fmt.Errorf("state: marked %q: %w", key, err)
	}
	return n == 1, nil
}

// acquireScript keeps the semaphore KEYS[1] as a sorted set of holder →
// expiry (server milliseconds). It drops expired holders, then renews
// holder ARGV[1]'s slot or adds one when fewer than ARGV[2] are held, for
// ARGV[3] ms. The set itself expires when its last slot would.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1`)

// Acquire implements Store.
func (r *Redis) Acquire(ctx context.Context, name, holder string, limit int, ttl time.Duration) (bool, error) {
	n, err := acquireScript.Run(ctx, r.client, []string{r.slotKey(name)}, holder, limit, millis(ttl)).Int()
	if err != nil {
		return false, fmt.Errorf("state: acquire a slot of %q: %w", name, err)
	}
	return n == 1, nil
}

// Release implements Store.
func (r *Redis) Release(ctx context.Context, name, holder string) error {
	if err := r.client.ZRem(ctx, r.slotKey(name), holder).Err(); err != nil {
		return fmt.Errorf("state: release a slot of %q: %w", name, err)
	}
	return nil
}

// addScript adds ARGV[1] to the counter KEYS[1]; a counter it creates
// expires ARGV[2] ms later, and later adds leave that expiry alone. The sum
// is a Lua number, an IEEE double like Go's float64, written with 17
// digits so that it reads back exactly: INCRBYFLOAT would add in long
// double and round to 17 digits, so Redis and Memory would disagree on
// sums like 0.1+0.2.
var addScript = redis.NewScript(`
local v = tonumber(ARGV[1])
local cur = redis.call('GET', KEYS[1])
if cur then
  v = tonumber(cur) + v
  redis.call('SET', KEYS[1], string.format('%.17g', v), 'KEEPTTL')
else
  redis.call('SET', KEYS[1], string.format('%.17g', v), 'PX', ARGV[2])
end
return string.format('%.17g', v)`)

// Add implements Store.
func (r *Redis) Add(ctx context.Context, key string, delta float64, ttl time.Duration) (float64, error) {
	d := strconv.FormatFloat(delta, 'g', -1, 64)
	s, err := addScript.Run(ctx, r.client, []string{r.counterKey(key)}, d, millis(ttl)).Text()
	if err != nil {
		return 0, fmt.Errorf("state: add to %q: %w", key, err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("state: counter %q holds %q: %w", key, s, err)
	}
	return v, nil
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, key string) (float64, error) {
	s, err := r.client.Get(ctx, r.counterKey(key)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state: get %q: %w", key, err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("state: counter %q holds %q: %w", key, s, err)
	}
	return v, nil
}

// Ping implements Store with Redis's PING.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		if errors.Is(err, redis.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("state: redis does not answer: %w", err)
	}
	return nil
}

// takeScript is one step of the token bucket KEYS[1], a hash of the
// tokens left after the last take and its time in server microseconds:
// refill at ARGV[1] tokens a second up to ARGV[2] (a bucket never seen is
// full), take one when more than ARGV[3] are left and return 0, else
// return the microseconds until there will be. The hash expires when the
// bucket would be full again.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local need = tonumber(ARGV[3]) + 1
local tokens = burst
local v = redis.call('HMGET', KEYS[1], 'tokens', 'at')
if v[1] and v[2] then
  tokens = math.min(burst, tonumber(v[1]) + (now - tonumber(v[2])) * rate / 1000000)
end
if tokens < need then
  return math.ceil((need - tokens) / rate * 1000000)
end
tokens = tokens - 1
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1)
return 0`)

// Take implements Store.
func (r *Redis) Take(ctx context.Context, key string, rate float64, burst, keep int) (time.Duration, error) {
	keep, err := checkBucket(key, rate, burst, keep)
	if err != nil {
		return 0, err
	}
	us, err := takeScript.Run(ctx, r.client, []string{r.bucketKey(key)},
		strconv.FormatFloat(rate, 'g', -1, 64), burst, keep).Int64()
	if err != nil {
		return 0, fmt.Errorf("state: take from bucket %q: %w", key, err)
	}
	return time.Duration(us) * time.Microsecond, nil
}

// Close implements Store: it closes the client.
func (r *Redis) Close() error { return r.client.Close() }
