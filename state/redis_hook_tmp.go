package state

// A temporary stand-in for what branch statesql adds in state.Open; this
// file is deleted when that lands.

import "github.com/slackbot/slackbot/config"

// redisOpener opens the Redis store; redis.go sets it.
var redisOpener func(config.State) (Store, error)
