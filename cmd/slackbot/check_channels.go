package main

import (
	"fmt"
	"strings"

	"github.com/slackbot/slackbot/config"
)

// checkChannelRules lists, as warnings, the channel rules that still match
// by name: anyone who can create or rename a channel can make a name (or
// a glob) match, and a name the bot cannot resolve is denied while a deny
// rule is by name. A rule by id matches one channel whatever it is called.
func checkChannelRules(s config.Slack) []checkRow {
	var rows []checkRow
	add := func(key string, patterns []string) {
		var names []string
		for _, p := range patterns {
			if !config.IsChannelID(p) {
				names = append(names, fmt.Sprintf("%q", p))
			}
		}
		if len(names) > 0 {
			rows = append(rows, checkRow{key, checkWarn, "matches channels by name (" + strings.Join(names, ", ") +
				"): anyone who can name a channel can match it; list channel ids (C…, G…) instead"})
		}
	}
	add("slack.allow.channels", s.Allow.Channels)
	add("slack.routing.deny", s.Routing.Deny)
	for i, r := range s.Routing.Rules {
		add(fmt.Sprintf("slack.routing.rules[%d].channels", i), r.Channels)
	}
	return rows
}
