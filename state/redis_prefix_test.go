package state

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/state/redistest"
)

// openPrefixed opens the store the configuration describes: backend redis
// on srv under prefix, closed when t ends.
func openPrefixed(t *testing.T, srv *redistest.Server, prefix string) Store {
	t.Helper()
	s, err := Open(config.State{Backend: "redis", RedisURL: config.Secret(srv.URL()), RedisPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// useEverything writes one of each kind of state a session leaves: the
// event's dedup key, the thread's lease, a slot, the thread's mark, a
// counter and a session record.
func useEverything(t *testing.T, s Store, owner string) {
	t.Helper()
	ctx := context.Background()
	fresh := func(what string, ok bool, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !ok {
			t.Errorf("%s was already taken: another prefix's state was seen", what)
		}
	}
	ok, err := s.Once(ctx, "Ev1", time.Minute)
	fresh("dedup of Ev1", ok, err)
	ok, err = s.Lock(ctx, "lease:C1/1.0", owner, time.Minute)
	fresh("the lease of C1/1.0", ok, err)
	ok, err = s.Acquire(ctx, "sessions", owner, 1, time.Minute)
	fresh("the only session slot", ok, err)
	if err := s.Mark(ctx, "thread:C1/1.0", time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Add(ctx, "cost:U1", 0.5, time.Hour); err != nil || v != 0.5 {
		t.Errorf("the first add to cost:U1 gave %v, %v; want 0.5: another prefix's counter was seen", v, err)
	}
	if err := s.PutSession(ctx, SessionRecord{ID: "s-" + owner, User: "U1", Channel: "C1", Status: "success", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func TestRedisPrefixesKeepTwoBotsOnOneServerApart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	staging, production := openPrefixed(t, srv, "staging:"), openPrefixed(t, srv, "production:")

	// Each bot does everything a session does, as if alone on the server.
	useEverything(t, staging, "staging-1")
	useEverything(t, production, "production-1")
	for name, s := range map[string]Store{"staging": staging, "production": production} {
		recs, err := s.Sessions(ctx, SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 || recs[0].ID != "s-"+name+"-1" {
			t.Errorf("%s lists %+v; want its own record only", name, recs)
		}
		if _, found, err := s.Session(ctx, "s-staging-1"); err != nil || found != (name == "staging") {
			t.Errorf("%s finds staging's record: %v, %v", name, found, err)
		}
	}

	// Every key the bots wrote is under its own prefix.
	r, ok := staging.(*Redis)
	if !ok {
		t.Fatalf("Open gave a %T", staging)
	}
	keys, err := r.client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("the server holds no keys")
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "staging:") && !strings.HasPrefix(k, "production:") {
			t.Errorf("key %q is under neither bot's prefix", k)
		}
	}

	// A second replica of staging shares staging's state.
	replica := openPrefixed(t, srv, "staging:")
	if ok, err := replica.Once(ctx, "Ev1", time.Minute); err != nil || ok {
		t.Errorf("staging's replica took Ev1 as new (%v, %v): the same prefix must share dedup", ok, err)
	}
	if ok, err := replica.Lock(ctx, "lease:C1/1.0", "staging-2", time.Minute); err != nil || ok {
		t.Errorf("staging's replica took a lease staging holds (%v, %v)", ok, err)
	}
	if ok, err := replica.Acquire(ctx, "sessions", "staging-2", 1, time.Minute); err != nil || ok {
		t.Errorf("staging's replica took a second slot of one (%v, %v)", ok, err)
	}
	if ok, err := replica.Marked(ctx, "thread:C1/1.0"); err != nil || !ok {
		t.Errorf("staging's replica does not see staging's thread (%v, %v)", ok, err)
	}
	if v, err := replica.Get(ctx, "cost:U1"); err != nil || v != 0.5 {
		t.Errorf("staging's replica reads cost:U1 = %v, %v; want 0.5", v, err)
	}
	if _, found, err := replica.Session(ctx, "s-staging-1"); err != nil || !found {
		t.Errorf("staging's replica does not find staging's record (%v, %v)", found, err)
	}
}

func TestOpenRedisWithoutAPrefixUsesTheDefault(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := openPrefixed(t, srv, "")
	if err := s.Mark(context.Background(), "thread:C1/1.0", time.Minute); err != nil {
		t.Fatal(err)
	}
	keys, err := s.(*Redis).client.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !strings.HasPrefix(keys[0], defaultRedisPrefix) {
		t.Errorf("keys %q; want one under %q", keys, defaultRedisPrefix)
	}
}
