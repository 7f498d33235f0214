package llm

import (
	"regexp"
	"strings"
)

// The final-answer wrapper is how a model answers in plain text when it
// does not call a tool: <ai-agent-NONCE-FINAL format="…">…</ai-agent-NONCE-FINAL>.
// The nonce is random per session (or per extraction) and told to the model
// in its prompt, so a wrapper that arrives inside a tool result — with
// another nonce — is never taken for the answer. The closing tag is
// optional: models often stop without it.

var (
	finalOpenRe = regexp.MustCompile(`<ai-agent-([A-Za-z0-9]+)-FINAL((?:\s+[a-zA-Z_]+\s*=\s*"[^"]*")*)\s*>`)
	finalAttrRe = regexp.MustCompile(`([a-zA-Z_]+)\s*=\s*"([^"]*)"`)
)

// HasFinalWrapper reports whether text holds a final-answer wrapper with any
// nonce.
func HasFinalWrapper(text string) bool {
	return strings.Contains(text, "<ai-agent-") && finalOpenRe.MatchString(text)
}

// FindFinal returns the content of the first wrapper in text whose nonce is
// nonce, trimmed, and the wrapper's attributes. Without a closing tag the
// content runs to the end of text.
func FindFinal(text, nonce string) (content string, attrs map[string]string, ok bool) {
	if !strings.Contains(text, "<ai-agent-") {
		return "", nil, false
	}
	var loc []int
	for _, m := range finalOpenRe.FindAllStringSubmatchIndex(text, -1) {
		if text[m[2]:m[3]] == nonce {
			loc = m
			break
		}
	}
	if loc == nil {
		return "", nil, false
	}
	attrs = map[string]string{}
	for _, m := range finalAttrRe.FindAllStringSubmatch(text[loc[4]:loc[5]], -1) {
		attrs[m[1]] = m[2]
	}
	rest := text[loc[1]:]
	if i := strings.Index(rest, "</ai-agent-"+nonce+"-FINAL>"); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest), attrs, true
}
