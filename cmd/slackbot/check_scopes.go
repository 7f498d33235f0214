package main

import (
	"slices"
	"strings"
)

// scopeNeeds says what the bot cannot do without a scope, for the scopes
// whose absence leaves the bot running but lesser.
var scopeNeeds = map[string]string{
	"files:read":  "files people attach are not read",
	"files:write": "long answers are posted as many messages instead of a file",
}

// botScopesRow is the row for the bot token's scopes, as auth.test's
// X-OAuth-Scopes header lists them (header): a warning naming each scope
// of the manifest the token lacks, and what goes missing without it. ok is
// false when Slack did not list the scopes (listed false), so nothing can
// be said.
func botScopesRow(header string, listed bool) (row checkRow, ok bool) {
	if !listed {
		return checkRow{}, false
	}
	have := map[string]bool{}
	for _, s := range strings.Split(header, ",") {
		have[strings.TrimSpace(s)] = true
	}
	var missing, effects []string
	for _, s := range manifestBotScopes {
		if !have[s] {
			missing = append(missing, s)
			if e, ok := scopeNeeds[s]; ok {
				effects = append(effects, e)
			}
		}
	}
	if len(missing) == 0 {
		return checkRow{"slack bot scopes", checkOK, "the bot token has every scope `slackbot manifest` asks for"}, true
	}
	detail := "the bot token lacks " + strings.Join(missing, ", ") +
		": add them under OAuth & Permissions → Bot Token Scopes (or paste `slackbot manifest` again) and reinstall the app"
	if len(effects) > 0 {
		detail += "; until then " + strings.Join(slices.Compact(effects), ", and ")
	}
	return checkRow{"slack bot scopes", checkWarn, detail}, true
}
