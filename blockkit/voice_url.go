package blockkit

import (
	"net/url"
	"strings"
)

// trusted reports whether u is an http(s) URL on a host the policy
// trusts: a host named exactly, or a subdomain of a "*." entry.
func (p *VoicePolicy) trusted(u string) bool {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "https" && pu.Scheme != "http" {
		return false
	}
	host := normHost(pu.Hostname())
	if host == "" {
		return false
	}
	for _, t := range p.TrustedHosts {
		t = normHost(t)
		if suffix, ok := strings.CutPrefix(t, "*"); ok && strings.HasPrefix(suffix, ".") {
			if len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
				return true
			}
		} else if host == t {
			return true
		}
	}
	return false
}

// normHost is a host name as compared: lower case, without a final dot.
func normHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// urlHost is the host a link goes to: the domain of a mailto: address, the
// host of any other URL; "" when there is none.
func urlHost(target string) string {
	if addr, ok := cutPrefixFold(target, "mailto:"); ok {
		_, domain, _ := strings.Cut(addr, "@")
		domain, _, _ = strings.Cut(domain, "?")
		return normHost(domain)
	}
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	return normHost(u.Hostname())
}

// cutPrefixFold is strings.CutPrefix ignoring the case of prefix.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// disguised reports whether a link's label names an address or a domain
// on another host than its target's: a reader would believe the link goes
// there.
func disguised(label, target string) bool {
	host := urlHost(target)
	for _, word := range strings.Fields(label) {
		word = strings.Trim(word, "()[]{}<>,;:!?'\"“”‘’*_~`")
		if h, ok := addressHost(word); ok && h != host {
			return true
		}
	}
	return false
}

// addressHost reports whether word reads as an address — a URL, an email
// address, a domain — and the host it names.
func addressHost(word string) (string, bool) {
	if word == "" {
		return "", false
	}
	if strings.Contains(word, "://") {
		u, err := url.Parse(word)
		if err != nil {
			return "", true
		}
		return normHost(u.Hostname()), true
	}
	if rest, ok := cutPrefixFold(word, "mailto:"); ok {
		return urlHost("mailto:" + rest), true
	}
	if local, domain, ok := strings.Cut(word, "@"); ok && local != "" {
		if domainLike(domain) {
			return normHost(domain), true
		}
		return "", false
	}
	host := word
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, port, ok := strings.Cut(host, ":"); ok && port != "" && strings.Trim(port, "0123456789") == "" {
		host = h
	}
	if domainLike(host) {
		return normHost(host), true
	}
	return "", false
}

// domainLike reports whether s reads as a domain name or an IPv4 address:
// dot-separated labels of letters, digits and hyphens, ending in a label of
// letters, or four numbers.
func domainLike(s string) bool {
	s = strings.TrimSuffix(s, ".")
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	digits := 0
	for _, l := range labels {
		if l == "" {
			return false
		}
		allDigits := true
		for _, r := range l {
			switch {
			case r >= '0' && r <= '9':
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-', r >= 0x80:
				allDigits = false
			default:
				return false
			}
		}
		if allDigits {
			digits++
		}
	}
	if digits == len(labels) {
		return len(labels) == 4
	}
	last := labels[len(labels)-1]
	if len(last) < 2 {
		return false
	}
	for _, r := range last {
		if r >= '0' && r <= '9' || r == '-' {
			return false
		}
	}
	return true
}

// linkLine is a mrkdwn line standing for a button or image whose host is
// not trusted: a link with its label and, in view, its host. A target that
// is not an http(s) URL is shown as text.
func linkLine(u, label string) string {
	label = strings.TrimSpace(label)
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "https" && pu.Scheme != "http" || pu.Host == "" {
		if label == "" {
			return mrkdwnEscaper.Replace(u)
		}
		return labelEscaper.Replace(label) + " (" + mrkdwnEscaper.Replace(u) + ")"
	}
	target := linkTargetEscaper.Replace(u)
	if label == "" || disguised(label, u) {
		return "<" + target + ">"
	}
	line := "<" + target + "|" + labelEscaper.Replace(label) + "> (" + mrkdwnEscaper.Replace(pu.Hostname()) + ")"
	if Len(line) > SlackSectionTextMax {
		return "<" + target + ">"
	}
	return line
}

// linkTargetEscaper keeps a URL from ending the <url|label> token it sits in.
var linkTargetEscaper = strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", " ", "%20", "\n", "%0A")
