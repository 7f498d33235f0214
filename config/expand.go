package config

import (
	"fmt"
	"regexp"
	"strings"
)

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces ${VAR} and ${VAR:-default} in s with values from lookup;
// "$$" is a literal "$" and a "$" followed by anything else is kept as is.
// As in the shell, a default applies when the variable is unset or empty.
// A value that comes from the environment is not expanded again, and a
// default is taken literally (no nested ${...}).
//
// An unset variable without a default is an error that says how to allow it
// to be empty; all such variables of s are named in one error.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '{':
		default:
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf(`"${" is not closed with "}" (write "$$" for a literal "$")`)
		}
		body := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(body, ":-")
		if !varName.MatchString(name) {
			return "", fmt.Errorf(`"${%s}" is not a variable reference; write ${NAME} or ${NAME:-default}, or "$$" for a literal "$"`, body)
		}
		if strings.Contains(def, "${") {
			return "", fmt.Errorf(`"${%s}": a default cannot contain another ${...}`, name)
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok:
			missing = append(missing, name)
		}
		b.WriteString(v)
		i += 2 + end
	}
	switch len(missing) {
	case 0:
		return b.String(), nil
	case 1:
		return "", fmt.Errorf("environment variable %s is not set; set it, or write ${%s:-} to allow it to be empty (or ${%s:-value} for a default)",
			missing[0], missing[0], missing[0])
	default:
		return "", fmt.Errorf("environment variables %s are not set; set them, or write ${NAME:-} to allow one to be empty (or ${NAME:-value} for a default)",
			strings.Join(missing, ", "))
	}
}
