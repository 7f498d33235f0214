package state

import (
	"fmt"
	"math"
	"time"
)

// bucket is a token bucket as Memory and SQLite keep it: the tokens left
// at the time of the last take. Redis computes the same step in Lua.
type bucket struct {
	tokens float64
	at     time.Time
}

// checkBucket refuses arguments no bucket can honour and clamps keep to
// what the bucket can ever hold.
func checkBucket(key string, rate float64, burst, keep int) (int, error) {
	if !(rate > 0) || math.IsInf(rate, 0) || burst < 1 {
		return 0, fmt.Errorf("state: bucket %q: rate must be positive and burst at least 1 (got %v, %d)", key, rate, burst)
	}
	return min(max(keep, 0), burst-1), nil
}

// take refills b up to now and takes a token when more than keep are
// left. A bucket never seen (ok false) starts full. It returns the bucket
// to store (unchanged unless a token was taken) and the wait.
func (b bucket) take(ok bool, now time.Time, rate float64, burst, keep int) (bucket, time.Duration) {
	tokens := float64(burst)
	if ok {
		tokens = min(float64(burst), b.tokens+now.Sub(b.at).Seconds()*rate)
	}
	need := float64(keep + 1)
	if tokens < need {
		return b, time.Duration(math.Ceil((need - tokens) / rate * float64(time.Second)))
	}
	return bucket{tokens: tokens - 1, at: now}, 0
}

// full is when the bucket will be full again, after which it can be
// forgotten: a bucket never seen starts full.
func (b bucket) full(rate float64, burst int) time.Time {
	return b.at.Add(time.Duration((float64(burst) - b.tokens) / rate * float64(time.Second)))
}
