package slack

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/state"
)

// progressShare is the share of chat.update's budget that progress
// refreshes may use together; the rest is headroom for answers written in
// place, "queued" and "interrupted" notes, and the slack that bursts need.
const progressShare = 0.6

// pacer spreads chat.update's budget over the progress messages being
// kept fresh: with n of them and a budget of r calls a second, each is
// refreshed at most every n / (progressShare × r), and never more often
// than slack.progress_interval. The limiter's queue is first come, first
// served within a priority, so at that pace every session gets its turn.
// n counts the progress messages of every replica sharing the state store
// (see count), or this replica's alone when that is more.
type pacer struct {
	base time.Duration
	rate func() float64 // chat.update's budget now, calls a second; 0 when unlimited
	beat time.Duration  // how often the replicas count together; 0 means fleetBeat

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

// count keeps fleet up to date until ctx ends. Once a beat, each replica
// adds its own count to that beat's counter in the store and reads the
// previous beat's total, to which every replica added once. A count that
// takes longer than a beat is given up: it would be out of date.
func (p *pacer) count(ctx context.Context, st state.Store, team string, log *zap.Logger) {
	beatLen := cmp.Or(p.beat, fleetBeat)
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
			log.Debug("progress messages not counted across replicas", zap.String("error", state.Cause(err)))
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

func (p *pacer) join() {
	p.mu.Lock()
	p.live++
	p.mu.Unlock()
}

func (p *pacer) leave() {
	p.mu.Lock()
	p.live--
	p.mu.Unlock()
}

// interval is the least time between two refreshes of one progress
// message at the current load.
func (p *pacer) interval() time.Duration {
	p.mu.Lock()
	live := max(p.live, p.fleet)
	p.mu.Unlock()
	return stretch(p.base, live, p.rate())
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

// slowed says, for the progress message, that updates come less often
// than configured; "" when they do not.
func slowed(base, iv time.Duration) string {
	if iv <= base*3/2 || iv < 2*time.Second {
		return ""
	}
	return fmt.Sprintf("busy: updates every %d s", int(iv.Round(time.Second)/time.Second))
}
