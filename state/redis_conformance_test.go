package state_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
	"github.com/slackbot/slackbot/state/statetest"
)

// TestRedisConforms runs the suite against one real redis-server; each
// subtest's store has a prefix of its own, so they share the server and
// start empty.
func TestRedisConforms(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var n atomic.Int64
	statetest.Run(t, func(t *testing.T) state.Store {
		s, err := state.DialRedis(context.Background(), srv.URL(), fmt.Sprintf("conformance%d:", n.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// BenchmarkRedisSession is one session's dedup, lease and slot against a
// local redis-server.
func BenchmarkRedisSession(b *testing.B) {
	srv := redistest.Start(b)
	var n atomic.Int64
	statetest.Bench(b, func(b *testing.B) state.Store {
		s, err := state.DialRedis(context.Background(), srv.URL(), fmt.Sprintf("bench%d:", n.Add(1)))
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
