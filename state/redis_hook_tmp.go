package state

// Temporary stand-ins for what branch statesql adds to state.go and
// open.go; this file is deleted when that branch is merged.

import (
	"errors"
	"time"

	"github.com/slackbot/slackbot/config"
)

// redisOpener opens the Redis store; redis.go sets it.
var redisOpener func(config.State) (Store, error)

// SessionRecord is what the bot keeps about one session.
type SessionRecord struct {
	ID, User, Channel, ThreadTS, Agent, Status  string
	Turns, ToolCalls, InputTokens, OutputTokens int
	CostUSD                                     float64
	Started                                     time.Time
	Duration                                    time.Duration
	Report                                      string
	Feedback                                    string
}

// SessionFilter selects session records; zero fields match everything.
type SessionFilter struct {
	User, Channel string
	Since         time.Time
	Limit         int
}

// DefaultSessionLimit is how many records Sessions returns by default.
const DefaultSessionLimit = 100

// ErrNoSession is returned by SetFeedback for an unknown session id.
var ErrNoSession = errors.New("state: no such session")

func (f SessionFilter) limit() int {
	if f.Limit <= 0 {
		return DefaultSessionLimit
	}
	return f.Limit
}
