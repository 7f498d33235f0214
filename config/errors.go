package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/slackbot/slackbot/redact"
)

// Error is one problem found while loading a configuration or agent file.
// Load returns every problem it finds joined with errors.Join; use
// errors.As to reach the first *Error, or unwrap the join to see them all.
type Error struct {
	File string // the file as it was named to Load (or found in agents_dir)
	Line int    // 1-based; 0 when the problem has no single line
	Key  string // YAML path such as "llm.providers.openai.type" or "models[1]"; "" for the whole file
	Msg  string // what is wrong and what would be valid
}

// Error formats the problem as "file:line: key: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// problems collects the errors of one load. Secrets seen while loading are
// scrubbed from every message when the collection is turned into an error.
type problems struct {
	list    []*Error
	secrets map[string]bool
}

func (p *problems) add(file string, line int, key, format string, args ...any) {
	p.list = append(p.list, &Error{File: file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// secret remembers a credential so that no message can repeat it. Values
// shorter than minLen are not remembered: they would scrub ordinary words
// out of messages, and no one issues credentials that short.
func (p *problems) secret(v string, minLen int) {
	if len(v) < minLen {
		return
	}
	if p.secrets == nil {
		p.secrets = map[string]bool{}
	}
	p.secrets[v] = true
}

// err joins the problems in file order, scrubbed, or returns nil.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	// Longest first, so a secret that contains another is removed whole.
	secrets := make([]string, 0, len(p.secrets))
	for s := range p.secrets {
		secrets = append(secrets, s)
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	errs := make([]error, len(p.list))
	for i, e := range p.list {
		c := *e
		c.Msg = scrub(c.Msg, secrets)
		errs[i] = &c
	}
	return errors.Join(errs...)
}

func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redact.Mark)
	}
	// Credentials of known shapes go even when no Secret field held them.
	return redact.String(s)
}

// yamlError turns an error of the YAML library into an *Error without the
// source excerpt the library adds, which could show a secret.
func yamlError(file string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{File: file, Msg: ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			e.Line = tk.Position.Line
		}
		return e
	}
	return &Error{File: file, Msg: err.Error()}
}

// suggest returns the candidate closest to s, or "" when none is close
// enough to be a plausible typo.
func suggest(s string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		limit := 2
		if len(c) > 8 {
			limit = 3
		}
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// oneOf formats a list of valid values: "a, b, c", or "none".
func oneOf(vals []string) string {
	if len(vals) == 0 {
		return "none"
	}
	return strings.Join(vals, ", ")
}

// sortedKeys returns a map's keys in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
