package state_test

import (
	"path/filepath"
	"testing"

	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/statetest"
)

func TestSQLiteConforms(t *testing.T) {
	t.Parallel()
	statetest.Run(t, func(t *testing.T) state.Store {
		s, err := state.NewSQLite(filepath.Join(t.TempDir(), "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func BenchmarkSQLiteSession(b *testing.B) {
	statetest.Bench(b, func(b *testing.B) state.Store {
		s, err := state.NewSQLite(filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
