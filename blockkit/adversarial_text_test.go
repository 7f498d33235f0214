package blockkit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Slack tokens in mrkdwn.

type advLocated struct{ where, text string }

// advMrkdwnTexts returns the notification text and every mrkdwn text object
// of a message.
func advMrkdwnTexts(m map[string]any) []advLocated {
	var out []advLocated
	if s, ok := advStr(m["text"]); ok {
		out = append(out, advLocated{"notification text", s})
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if t, _ := advStr(x["type"]); t == "mrkdwn" {
				if s, ok := advStr(x["text"]); ok {
					out = append(out, advLocated{path, s})
				}
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k], path+"."+k)
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(m["blocks"], "blocks")
	return out
}

var advIDRE = regexp.MustCompile(`^[A-Z0-9]+$`)

// advTokenLen returns the length of the whole Slack token at the start of s,
// or 0 and why there is none.
func advTokenLen(s string) (int, string) {
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return 0, "never closed"
	}
	body := s[1:end]
	if strings.ContainsAny(body, "<\n") {
		return 0, "not closed before the next < or line break"
	}
	head, label, hasLabel := strings.Cut(body, "|")
	id := func(prefixes string, v string) bool {
		return len(v) >= 2 && strings.ContainsRune(prefixes, rune(v[0])) && advIDRE.MatchString(v)
	}
	lower := strings.ToLower(head)
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"),
		strings.HasPrefix(lower, "mailto:"), strings.HasPrefix(lower, "tel:"):
		switch {
		case strings.ContainsAny(head, " \t"):
			return 0, "URL holds a space"
		case strings.HasSuffix(head, "//") || strings.HasSuffix(head, ":"):
			return 0, "URL is empty"
		}
	case strings.HasPrefix(head, "@"):
		if !id("UW", head[1:]) {
			return 0, "not a user ID"
		}
	case strings.HasPrefix(head, "#"):
		if !id("CG", head[1:]) {
			return 0, "not a channel ID"
		}
	case head == "!here" || head == "!channel" || head == "!everyone":
	case strings.HasPrefix(head, "!subteam^"):
		if !id("S", head[len("!subteam^"):]) {
			return 0, "not a user group ID"
		}
	case strings.HasPrefix(head, "!date^"):
		if !hasLabel || label == "" {
			return 0, "date token without |fallback"
		}
	default:
		return 0, "not a Slack token"
	}
	return end + 1, ""
}

// advTokenProblems reports every < that does not open a whole Slack token,
// every > that neither closes one nor starts a quote line, and double
// escapes (unless the payload itself wrote them).
func advTokenProblems(s string, payload []byte) []string {
	var probs []string
	ctx := func(i int) string {
		a, b := max(0, i-20), min(len(s), i+30)
		return strings.ToValidUTF8(s[a:b], "")
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			n, why := advTokenLen(s[i:])
			if n == 0 {
				probs = append(probs, fmt.Sprintf("< at byte %d opens no Slack token (%s): %q", i, why, ctx(i)))
				i++
				continue
			}
			i += n
		case '>':
			ls := strings.LastIndexByte(s[:i], '\n') + 1
			if strings.Trim(s[ls:i], ">") != "" {
				probs = append(probs, fmt.Sprintf("bare > at byte %d: %q", i, ctx(i)))
			}
			i++
		case '&':
			for _, d := range []string{"&amp;amp;", "&amp;lt;", "&amp;gt;"} {
				if strings.HasPrefix(s[i:], d) && !bytes.Contains(payload, []byte(d)) {
					probs = append(probs, fmt.Sprintf("double escape %s at byte %d: %q", d, i, ctx(i)))
				}
			}
			i++
		default:
			i++
		}
	}
	return probs
}

// ---------------------------------------------------------------------------
// What the payload shows a user, derived by a rule over its keys.

// advHidden keys never hold text a user sees (or, for value, only inside
// legacy attachment fields).
var advHidden = map[string]bool{
	"type": true, "block_id": true, "action_id": true, "style": true, "value": true, "color": true,
	"ts": true, "fallback": true, "callback_id": true, "mrkdwn_in": true, "emoji": true, "verbatim": true,
	"accessibility_label": true, "initial_date": true, "initial_time": true, "initial_option": true,
	"initial_options": true, "initial_date_time": true, "timezone": true, "format": true, "timestamp": true,
	"range": true, "name": true, "unicode": true, "skin_tone": true, "icon": true, "icon_emoji": true,
	"icon_url": true, "author_icon": true, "footer_icon": true, "thumb_url": true, "thumbnail_url": true,
	"provider_icon_url": true, "image_width": true, "image_height": true, "image_bytes": true, "align": true,
	"column_settings": true, "is_wrapped": true, "indent": true, "offset": true, "border": true,
	"optional": true, "dispatch_action": true, "max_selected_items": true, "min_query_length": true,
	"confirm": true, "status": true, "report_format": true, "id": true, "external_id": true, "expand": true,
	"short": true, "level": true, "language": true, "lang": true, "response_type": true, "channel": true,
	"thread_ts": true, "unfurl_links": true, "unfurl_media": true, "mrkdwn": true, "icon_name": true,
}

// advURLKeys hold link targets: their host must stay reachable.
var advURLKeys = map[string]bool{"url": true, "image_url": true, "video_url": true, "title_url": true, "title_link": true, "author_link": true}

// advNumberKeys hold numbers a user sees (table cells).
var advNumberKeys = map[string]bool{"rows": true, "cells": true, "text": true, "value": true}

type advWant struct {
	words  []string // runs of 3+ letters/digits, in order, each once
	hosts  []string
	tildes []string // "~5"-like runs that must keep an ASCII tilde
	texts  []string // visible input strings, entities decoded
	tables [][][]string
	must   []string
	answer bool
}

type advDeriver struct {
	want  advWant
	seenW map[string]bool
	seenH map[string]bool
}

func advDerive(payload []byte, exp advExpect) advWant {
	d := &advDeriver{seenW: map[string]bool{}, seenH: map[string]bool{}}
	d.want.must = exp.MustContain
	var top map[string]any
	if err := advDecode(payload, &top); err == nil && exp.Derive != "none" {
		for _, k := range []string{"messages", "message", "blocks", "attachments"} {
			d.answer(top[k], k)
		}
		if len(d.want.words) == 0 && len(d.want.hosts) == 0 {
			// The messages are unusable: report_content is the answer.
			rc := top["report_content"]
			if rc == nil {
				rc = top["content"]
			}
			d.walk(rc, "report_content", "")
		}
	}
	d.want.answer = len(d.want.words)+len(d.want.hosts)+len(d.want.must) > 0
	return d.want
}

// answer reads a value where messages belong: a number, bool or null there
// is no answer at all.
func (d *advDeriver) answer(v any, key string) {
	switch x := v.(type) {
	case string:
		if inner, ok := advUnwrapJSON(x); ok {
			d.walk(inner, key, "")
			return
		}
		d.text(x)
	case map[string]any, []any:
		d.walk(x, key, "")
	}
}

var advFenceRE = regexp.MustCompile("(?s)^```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```$")

// advUnwrapJSON decodes a string holding JSON (also inside a ``` fence, or
// encoded several times) into an object or array.
func advUnwrapJSON(s string) (any, bool) {
	for range 4 {
		t := strings.TrimSpace(s)
		if m := advFenceRE.FindStringSubmatch(t); m != nil {
			t = strings.TrimSpace(m[1])
		}
		if t == "" || !strings.ContainsRune("[{\"", rune(t[0])) {
			return nil, false
		}
		var v any
		if err := advDecode([]byte(t), &v); err != nil {
			return nil, false
		}
		switch x := v.(type) {
		case string:
			s = x
			continue
		case map[string]any, []any:
			return x, true
		}
		return nil, false
	}
	return nil, false
}

// walk collects the visible text under v; key is the key v sits under,
// arrayKey the key of the array holding v, if any.
func (d *advDeriver) walk(v any, key, arrayKey string) {
	switch x := v.(type) {
	case map[string]any:
		if t, _ := advStr(x["type"]); t == "table" || t == "markdown_table" {
			d.tableBlock(x)
		}
		blocks, _ := advList(x["blocks"])
		atts, _ := advList(x["attachments"])
		isMessage := len(blocks) > 0 || len(atts) > 0
		attachmentField := arrayKey == "fields" && x["type"] == nil
		for _, k := range advSortedKeys(x) {
			val := x[k]
			switch {
			case k == "text" && isMessage:
				// A message's own text is its notification fallback.
			case k == "value" && attachmentField:
				d.walk(val, k, "")
			case advHidden[k]:
			case advURLKeys[k]:
				if s, ok := advStr(val); ok {
					d.host(s)
				}
			default:
				d.walk(val, k, "")
			}
		}
	case []any:
		for _, e := range x {
			d.walk(e, key, key)
		}
	case string:
		if inner, ok := advUnwrapJSON(x); ok {
			d.walk(inner, key, arrayKey)
			return
		}
		d.text(x)
	case json.Number:
		if advNumberKeys[key] {
			d.text(x.String())
		}
	}
}

func advSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	advEntities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")
	advComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
	advHTMLTag  = regexp.MustCompile(`(?i)</?(b|i|u|s|em|strong|br|p|div|span|a|code|pre|script|style|ul|ol|li|table|thead|tbody|tr|td|th|h[1-6]|img|hr|sup|sub|details|summary|kbd|mark|del|ins|blockquote|font|center)\b[^<>]*/?>`)
	advURLRE    = regexp.MustCompile(`(?i)\bhttps?://[^\s<>|"'\x60()\[\]]+`)
	// A Markdown link title ([x](url "title")) is a hover tooltip, not text.
	advLinkTitle = regexp.MustCompile(`(\]\([^\s()]+)\s+"[^"]*"\)`)
)

func (d *advDeriver) text(s string) {
	s = advEntities.Replace(s)
	if strings.TrimSpace(s) == "" {
		return
	}
	d.want.texts = append(d.want.texts, s)
	d.want.tables = append(d.want.tables, advPipeTables(s)...)
	s = advComment.ReplaceAllString(s, " ")
	s = advLinkTitle.ReplaceAllString(s, "$1)")
	s = advHTMLTag.ReplaceAllString(s, " ")
	s = advURLRE.ReplaceAllStringFunc(s, func(u string) string {
		d.host(u)
		return " "
	})
	d.want.tildes = append(d.want.tildes, advLoneTildes(s)...)
	for _, w := range advWords(s) {
		if utf8.RuneCountInString(w) >= 3 && !d.seenW[w] {
			d.seenW[w] = true
			d.want.words = append(d.want.words, w)
		}
	}
}

func (d *advDeriver) host(raw string) {
	raw = strings.TrimSpace(advEntities.Replace(raw))
	if !advWebURL(raw) {
		return
	}
	u, err := url.Parse(raw)
	h := ""
	if err == nil {
		h = u.Hostname()
	}
	if h == "" {
		rest := raw[strings.Index(raw, "//")+2:]
		h, _, _ = strings.Cut(rest, "/")
	}
	h = strings.ToLower(h)
	if h != "" && !d.seenH[h] {
		d.seenH[h] = true
		d.want.hosts = append(d.want.hosts, h)
	}
}

func advWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

func advWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !advWordRune(r) })
}

// advLoneTildes returns, for each single ~ that no other single ~ on its
// line could pair with (so neither Markdown nor mrkdwn strikes through), the
// tilde and the text after it up to a space: "~5", "~/projects/app".
func advLoneTildes(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		rs := []rune(line)
		type tilde struct {
			pos             int
			canOpen, canCls bool
		}
		var ts []tilde
		for i, r := range rs {
			if r != '~' || (i > 0 && rs[i-1] == '~') || (i+1 < len(rs) && rs[i+1] == '~') {
				continue
			}
			var prev, next rune = ' ', ' '
			if i > 0 {
				prev = rs[i-1]
			}
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			ts = append(ts, tilde{i,
				!unicode.IsSpace(next) && !advWordRune(prev),
				!unicode.IsSpace(prev) && !advWordRune(next)})
		}
		for a, t := range ts {
			paired := false
			for b, u := range ts {
				if a == b {
					continue
				}
				if (b > a && t.canOpen && u.canCls && u.pos > t.pos+1) || (b < a && u.canOpen && t.canCls && t.pos > u.pos+1) {
					paired = true
				}
			}
			if paired {
				continue
			}
			end := t.pos + 1
			for end < len(rs) && !unicode.IsSpace(rs[end]) {
				end++
			}
			tok := strings.TrimRight(string(rs[t.pos:end]), ".,;:!?)]}>|*_`'\"")
			if len([]rune(tok)) >= 2 {
				out = append(out, tok)
			}
		}
	}
	return out
}

var advDelimRow = regexp.MustCompile(`^\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?$`)

// advPipeTables finds GFM pipe tables in s.
func advPipeTables(s string) [][][]string {
	lines := strings.Split(s, "\n")
	var tables [][][]string
	for i := 0; i+1 < len(lines); i++ {
		head := strings.TrimSpace(lines[i])
		if !strings.Contains(head, "|") || !advDelimRow.MatchString(strings.TrimSpace(lines[i+1])) || !strings.Contains(lines[i+1], "-") {
			continue
		}
		t := [][]string{advPipeCells(head)}
		j := i + 2
		for ; j < len(lines) && strings.Contains(lines[j], "|"); j++ {
			t = append(t, advPipeCells(strings.TrimSpace(lines[j])))
		}
		tables = append(tables, t)
		i = j - 1
	}
	return tables
}

func advPipeCells(line string) []string {
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	parts := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "\x00", "|"))
	}
	return parts
}

// tableBlock records the cells of a table block (or a model's
// markdown_table) for the alignment check.
func (d *advDeriver) tableBlock(x map[string]any) {
	var t [][]string
	cell := func(c any) string {
		var parts []string
		var flat func(v any, key string)
		flat = func(v any, key string) {
			switch y := v.(type) {
			case string:
				if !advHidden[key] {
					parts = append(parts, y)
				}
			case json.Number:
				parts = append(parts, y.String())
			case []any:
				for _, e := range y {
					flat(e, key)
				}
			case map[string]any:
				for _, k := range advSortedKeys(y) {
					flat(y[k], k)
				}
			}
		}
		flat(c, "text")
		return strings.TrimSpace(advEntities.Replace(strings.Join(parts, "")))
	}
	if hs, ok := advList(x["headers"]); ok {
		var row []string
		for _, h := range hs {
			row = append(row, cell(h))
		}
		t = append(t, row)
	}
	rows, _ := advList(x["rows"])
	for _, r := range rows {
		var row []string
		cells, ok := advList(r)
		if !ok {
			cells, _ = advList(advMap(r)["cells"])
		}
		for _, c := range cells {
			row = append(row, cell(c))
		}
		t = append(t, row)
	}
	if len(t) > 1 {
		d.want.tables = append(d.want.tables, t)
	}
}

// ---------------------------------------------------------------------------
// What the output shows.

type advOut struct {
	norm    string          // visible strings, entities decoded, U+200B dropped
	words   map[string]bool // words of norm
	letters string          // norm with everything but letters and digits dropped
}

// advVisible collects every string a person can see in the blocks (links,
// image URLs and alt text included; ids, styles and button values not).
// A message without blocks shows its text.
func advVisible(msgs []map[string]any) advOut {
	var strs []string
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case string:
			switch key {
			case "type", "block_id", "action_id", "style", "value":
			default:
				strs = append(strs, x)
			}
		case []any:
			for _, e := range x {
				walk(e, key)
			}
		case map[string]any:
			for _, k := range advSortedKeys(x) {
				walk(x[k], k)
			}
		}
	}
	for _, m := range msgs {
		if blocks, _ := advList(m["blocks"]); len(blocks) > 0 {
			walk(blocks, "blocks")
		} else {
			walk(m["text"], "text")
		}
	}
	norm := advEntities.Replace(strings.ReplaceAll(strings.Join(strs, "\n"), "\u200b", ""))
	out := advOut{norm: norm, words: map[string]bool{}}
	for _, w := range advWords(norm) {
		out.words[w] = true
	}
	out.letters = strings.Map(func(r rune) rune {
		if advWordRune(r) {
			return r
		}
		return -1
	}, norm)
	return out
}

func advNotifications(msgs []map[string]any) string {
	var b strings.Builder
	for _, m := range msgs {
		s, _ := advStr(m["text"])
		b.WriteString(s + "\n")
	}
	return b.String()
}

func (o advOut) hasWord(w string) bool {
	if o.words[w] {
		return true
	}
	// A run cut where a long text was split (CJK without spaces, a token of
	// thousands of characters) survives as a run of the output's letters.
	long := len(w) >= 20
	for _, r := range w {
		long = long || r >= 0x80
	}
	return long && strings.Contains(o.letters, w)
}

func advLostProblems(want advWant, out advOut) []string {
	var probs []string
	var lost []string
	for _, w := range want.words {
		if !out.hasWord(w) {
			lost = append(lost, w)
		}
	}
	if len(lost) > 0 {
		show := lost
		if len(show) > 10 {
			show = show[:10]
		}
		probs = append(probs, fmt.Sprintf("%d of %d words lost, e.g. %q", len(lost), len(want.words), show))
	}
	lower := strings.ToLower(out.norm)
	for _, h := range want.hosts {
		if !strings.Contains(lower, h) {
			probs = append(probs, fmt.Sprintf("link host %q lost", h))
		}
	}
	for _, s := range want.must {
		if !strings.Contains(out.norm, s) {
			probs = append(probs, fmt.Sprintf("expected text %q missing", s))
		}
	}
	return probs
}
