package state

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/state/redistest"
)

func TestRedisOnceRetriedWithItsOwnTokenStillReportsFirst(t *testing.T) {
	t.Parallel()
	r := newTestRedis(t)
	ctx := context.Background()
	key := []string{r.keyKey("event:Ev1")}
	// go-redis sends the same call again when the reply to the first was
	// lost: the retry must not read its own write as a duplicate.
	for i, want := range []int{1, 1} {
		n, err := onceScript.Run(ctx, r.client, key, "token-a", 60000).Int()
		if err != nil || n != want {
			t.Fatalf("attempt %d with the same token = %d, %v; want %d", i, n, err, want)
		}
	}
	if n, err := onceScript.Run(ctx, r.client, key, "token-b", 60000).Int(); err != nil || n != 0 {
		t.Fatalf("another caller = %d, %v; want 0 (a duplicate)", n, err)
	}
	if first, err := r.Once(ctx, "event:Ev1", time.Minute); err != nil || first {
		t.Fatalf("Once on a recorded event = %v, %v; want false", first, err)
	}
	var st Store = r
	tok, ok := st.(TokenOnce)
	if !ok {
		t.Fatal("the Redis store does not offer OnceToken")
	}
	for i, want := range []bool{true, true} {
		if first, err := tok.OnceToken(ctx, "event:Ev2", "env-1", time.Minute); err != nil || first != want {
			t.Fatalf("OnceToken attempt %d with one envelope's token = %v, %v; want %v", i, first, err, want)
		}
	}
	if first, err := tok.OnceToken(ctx, "event:Ev2", "env-2", time.Minute); err != nil || first {
		t.Fatalf("OnceToken for a redelivery = %v, %v; want false", first, err)
	}
}

func TestRedisStoreFailsWhileTheServerIsDownAndRemembersEventsAfter(t *testing.T) {
	t.Parallel()
	srv := redistest.StartPersistent(t)
	r := dialRedis(t, srv, newRedisPrefix(t))
	ctx := context.Background()
	if first, err := r.Once(ctx, "event:Ev1", time.Hour); err != nil || !first {
		t.Fatalf("Once = %v, %v", first, err)
	}
	srv.Down()
	if _, err := r.Once(ctx, "event:Ev2", time.Hour); err == nil {
		t.Fatal("Once succeeded with the server down")
	} else if strings.Contains(err.Error(), "redis://") {
		t.Fatalf("the error repeats the URL: %v", err)
	}
	srv.Up(t)
	wait.Eventually(t, "the store to work again", func() bool {
		_, err := r.Marked(ctx, "x")
		return err == nil
	}, wait.Within(10*time.Second))
	if first, err := r.Once(ctx, "event:Ev1", time.Hour); err != nil || first {
		t.Fatalf("Once after the outage on an event recorded before = %v, %v; want false: a persistent server keeps it", first, err)
	}
}

func TestRedisClientFailsFastUnlessTheURLSaysOtherwise(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url        string
		dial, read time.Duration
		retries    int
	}{
		{"redis://127.0.0.1:6379/0", redisCallDialTimeout, redisIOTimeout, 1},
		{"redis://127.0.0.1:6379/0?dial_timeout=9s&read_timeout=7s&max_retries=4", 9 * time.Second, 7 * time.Second, 4},
	} {
		opts, err := redis.ParseURL(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		failFast(opts)
		if opts.DialTimeout != tc.dial || opts.ReadTimeout != tc.read || opts.MaxRetries != tc.retries ||
			opts.WriteTimeout == 0 || opts.PoolTimeout == 0 || opts.DialerRetries != 2 || !opts.ContextTimeoutEnabled {
			t.Errorf("%s: dial %s read %s write %s pool %s retries %d dialer retries %d context deadlines %v",
				tc.url, opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.PoolTimeout, opts.MaxRetries, opts.DialerRetries, opts.ContextTimeoutEnabled)
		}
	}
}
