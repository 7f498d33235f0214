package state

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A file written by a release without approvals gets the column on open,
// and its records read back with none.
func TestAnOlderSQLiteFileGainsTheApprovalsColumn(t *testing.T) {
	t.Parallel()
	oldSchema := strings.Replace(schema, ",\n\tapprovals     TEXT NOT NULL DEFAULT ''", "", 1)
	if oldSchema == schema {
		t.Fatal("the test no longer finds the approvals column in the schema")
	}
	s := openOlder(t, oldSchema, `INSERT INTO sessions (id, user, channel, thread_ts, agent, status, turns, tool_calls, input_tokens, output_tokens, cost_usd, started, duration, report, feedback)
		VALUES ('S1', 'U1', 'C1', '1.1', 'a', 'success', 1, 0, 0, 0, 0, ?, 0, 'r', '')`, time.Now().UnixNano())
	defer s.Close()
	ctx := context.Background()
	if r, ok, err := s.Session(ctx, "S1"); err != nil || !ok || r.Approvals != nil {
		t.Fatalf("old record: %+v %v %v", r, ok, err)
	}
	r := SessionRecord{ID: "S2", Started: time.Now(), Approvals: []Approval{{Tool: "x__y", Decision: "denied", By: "U1", At: time.Unix(5, 0).UTC()}}}
	if err := s.PutSession(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Session(ctx, "S2"); len(got.Approvals) != 1 || got.Approvals[0].By != "U1" {
		t.Fatalf("approvals %+v", got.Approvals)
	}
}
