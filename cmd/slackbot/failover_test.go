package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slackbot/slackbot/state/redistest"
)

// TestWithTheDefaultLeaseAKilledReplicasThreadsAreTakenOverWithinThirtySeconds
// runs two replicas with the default state.lease_ttl. The first, alone at
// the time, takes two questions and is SIGKILLed while both are at the
// model. A follow-up in one thread, sent at once, shows "Queued" on the
// survivor and is answered within 30 s of the kill; the other thread,
// where nobody writes again, has its progress message settled within 30 s
// too.
func TestWithTheDefaultLeaseAKilledReplicasThreadsAreTakenOverWithinThirtySeconds(t *testing.T) {
	t.Parallel()
	never := make(chan struct{}) // the victim's questions are never answered
	f := newFleet(t, redistest.Start(t), 4, "", 0, func(q string) <-chan struct{} {
		if strings.Contains(q, "q001") || strings.Contains(q, "q003") {
			return never
		}
		return nil
	})
	victim := f.start("a")
	f.connected(1, victim)
	f.srv.AddChannel("C0ONE", "team", true)
	followed := f.srv.Mention("C0ONE", "U0ASKER", "t01 q001 a long one")
	quiet := f.srv.Mention("C0ONE", "U0ASKER", "t02 q003 another long one")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.gauge.waitFor(ctx, func(g gaugeState) bool { return g.calls == 2 }); err != nil {
		t.Fatalf("the questions never reached the model:%s", logs(victim))
	}
	survivor := f.start("b")
	f.connected(2, victim, survivor)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	killed := time.Now()
	f.connected(1, survivor)

	f.srv.Reply("C0ONE", followed, "U0ASKER", fmt.Sprintf("<@%s> t01 q002 are you there?", f.srv.BotUserID()))
	queued := false
	if err := f.srv.WaitFor(ctx, func() bool {
		for _, m := range f.srv.Thread("C0ONE", followed) {
			queued = queued || m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), "Queued")
		}
		return f.answers("C0ONE", followed, "q002") > 0
	}); err != nil {
		t.Fatalf("the follow-up was never answered:%s", logs(survivor))
	}
	answeredIn := time.Since(killed)
	if err := f.srv.WaitFor(ctx, func() bool { return len(f.working("C0ONE", quiet)) == 0 }); err != nil {
		t.Fatalf("the quiet thread's progress message still says it is working:%s", logs(survivor))
	}
	settledIn := time.Since(killed)
	t.Logf("after the kill: follow-up answered in %s, the quiet thread's progress settled in %s", answeredIn.Round(100*time.Millisecond), settledIn.Round(100*time.Millisecond))
	if answeredIn >= 30*time.Second {
		t.Errorf("the follow-up was answered %s after the kill; want under 30 s", answeredIn)
	}
	if settledIn >= 30*time.Second {
		t.Errorf("the quiet thread's progress message was settled %s after the kill; want under 30 s", settledIn)
	}
	if !queued {
		t.Error("the follow-up never showed it was queued while the dead replica's lease ran out")
	}
	if w := f.working("C0ONE", followed); len(w) > 0 {
		t.Errorf("the followed thread still has a working progress message: %q", w)
	}
	for _, ts := range []string{followed, quiet} {
		closed := false
		for _, m := range f.srv.Thread("C0ONE", ts) {
			closed = closed || m.BotID != "" && strings.Contains(m.Text+string(m.Blocks), "the bot stopped while working on this")
		}
		if !closed {
			t.Errorf("no note replaced the dead session's progress message in thread %s", ts)
		}
	}
}
