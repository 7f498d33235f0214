package jsonish

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Fix names a repair Decode made to read a text as JSON.
type Fix string

// The repairs Decode makes.
const (
	// Unfenced: the JSON was the body of a Markdown code fence (```json).
	Unfenced Fix = "unfenced"
	// Relaxed: single-quoted strings, Python's True/False/None, unquoted
	// keys or trailing commas were rewritten as JSON.
	Relaxed Fix = "relaxed"
	// Unescaped: every quote was escaped once too often ({\"type\": …}).
	Unescaped Fix = "unescaped"
)

// Decode reads text that is meant to hold one JSON value, as a model writes
// it: strict JSON, or JSON that needs the repairs listed as Fix, which it
// returns in the order made. The error is the strict parser's when no repair
// helps. A JSON string holding JSON is returned as the string: whether to
// read it again is the caller's decision.
func Decode(text string) (*Value, []Fix, error) {
	t := strings.TrimSpace(text)
	var fixes []Fix
	if before, body, after, ok := FindFence(t); ok && before == "" && after == "" {
		t, fixes = body, append(fixes, Unfenced)
	}
	v, err := Parse([]byte(t))
	if err == nil {
		return v, fixes, nil
	}
	if u, ok := unescape(t); ok {
		if v, err2 := Parse([]byte(u)); err2 == nil {
			return v, append(fixes, Unescaped), nil
		}
		if r, changed := relax(u); changed {
			if v, err2 := Parse([]byte(r)); err2 == nil {
				return v, append(fixes, Unescaped, Relaxed), nil
			}
		}
	}
	if r, changed := relax(t); changed {
		if v, err2 := Parse([]byte(r)); err2 == nil {
			return v, append(fixes, Relaxed), nil
		}
	}
	return nil, fixes, err
}

// LooksLikeJSON reports whether t (trimmed) starts the way a JSON object or
// an array of objects, strings or arrays does, also single-quoted or
// over-escaped: text that meant to be JSON, as opposed to prose that starts
// with a bracket ("[1] see …").
func LooksLikeJSON(t string) bool {
	if len(t) < 2 || (t[0] != '{' && t[0] != '[') {
		return false
	}
	rest := strings.TrimLeft(t[1:], " \t\r\n")
	if rest == "" {
		return true
	}
	switch rest[0] {
	case '"', '\'', '\\':
		return true
	case '}':
		return t[0] == '{'
	case '{', '[', ']':
		return t[0] == '['
	}
	return false
}

// FindFence finds the first Markdown code fence in text whose body is JSON
// (starts with { or [) and whose info string, if any, names JSON or
// JavaScript. It returns the text before the fence, the body, and the text
// after it, trimmed; a fence left open runs to the end of the text.
func FindFence(text string) (before, body, after string, ok bool) {
	for start := 0; start < len(text); {
		line, next := lineAt(text, start)
		trimmed := strings.TrimLeft(line, " ")
		if fence := fenceRun(trimmed); fence != "" && jsonInfo(trimmed[len(fence):]) {
			bodyStart, end, afterStart := next, len(text), len(text)
			for pos := next; pos < len(text); {
				l, n := lineAt(text, pos)
				if t := strings.TrimSpace(l); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
					end, afterStart = pos, n
					break
				}
				pos = n
			}
			b := strings.TrimSpace(text[bodyStart:end])
			if b != "" && (b[0] == '{' || b[0] == '[') {
				return strings.TrimSpace(text[:start]), b, strings.TrimSpace(text[afterStart:]), true
			}
		}
		start = next
	}
	return "", "", "", false
}

// lineAt returns the line starting at text[start] without its newline, and
// where the next line starts.
func lineAt(text string, start int) (string, int) {
	if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
		return strings.TrimSuffix(text[start:start+i], "\r"), start + i + 1
	}
	return text[start:], len(text)
}

// fenceRun returns the run of three or more backticks or tildes line starts
// with, or "".
func fenceRun(line string) string {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	i := 0
	for i < len(line) && line[i] == line[0] {
		i++
	}
	if i < 3 {
		return ""
	}
	return line[:i]
}

func jsonInfo(info string) bool {
	switch strings.ToLower(strings.TrimSpace(info)) {
	case "", "json", "jsonc", "json5", "javascript", "js", "slack", "blockkit", "block-kit":
		return true
	}
	return false
}

// unescape removes one level of escaping from text whose quotes are all
// escaped ({\"type\": …}), reading it as the body of a JSON string.
func unescape(t string) (string, bool) {
	head := strings.TrimLeft(t, "[{ \t\r\n")
	if !strings.HasPrefix(head, `\"`) {
		return "", false
	}
	body := strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(t)
	var s string
	if json.Unmarshal([]byte(`"`+body+`"`), &s) != nil {
		return "", false
	}
	return s, true
}

// relax rewrites the near-JSON of Python and JavaScript literals as JSON:
// 'single-quoted' strings, True/False/None, unquoted object keys and
// trailing commas. It reports whether anything changed.
func relax(t string) (string, bool) {
	var b strings.Builder
	b.Grow(len(t) + 16)
	changed := false
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '"':
			j, _ := stringEnd(t, i, '"')
			b.WriteString(t[i:j])
			i = j
		case c == '\'':
			j, closed := stringEnd(t, i, '\'')
			end := j
			if closed {
				end-- // the closing quote
			}
			b.WriteString(requote(t[i+1 : end]))
			i, changed = j, true
		case c == ',':
			k := i + 1
			for k < len(t) && isSpace(t[k]) {
				k++
			}
			if k < len(t) && (t[k] == ']' || t[k] == '}') {
				i, changed = k, true
				continue
			}
			b.WriteByte(c)
			i++
		case isIdentStart(c):
			j := i
			for j < len(t) && isIdentPart(t[j]) {
				j++
			}
			word := t[i:j]
			k := j
			for k < len(t) && isSpace(t[k]) {
				k++
			}
			switch {
			case word == "True" || word == "False" || word == "None":
				b.WriteString(map[string]string{"True": "true", "False": "false", "None": "null"}[word])
				changed = true
			case k < len(t) && t[k] == ':' && word != "true" && word != "false" && word != "null":
				b.WriteString(`"` + word + `"`)
				changed = true
			default:
				b.WriteString(word)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), changed
}

// stringEnd returns the index just past the string that opens with quote
// at t[i], or len(t) when it is not closed. A single quote ends a string
// only where JSON can go on after one (before , : ] } or the end): elsewhere
// it is an apostrophe ('it's done').
func stringEnd(t string, i int, quote byte) (end int, closed bool) {
	for j := i + 1; j < len(t); j++ {
		switch t[j] {
		case '\\':
			j++
		case quote:
			if quote == '\'' {
				k := j + 1
				for k < len(t) && isSpace(t[k]) {
					k++
				}
				if k < len(t) && !strings.ContainsRune(",:]}", rune(t[k])) {
					continue
				}
			}
			return j + 1, true
		}
	}
	return len(t), false
}

// requote writes the body of a single-quoted string as a JSON string.
func requote(body string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '\\':
			if i+1 < len(body) && body[i+1] == '\'' {
				b.WriteByte('\'')
				i++
			} else if i+1 < len(body) {
				b.WriteByte('\\')
				b.WriteByte(body[i+1])
				i++
			}
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func isSpace(c byte) bool      { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

// Relax returns text with the rewrites of the Relaxed fix applied, for
// salvaging the strings of near-JSON that still does not parse.
func Relax(t string) string {
	r, _ := relax(t)
	return r
}

// Salvage reads a broken JSON document token by token and returns the
// string values it could read before the error, in order, skipping object
// keys and the values of keys for which skip reports true. A string cut off
// by the end of the text (a model that ran out of tokens) is kept as far as
// it goes.
func Salvage(data []byte, skip func(key string) bool) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var (
		out       []string
		stack     []bool // open containers, true for an object
		expectKey bool
		lastKey   string
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			inObject := len(stack) > 0 && stack[len(stack)-1]
			if tail := truncatedString(data[dec.InputOffset():]); tail != "" && (!inObject || !expectKey && !skip(lastKey)) {
				out = append(out, tail)
			}
			return out
		}
		inObject := len(stack) > 0 && stack[len(stack)-1]
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack, expectKey = append(stack, true), true
				continue
			case '[':
				stack, expectKey = append(stack, false), false
				continue
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
		case string:
			if inObject && expectKey {
				lastKey, expectKey = t, false
				continue
			}
			if (!inObject || !skip(lastKey)) && strings.TrimSpace(t) != "" {
				out = append(out, t)
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1]
	}
}

// truncatedString returns the text of an unterminated JSON string at the
// start of rest (after separators), its escapes decoded as far as they go,
// or "" when rest does not start one.
func truncatedString(rest []byte) string {
	rest = bytes.TrimLeft(rest, " \t\r\n,:")
	if len(rest) < 2 || rest[0] != '"' {
		return ""
	}
	if q := bytes.IndexByte(rest[1:], '"'); q >= 0 && json.Valid(rest[:q+2]) {
		return ""
	}
	body := rest[1:]
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, body...), '"'), &s) != nil {
		// A half escape (\u00) at the cut: drop it and decode the rest.
		i := bytes.LastIndexByte(body, '\\')
		if i < 0 || json.Unmarshal(append(append([]byte{'"'}, body[:i]...), '"'), &s) != nil {
			return ""
		}
	}
	return strings.TrimSpace(s)
}
