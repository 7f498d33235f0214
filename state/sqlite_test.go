package state

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestSQLiteSurvivesARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "slackbot.db") // the directory is created
	s, err := NewSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := SessionRecord{ID: "S1", User: "U1", Channel: "C1", Status: "done", Turns: 2,
		Started: time.Unix(1_800_000_000, 5), Duration: time.Second, Report: "done"}
	steps := []func() error{
		func() error { return s.Mark(ctx, "C1/1.0", time.Hour) },
		func() error { _, err := s.Once(ctx, "Ev1", time.Hour); return err },
		func() error { _, err := s.Lock(ctx, "lease:C1/1.0", "replica-a", time.Hour); return err },
		func() error { _, err := s.Acquire(ctx, "sessions", "S1", 1, time.Hour); return err },
		func() error { _, err := s.Add(ctx, "tokens:U1", 42, time.Hour); return err },
		func() error { return s.PutSession(ctx, rec) },
		func() error {
			return s.SetFeedback(ctx, "S1", Feedback{User: "U2", Value: "positive", At: time.Unix(1_800_000_060, 7)})
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = NewSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checks := []struct {
		name string
		ok   func() (bool, error)
	}{
		{"the mark is remembered", func() (bool, error) { return s.Marked(ctx, "C1/1.0") }},
		{"the event is not new", func() (bool, error) { ok, err := s.Once(ctx, "Ev1", time.Hour); return !ok, err }},
		{"the lease is still held", func() (bool, error) {
			ok, err := s.Lock(ctx, "lease:C1/1.0", "replica-b", time.Hour)
			return !ok, err
		}},
		{"the slot is still held", func() (bool, error) {
			ok, err := s.Acquire(ctx, "sessions", "S2", 1, time.Hour)
			return !ok, err
		}},
		{"the counter kept its total", func() (bool, error) { v, err := s.Get(ctx, "tokens:U1"); return v == 42, err }},
		{"the session and its feedback are there", func() (bool, error) {
			got, ok, err := s.Session(ctx, "S1")
			fb := got.Feedback
			return ok && got.Started.Equal(rec.Started) && got.Report == rec.Report && len(fb) == 1 &&
				fb[0].User == "U2" && fb[0].Value == "positive" && fb[0].At.Equal(time.Unix(1_800_000_060, 7)), err
		}},
	}
	for _, c := range checks {
		if ok, err := c.ok(); err != nil || !ok {
			t.Errorf("after reopening, %s: not so (err %v)", c.name, err)
		}
	}
}

func TestSQLiteSweepsExpiredRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := NewSQLite(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s.now = c.now
	_, _ = s.Once(ctx, "Ev1", time.Minute)
	_, _ = s.Acquire(ctx, "q", "a", 1, time.Minute)
	_, _ = s.Add(ctx, "k", 1, time.Minute)
	c.add(time.Hour)
	for i := range sweepEvery {
		if err := s.Mark(ctx, fmt.Sprint("k", i), 2*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"keys", "slots", "counters"} {
		var n int
		if err := s.r.QueryRow(`SELECT count(*) FROM `+table+` WHERE expires <= ?`, c.now().UnixNano()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d expired rows left in %s", n, table)
		}
	}
}

func TestSQLiteRefusesAPathTheDriverWouldMisread(t *testing.T) {
	t.Parallel()
	if _, err := NewSQLite(filepath.Join(t.TempDir(), "what?.db")); err == nil {
		t.Fatal("a path with '?' was accepted")
	}
}
