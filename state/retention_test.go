package state_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/state"
)

func TestAStoreOpenedFromTheConfigurationForgetsSessionRecordsPastTheRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := state.Open(config.State{Backend: "sqlite", Path: path, SessionRetention: config.Duration(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := state.SessionRecord{ID: "old", User: "U1", Channel: "C1", Started: time.Now().Add(-48 * time.Hour)}
	fresh := state.SessionRecord{ID: "fresh", User: "U1", Channel: "C1", Started: time.Now().Add(-time.Hour)}
	for _, r := range []state.SessionRecord{old, fresh} {
		if err := s.PutSession(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Sessions(ctx, state.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "fresh" {
		t.Fatalf("records kept: %+v; want the fresh one alone", list)
	}
}
