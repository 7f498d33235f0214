package slack_test

import (
	"sync"

	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
)

// The channel and the person every world starts with.
const (
	channel = bottest.Channel
	asker   = bottest.Asker
)

// lastUserText is the last user message the model was sent.
func lastUserText(r *llmtest.Recorded) string { return lastUser(r).Content }

// gate holds model replies until released, so a test can act while a
// session is running.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }
