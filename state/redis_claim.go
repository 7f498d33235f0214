package state

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// claimScript is lockScript then acquireScript in one round trip: the
// lease KEYS[1] for owner ARGV[1], and when that is taken a slot of the
// semaphore KEYS[2] for holder ARGV[3] among ARGV[4], both for ARGV[2] ms.
// It returns 0 without the lease, 1 with the lease alone, 2 with both.
var claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v ~= false and v ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if not redis.call('ZSCORE', KEYS[2], ARGV[3]) and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return 1
end
redis.call('ZADD', KEYS[2], now + ttl, ARGV[3])
if redis.call('PTTL', KEYS[2]) < ttl then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 2`)

// unclaimScript gives back holder ARGV[2]'s slot of KEYS[2], then the
// lease KEYS[1] when owner ARGV[1] holds it.
var unclaimScript = redis.NewScript(`
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1`)

func (r *Redis) claim(ctx context.Context, c Claim) (lease, slot bool, err error) {
	n, err := claimScript.Run(ctx, r.client, []string{r.keyKey(c.Lease), r.slotKey(c.Slots)},
		c.Owner, millis(c.TTL), c.Holder, c.Limit).Int()
	if err != nil {
		return false, false, fmt.Errorf("state: claim %q and a slot of %q: %w", c.Lease, c.Slots, err)
	}
	return n >= 1, n == 2, nil
}

func (r *Redis) unclaim(ctx context.Context, c Claim) error {
	if err := unclaimScript.Run(ctx, r.client, []string{r.keyKey(c.Lease), r.slotKey(c.Slots)}, c.Owner, c.Holder).Err(); err != nil {
		return fmt.Errorf("state: release %q and a slot of %q: %w", c.Lease, c.Slots, err)
	}
	return nil
}
