package blockkit

import (
	"regexp"
	"strings"
)

// mrkdwn rewrites the Slack tokens of a mrkdwn text: broadcasts and
// mentions the policy does not allow become words, a link whose label names
// another host becomes a link to its target alone, and an unknown <!…>
// token is shown as written. Everything else is kept byte for byte.
func (p *VoicePolicy) mrkdwn(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	for {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		k := strings.IndexByte(s[j+1:], '>')
		if k < 0 {
			b.WriteString(s[i:])
			break
		}
		k += j + 1
		b.WriteString(s[i:j])
		body := s[j+1 : k]
		if strings.ContainsAny(body, "<\n") {
			b.WriteByte('<')
			i = j + 1
			continue
		}
		b.WriteString(p.token(body))
		i = k + 1
	}
	if b.Len() == len(s) && b.String() == s {
		return s
	}
	return b.String()
}

// token is what the token <body> is written as.
func (p *VoicePolicy) token(body string) string {
	same := "<" + body + ">"
	if body == "" {
		return same
	}
	switch body[0] {
	case '!':
		name, label, _ := strings.Cut(body[1:], "|")
		kind, _, _ := strings.Cut(name, "^")
		switch kind {
		case "date":
			return same
		case "channel", "here", "everyone", "group":
			if p.AllowBroadcasts {
				return same
			}
			return "@" + kind
		case "subteam":
			if p.AllowBroadcasts {
				return same
			}
			if l := strings.TrimPrefix(strings.TrimSpace(label), "@"); l != "" {
				return "@" + l
			}
			return "@group"
		}
		return "&lt;" + body + "&gt;"
	case '@':
		id, _, _ := strings.Cut(body[1:], "|")
		if p.pings(id) {
			return same
		}
		return "@" + escapeMrkdwn(p.name(id))
	case '#':
		return same
	}
	target, label, ok := strings.Cut(body, "|")
	if ok && disguised(unescapeMrkdwn(label), target) {
		return "<" + target + ">"
	}
	return same
}

// markdownLinkRe finds Markdown links [label](target) in a markdown block.
var markdownLinkRe = regexp.MustCompile(`\[([^\[\]\n]*)\]\(([^()\s]+)\)`)

// markdown rewrites a Markdown block's text: its Slack tokens as in mrkdwn,
// and a link whose label names another host as a link labelled with its
// target.
func (p *VoicePolicy) markdown(s string) string {
	s = p.mrkdwn(s)
	if !strings.Contains(s, "](") {
		return s
	}
	return markdownLinkRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := markdownLinkRe.FindStringSubmatch(m)
		if disguised(sub[1], sub[2]) {
			return "[" + sub[2] + "](" + sub[2] + ")"
		}
		return m
	})
}

// escapeMrkdwn writes s so that mrkdwn shows it as it is.
func escapeMrkdwn(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return mrkdwnEscaper.Replace(s)
}

// unescapeMrkdwn is the text a mrkdwn string shows.
func unescapeMrkdwn(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return entityDecoder.Replace(s)
}
