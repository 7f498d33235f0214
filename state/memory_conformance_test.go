package state_test

import (
	"testing"

	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/statetest"
)

func TestMemoryConforms(t *testing.T) {
	t.Parallel()
	statetest.Run(t, func(*testing.T) state.Store { return state.NewMemory() })
}

func BenchmarkMemorySession(b *testing.B) {
	statetest.Bench(b, func(*testing.B) state.Store { return state.NewMemory() })
}
