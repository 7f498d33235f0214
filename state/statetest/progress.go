package statetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/slackbot/slackbot/state"
)

// progressed fails the test on an error and returns the records.
func progressed(t *testing.T) func([]state.Progress, error) []state.Progress {
	return check[[]state.Progress](t)
}

var progressTests = []test{
	{"progress records are listed by session, replaced by session and dropped", func(t *testing.T, s state.Store) {
		if got := progressed(t)(s.Progresses(ctx)); len(got) != 0 {
			t.Fatalf("an empty store lists %v", got)
		}
		a := state.Progress{Session: "S2", Channel: "C1", TS: "1.2", Owner: "replica-a"}
		b := state.Progress{Session: "S1", Channel: "C2", TS: "3.4", Owner: "replica-b"}
		for _, p := range []state.Progress{a, b} {
			if err := s.PutProgress(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if got := progressed(t)(s.Progresses(ctx)); !reflect.DeepEqual(got, []state.Progress{b, a}) {
			t.Fatalf("Progresses = %v, want %v", got, []state.Progress{b, a})
		}
		// A stream's record is replaced with the tasks it still shows
		// running, and read back with them.
		a.TS, a.Owner = "5.6", "replica-c"
		a.Tasks = []state.OpenTask{{ID: "t2", Title: "Searching code"}, {ID: "t3", Title: "researcher › Reading a large result"}}
		if err := s.PutProgress(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := s.DropProgress(ctx, b.Session); err != nil {
			t.Fatal(err)
		}
		if err := s.DropProgress(ctx, "never-recorded"); err != nil {
			t.Fatalf("dropping an unknown record: %v", err)
		}
		if got := progressed(t)(s.Progresses(ctx)); !reflect.DeepEqual(got, []state.Progress{a}) {
			t.Fatalf("after a replacement and a drop, Progresses = %v, want %v", got, []state.Progress{a})
		}
	}},
	{"a progress record without a place or an owner is refused", func(t *testing.T, s state.Store) {
		if err := s.PutProgress(ctx, state.Progress{Session: "S1", Channel: "C1", TS: "1.2"}); err == nil {
			t.Fatal("a record without an owner was accepted")
		}
		if got := progressed(t)(s.Progresses(ctx)); len(got) != 0 {
			t.Fatalf("a refused record is listed: %v", got)
		}
	}},
}

var retentionTests = []test{
	{"session records older than the retention are forgotten and newer ones kept", func(t *testing.T, s state.Store) {
		r, ok := retainer(s)
		if !ok {
			t.Fatalf("%T keeps session records for good: it must implement state.Retainer", s)
		}
		now := time.Now().Unix()
		before := record("before", "U1", "C1", now-3*3600) // recorded before the retention was set
		if err := s.PutSession(ctx, before); err != nil {
			t.Fatal(err)
		}
		if err := r.SetRetention(ctx, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		old, fresh := record("old", "U1", "C1", now-3*3600), record("fresh", "U1", "C1", now-3600)
		for _, rec := range []state.SessionRecord{old, fresh} {
			if err := s.PutSession(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
		if truth(t)(sessionOf(s, "old")) {
			t.Error("a record older than the retention is still read")
		}
		if !truth(t)(sessionOf(s, "fresh")) {
			t.Error("a record within the retention is gone")
		}
		for _, f := range []state.SessionFilter{{}, {User: "U1"}, {Channel: "C1"}} {
			got := ids(listed(t)(s.Sessions(ctx, f)))
			for _, id := range got {
				if id == "old" {
					t.Errorf("Sessions(%+v) = %v: lists a record older than the retention", f, got)
				}
			}
			if len(got) == 0 || got[0] != "fresh" {
				t.Errorf("Sessions(%+v) = %v, want the fresh record first", f, got)
			}
		}
		if err := r.SetRetention(ctx, -time.Hour); err == nil {
			t.Error("a negative retention was accepted")
		}
	}},
}

// sessionOf is Session with found as the value check passes on.
func sessionOf(s state.Store, id string) (bool, error) {
	_, found, err := s.Session(ctx, id)
	return found, err
}

// retainer is s as a Retainer.
func retainer(s state.Store) (state.Retainer, bool) {
	r, ok := s.(state.Retainer)
	return r, ok
}
