package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/slackbot/slackbot/redact"
)

// A tool call's arguments are the model's words, and may hold anything a
// person pasted: a headend shows what a call was asked only through
// argsSummary, one line that names the values, hides the ones whose key
// says they are secret, passes through redact.String and stops at
// maxArgsSummary characters.

// maxArgsSummary bounds a call's argument summary, in characters.
const maxArgsSummary = 200

// secretKeyRe matches argument keys whose values are never shown.
var secretKeyRe = regexp.MustCompile(`(?i)(pass(word|wd)?|secret|token|api[_-]?key|auth|credential|cookie|private)`)

// argsSummary is a one-line summary of a call's JSON arguments:
// `query: "rate limits", repo: "a/b"` — strings quoted, nested values
// elided, secret-looking keys masked; "" for no arguments. Arguments that
// are not a JSON object are summarised as their text.
func argsSummary(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "{}" || raw == "null" {
		return ""
	}
	var obj map[string]json.RawMessage
	var s string
	if json.Unmarshal([]byte(raw), &obj) == nil {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, oneLine(k)+": "+argValue(k, obj[k]))
		}
		s = strings.Join(parts, ", ")
	} else {
		s = oneLine(raw)
	}
	return clip(redact.String(s), maxArgsSummary)
}

// argValue is one argument's value as the summary shows it.
func argValue(key string, v json.RawMessage) string {
	if secretKeyRe.MatchString(key) {
		return "•••"
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "…"
	}
	switch x := x.(type) {
	case string:
		return fmt.Sprintf("%q", clip(oneLine(x), 80))
	case map[string]any:
		return "{…}"
	case []any:
		return fmt.Sprintf("[%d]", len(x))
	case nil:
		return "null"
	default:
		return oneLine(string(v))
	}
}

// oneLine folds whitespace, line breaks included, into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n characters, ending in "…" when it was cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
