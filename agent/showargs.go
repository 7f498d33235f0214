package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slackbot/slackbot/redact"
)

// ShowArguments is a call's JSON arguments for a person deciding on it:
// indented, the values of secret-looking keys masked, strings longer than
// maxValue characters shortened (saying by how much), credentials
// redacted and control characters other than newlines and tabs removed.
// Arguments that are not JSON are shown as their text, shortened and
// redacted alike.
func ShowArguments(raw string, maxValue int) string {
	raw = strings.TrimSpace(raw)
	var v any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if raw == "" {
		return "{}"
	}
	var out string
	if dec.Decode(&v) != nil {
		out = shorten(raw, maxValue*4)
	} else {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(shown(v, "", maxValue))
		out = strings.TrimRight(b.String(), "\n")
	}
	return inert(out)
}

// inert is s with credentials redacted and control characters other than
// newlines and tabs removed.
func inert(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, redact.String(s))
}

// shown is v with secret keys masked and long strings shortened.
func shown(v any, key string, maxValue int) any {
	if key != "" && secretKeyRe.MatchString(key) {
		if _, isObj := v.(map[string]any); !isObj {
			return "[redacted]"
		}
	}
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = shown(e, k, maxValue)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = shown(e, "", maxValue)
		}
		return l
	case string:
		return shorten(x, maxValue)
	}
	return v
}

// shorten cuts s to max characters, saying how many were left out.
func shorten(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + fmt.Sprintf("… (%d more characters)", len(r)-max)
}
