package state

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A file whose progress table predates the tasks of streams gains the
// column: its records read back with none, new ones keep theirs.
func TestAnOlderSQLiteFileGainsTheProgressTasksColumn(t *testing.T) {
	t.Parallel()
	oldSchema := strings.Replace(progressSchema, ",\n\ttasks   TEXT NOT NULL DEFAULT ''", "", 1)
	if oldSchema == progressSchema {
		t.Fatal("the test no longer finds the tasks column in the schema")
	}
	s := openOlder(t, oldSchema, `INSERT INTO progress (session, channel, ts, owner) VALUES ('S1', 'C1', '1.1', 'r1')`)
	defer s.Close()
	ctx := context.Background()
	p := Progress{Session: "S2", Channel: "C1", TS: "2.2", Owner: "r1", Tasks: []OpenTask{{ID: "t1", Title: "Thinking"}}}
	if err := s.PutProgress(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err := s.Progresses(ctx)
	want := []Progress{{Session: "S1", Channel: "C1", TS: "1.1", Owner: "r1"}, p}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Progresses = %+v, %v; want %+v", got, err, want)
	}
}

// openOlder opens a file an older release wrote: made with schema, holding
// the row insert adds (its arguments args).
func openOlder(t *testing.T, schema, insert string, args ...any) *SQLite {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(schema); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(insert, args...); err != nil {
		t.Fatal(err)
	}
	_ = old.Close()
	s, err := NewSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
