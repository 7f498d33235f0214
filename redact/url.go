package redact

import (
	"net/url"
	"regexp"
	"strings"
)

var tokenKeyRe = regexp.MustCompile(`^` + tokenKey + `$`)

// URL returns raw in a form safe to print: the userinfo (a password, or a
// user name that may be a token) and the values of token-like query keys
// are replaced by Mark, and the rest passes through String. A raw that does
// not parse as a URL is returned through String alone.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return String(raw)
	}
	if u.Opaque != "" {
		return String(raw)
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteString(":")
	}
	if u.Scheme != "" || u.Host != "" || u.User != nil {
		b.WriteString("//")
	}
	if u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword {
			b.WriteString(u.User.Username())
			b.WriteString(":")
		}
		b.WriteString(Mark)
		b.WriteString("@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?")
		b.WriteString(query(u.RawQuery))
	}
	if u.Fragment != "" {
		b.WriteString("#")
		b.WriteString(query(u.EscapedFragment()))
	}
	return String(b.String())
}

// query replaces the values of token-like keys in a raw query.
func query(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if name, err := url.QueryUnescape(k); err == nil && tokenKeyRe.MatchString(name) {
			parts[i] = k + "=" + Mark
		}
	}
	return strings.Join(parts, "&")
}

// Secrets lists the credentials raw carries: its password, or its user
// name when there is no password, and the values of its token-like query
// keys, each as written and decoded, for a caller to take out of text
// that may repeat them in another form. Values shorter than 4 bytes are
// left out: replacing them would garble the text for no gain.
func Secrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		} else {
			add(u.User.Username())
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, ok := strings.Cut(kv, "=")
		if name, err := url.QueryUnescape(k); !ok || err != nil || !tokenKeyRe.MatchString(name) {
			continue
		}
		add(v)
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			add(d)
		}
	}
	return out
}
