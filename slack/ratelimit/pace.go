package ratelimit

import (
	"cmp"
	"context"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// progressShare is the share of chat.update's budget that progress
// refreshes may use together; the rest is headroom for answers written in
// place, "queued" and "interrupted" notes, and the slack that bursts need.
const progressShare = 0.6

// Pacer spreads chat.update's budget over the progress messages being
// kept fresh: with n of them and a budget of r calls a second, each is
// refreshed at most every n / (progressShare × r), and never more often
// than Base. The Transport's queue is first come, first served within a
// priority, so at that pace every session gets its turn.
// n counts the progress messages of every replica sharing the state store
// (see Count), or this replica's alone when that is more.
type Pacer struct {
	// Base is the least time between two refreshes of one progress
	// message, however light the load.
	Base time.Duration
	// Rate is chat.update's budget now, calls a second (Transport.Rate);
	// nil or 0 when unlimited.
	Rate func() float64
	// Beat is how often the replicas count together; fleetBeat when zero.
	Beat time.Duration
	// Cause renders the store's errors for the log without hosts or
	// secrets; nil logs no cause.
	Cause func(error) string

	mu    sync.Mutex
	live  int // this replica's progress messages
	fleet int // every replica's, as last counted
}

// fleetBeat is how often the replicas count their progress messages
// together.
const fleetBeat = time.Second

// fleetStale is how many beats without a count the fleet's last count is
// trusted; after that the replica paces its own progress messages alone
// until the store counts again.
const fleetStale = 3

// Counters are counters shared by the replicas, that expire.
type Counters interface {
	// Add adds delta to the counter key and returns the new total; an
	// absent or expired counter starts at 0 and expires ttl later.
	Add(ctx context.Context, key string, delta float64, ttl time.Duration) (float64, error)
	// Get returns the counter key, 0 when it is absent or expired.
	Get(ctx context.Context, key string) (float64, error)
}

// Count keeps the fleet's count up to date until ctx ends. Once a beat,
// each replica adds its own count to that beat's counter in st and reads
// the previous beat's total, to which every replica added once. A count that
// takes longer than a beat is given up: it would be out of date.
func (p *Pacer) Count(ctx context.Context, st Counters, team string, log *zap.Logger) {
	beatLen := cmp.Or(p.Beat, fleetBeat)
	t := time.NewTicker(beatLen / 4)
	defer t.Stop()
	last := int64(-1)
	counted := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		beat := time.Now().UnixNano() / int64(beatLen)
		if beat == last {
			continue
		}
		last = beat
		p.mu.Lock()
		live := p.live
		p.mu.Unlock()
		key := "progress-live:" + team + ":"
		cctx, cancel := context.WithTimeout(ctx, beatLen)
		_, err := st.Add(cctx, key+strconv.FormatInt(beat, 10), float64(live), 3*beatLen)
		var total float64
		if err == nil {
			total, err = st.Get(cctx, key+strconv.FormatInt(beat-1, 10))
		}
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Debug("progress messages not counted across replicas", causeField(p.Cause, err))
			if time.Since(counted) >= fleetStale*beatLen {
				p.mu.Lock()
				p.fleet = 0
				p.mu.Unlock()
			}
			continue
		}
		counted = time.Now()
		p.mu.Lock()
		p.fleet = int(total)
		p.mu.Unlock()
	}
}

// Join counts one more progress message kept fresh.
func (p *Pacer) Join() {
	p.mu.Lock()
	p.live++
	p.mu.Unlock()
}

// Leave counts one progress message fewer.
func (p *Pacer) Leave() {
	p.mu.Lock()
	p.live--
	p.mu.Unlock()
}

// Live is how many progress messages this replica keeps fresh.
func (p *Pacer) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// Interval is the least time between two refreshes of one progress
// message at the current load.
func (p *Pacer) Interval() time.Duration {
	p.mu.Lock()
	live := max(p.live, p.fleet)
	p.mu.Unlock()
	rate := 0.0
	if p.Rate != nil {
		rate = p.Rate()
	}
	return stretch(p.Base, live, rate)
}

// stretch is the refresh interval of each of live progress messages
// sharing a budget of rate calls a second.
func stretch(base time.Duration, live int, rate float64) time.Duration {
	if rate <= 0 || live <= 0 {
		return base
	}
	iv := time.Duration(float64(live) / (progressShare * rate) * float64(time.Second))
	return max(base, iv)
}

// causeField is err for the log as cause renders it, or nothing without
// cause: a store's raw error may name its host.
func causeField(cause func(error) string, err error) zap.Field {
	if cause == nil {
		return zap.Skip()
	}
	return zap.String("error", cause(err))
}
