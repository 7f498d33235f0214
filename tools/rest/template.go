package rest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// placeholder matches {name} in URL and body templates. Names are the
// characters of JSON Schema property names configs use in practice.
var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_.\-]+)\}`)

// placeholders lists the names in a template, in order, once each.
func placeholders(s string) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	return names
}

// argError is a mistake in the arguments that the schema did not catch;
// the model can fix it and call again.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

// expandURL fills the placeholders of a URL template from args, escaping
// each value for where it lands: as a path segment before the '?', as a
// query value after it. It reports the names it used.
func expandURL(tmpl string, args map[string]any) (string, map[string]bool, error) {
	used := map[string]bool{}
	path, query, hasQuery := strings.Cut(tmpl, "?")
	var missing []string
	fill := func(s string, escape func(string) string) string {
		return placeholder.ReplaceAllStringFunc(s, func(m string) string {
			name := m[1 : len(m)-1]
			v, ok := args[name]
			if !ok || v == nil {
				missing = append(missing, name)
				return m
			}
			used[name] = true
			return escape(text(v))
		})
	}
	for _, name := range placeholders(path) {
		if v, ok := args[name]; ok && v != nil {
			if err := checkPathValue(name, text(v)); err != nil {
				return "", nil, err
			}
		}
	}
	out := fill(path, url.PathEscape)
	if hasQuery {
		out += "?" + fill(query, url.QueryEscape)
	}
	if len(missing) > 0 {
		return "", nil, &argError{fmt.Sprintf("missing argument %s: it is part of the address and is required", strings.Join(missing, ", "))}
	}
	if p, _, _ := strings.Cut(out, "?"); dotSegment(p) {
		return "", nil, &argError{"the arguments put a '.' or '..' segment in the address; give names, not relative paths"}
	}
	return out, used, nil
}

// maxUnescape bounds how many layers of percent-encoding a path value is
// looked through: a server may decode more than once.
const maxUnescape = 4

// checkPathValue refuses a value for a path placeholder that could leave
// the configured path once a server decodes it: one that is, or holds a
// segment that is, '.' or '..', raw or percent-encoded any number of
// times, and one holding a '/' or '\' it percent-encoded itself. A plain
// '/' is sent encoded (%2F), as part of the one segment.
func checkPathValue(name, v string) error {
	refuse := &argError{fmt.Sprintf("argument %s is part of the address path: it cannot be '.' or '..', hold such a segment, or hold a percent-encoded '/' or '\\'", name)}
	for range maxUnescape {
		if l := strings.ToLower(v); strings.Contains(l, "%2f") || strings.Contains(l, "%5c") {
			return refuse
		}
		if dotPart(v) {
			return refuse
		}
		d, err := url.PathUnescape(v)
		if err != nil || d == v {
			return nil
		}
		v = d
	}
	if strings.Contains(v, "%") {
		return &argError{fmt.Sprintf("argument %s is part of the address path and is percent-encoded too many times", name)}
	}
	return nil
}

// dotPart reports whether v, split at '/' and '\', has a '.' or '..' part.
func dotPart(v string) bool {
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }) {
		if p == "." || p == ".." {
			return true
		}
	}
	return false
}

// dotSegment reports whether a path holds a '.' or '..' segment, raw or
// percent-encoded.
func dotSegment(path string) bool {
	if _, rest, ok := strings.Cut(path, "://"); ok {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		path = rest[i:]
	}
	for _, seg := range strings.Split(path, "/") {
		for range maxUnescape {
			if seg == "." || seg == ".." {
				return true
			}
			d, err := url.PathUnescape(seg)
			if err != nil || d == seg {
				break
			}
			seg = d
		}
	}
	return false
}

// text is an argument as it appears in a URL, a header or a string
// template: strings as they are, numbers and booleans as JSON writes them,
// arrays and objects as JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// fillBody builds a request body from a template: a string that is exactly
// "{name}" becomes the argument's JSON value (left out of its object when
// the argument is absent), and other {name} in strings are replaced by the
// argument's text. Placeholders naming no known parameter stay as written,
// so literal braces in a template survive.
func fillBody(tmpl any, args map[string]any, known map[string]bool) any {
	v, _ := fillValue(tmpl, args, known)
	return v
}

// fillValue returns the filled value and false when it is a whole
// placeholder whose argument is absent.
func fillValue(tmpl any, args map[string]any, known map[string]bool) (any, bool) {
	switch t := tmpl.(type) {
	case string:
		if m := placeholder.FindStringSubmatch(t); m != nil && m[0] == t {
			if v, ok := args[m[1]]; ok {
				return v, true
			}
			if known[m[1]] {
				return nil, false
			}
			return t, true
		}
		return placeholder.ReplaceAllStringFunc(t, func(m string) string {
			name := m[1 : len(m)-1]
			if v, ok := args[name]; ok {
				return text(v)
			}
			if known[name] {
				return ""
			}
			return m
		}), true
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if v, ok := fillValue(e, args, known); ok {
				out[k] = v
			}
		}
		return out, true
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if v, ok := fillValue(e, args, known); ok {
				out[fmt.Sprint(k)] = v
			}
		}
		return out, true
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i], _ = fillValue(e, args, known)
		}
		return out, true
	}
	return tmpl, true
}

// bodyNames lists the placeholders anywhere in a body template.
func bodyNames(tmpl any, into map[string]bool) {
	switch t := tmpl.(type) {
	case string:
		for _, n := range placeholders(t) {
			into[n] = true
		}
	case map[string]any:
		for _, e := range t {
			bodyNames(e, into)
		}
	case map[any]any:
		for _, e := range t {
			bodyNames(e, into)
		}
	case []any:
		for _, e := range t {
			bodyNames(e, into)
		}
	}
}
