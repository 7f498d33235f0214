package config

import (
	"fmt"
	"slices"
	"strings"
)

// Who a user mention in an agent's answer may notify (the mentions key).
const (
	// MentionsThread lets a mention notify the asker and the people who
	// wrote in the thread; others are shown by name. The default.
	MentionsThread = "thread"
	// MentionsNone notifies nobody: every mention is shown by name.
	MentionsNone = "none"
	// MentionsAll lets every user mention notify.
	MentionsAll = "all"
)

// mentionPolicies lists the values of an agent's mentions key.
var mentionPolicies = []string{MentionsThread, MentionsNone, MentionsAll}

// checkVoice fills in and checks the keys that decide what an agent's
// answers may do in the bot's name.
func (a *Agent) checkVoice(w *walker) {
	if a.Mentions == "" {
		a.Mentions = MentionsThread
	}
	if !slices.Contains(mentionPolicies, a.Mentions) {
		w.errorf("mentions", "%q is not a mention policy; use one of: %s (default %s)", a.Mentions, oneOf(mentionPolicies), MentionsThread)
	}
}

// checkTrustedHosts checks slack.trusted_hosts: host names, each exact or
// with a leading "*." for its subdomains.
func checkTrustedHosts(w *walker, hosts []string) {
	for i, h := range hosts {
		if msg := trustedHostProblem(h); msg != "" {
			w.errorf(fmt.Sprintf("slack.trusted_hosts[%d]", i), "%q %s; write a host name like images.example.com, or *.example.com for its subdomains", h, msg)
		}
	}
}

// trustedHostProblem says what is wrong with a trusted host entry, "" when
// nothing is.
func trustedHostProblem(h string) string {
	name := strings.TrimPrefix(h, "*.")
	switch {
	case name == "":
		return "is empty"
	case strings.Contains(name, "*"):
		return "has a wildcard other than a leading *."
	case strings.Contains(name, "://") || strings.ContainsAny(name, "/?#@: \t"):
		return "is not a bare host name (no scheme, port, path or spaces)"
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" {
			return "has an empty label"
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r >= 0x80) {
				return fmt.Sprintf("has the character %q", r)
			}
		}
	}
	return ""
}
