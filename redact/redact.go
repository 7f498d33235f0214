// Package redact takes credentials out of text before it is logged, printed
// or put in an error: tokens of known shapes, Authorization values, URL
// passwords and the values of token-like URL query keys. It is the one
// place the program recognises a secret by its shape, and the one that puts
// an error in words without the address or URL it quotes (Cause, Network,
// Error); any package may use it.
package redact

import (
	"regexp"
	"strings"
)

// Mark replaces what was taken out.
const Mark = "[redacted]"

// rule replaces what re matches with the text of its first group (a prefix
// worth keeping for diagnosis, possibly empty) followed by Mark.
type rule struct {
	re *regexp.Regexp
	// hints are lower-case substrings one of which every match holds: a
	// string without any skips the expression.
	hints []string
	// suffix is kept after Mark: the text of the second group, if any.
	suffix bool
}

// tokenKey is a query or form key whose value is a credential.
const tokenKey = `[A-Za-z0-9_.\-]*(?i:token|key|secret|passw(?:or)?d|pwd|sig|signature|auth|credential|session)[A-Za-z0-9_.\-]*`

var rules = []rule{
	// Slack bot, user, app, refresh and legacy tokens.
	{regexp.MustCompile(`\b(xox[abpeors]-|xapp-)[A-Za-z0-9\-]+`), []string{"xox", "xapp-"}, false},
	// OpenAI, OpenRouter and Anthropic keys, even partly masked.
	{regexp.MustCompile(`\b(sk-(?:ant-|proj-|or-)?)[A-Za-z0-9_\-*]{6,}`), []string{"sk-"}, false},
	// GitHub tokens.
	{regexp.MustCompile(`\b(github_pat_|gh[pousr]_)[A-Za-z0-9_]{6,}`), []string{"github_pat_", "gh"}, false},
	// AWS access key ids.
	{regexp.MustCompile(`\b((?:AKIA|ASIA))[A-Z0-9]{12,}`), []string{"akia", "asia"}, false},
	// Authorization and similar header values, to the end of the line or
	// of the quoted value.
	{regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization"?\s*[:=]\s*"?)[^"\r\n]+`), []string{"authorization"}, false},
	// Bearer and Basic credentials wherever they appear.
	{regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9_\-.=+/~*]{6,}`), []string{"bearer", "basic"}, false},
	// The password of a URL's userinfo.
	{regexp.MustCompile(`(://[^/\s:@?#]*:)[^/\s@?#]+(@)`), []string{"://"}, true},
	// token=…, api_key=…, password=… in a query, a form or a log line.
	{regexp.MustCompile(`((?:^|[?&;\s,"'(])` + tokenKey + `=)[^&#;\s"'<>)]+`), []string{"="}, false},
}

// String returns s with every credential it recognises replaced by Mark,
// keeping a telling prefix ("xoxb-[redacted]", "Bearer [redacted]").
func String(s string) string {
	if s == "" {
		return s
	}
	lower := ""
	for _, r := range rules {
		if lower == "" {
			lower = strings.ToLower(s)
		}
		if !hinted(lower, r.hints) {
			continue
		}
		repl := "${1}" + Mark
		if r.suffix {
			repl += "${2}"
		}
		out := r.re.ReplaceAllString(s, repl)
		if out != s {
			s, lower = out, ""
		}
	}
	return s
}

func hinted(lower string, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}
