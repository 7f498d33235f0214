package blockkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// repNode is a JSON value that keeps the key order of objects. Repair walks
// it instead of map[string]any so that readable text salvaged from a broken
// block comes out in the order the model wrote it.
type repNode struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	str  string
	b    bool
	keys []string
	vals []*repNode
}

// repMaxDepth bounds nesting so a hostile payload cannot exhaust the stack.
const repMaxDepth = 64

var errRepTooDeep = errors.New("JSON nested too deeply")

// repParseJSON parses one JSON value. Trailing data after the value is an
// error, as it is for json.Unmarshal.
func repParseJSON(data []byte) (*repNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := repParseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	return n, nil
}

func repParseValue(dec *json.Decoder, depth int) (*repNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	return repParseFrom(dec, tok, depth)
}

func repParseFrom(dec *json.Decoder, tok json.Token, depth int) (*repNode, error) {
	if depth > repMaxDepth {
		return nil, errRepTooDeep
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &repNode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("invalid JSON: object key is not a string")
				}
				v, err := repParseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.set(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &repNode{kind: 'a'}
			for dec.More() {
				v, err := repParseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, errors.New("invalid JSON: unexpected delimiter")
	case string:
		return &repNode{kind: 's', str: t}, nil
	case json.Number:
		return &repNode{kind: 'n', str: t.String()}, nil
	case bool:
		return &repNode{kind: 'b', b: t}, nil
	case nil:
		return &repNode{kind: 'z'}, nil
	}
	return nil, errors.New("invalid JSON: unexpected token")
}

// set adds or replaces a key; a repeated key keeps its first position and
// its last value, as encoding/json does.
func (n *repNode) set(key string, v *repNode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// get returns the value of key, or nil when n is not an object or lacks it.
func (n *repNode) get(key string) *repNode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// has reports whether n is an object with a non-null key.
func (n *repNode) has(key string) bool {
	v := n.get(key)
	return v != nil && v.kind != 'z'
}

// del removes key from an object.
func (n *repNode) del(key string) {
	if n == nil || n.kind != 'o' {
		return
	}
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
			return
		}
	}
}

// text returns a scalar as a string: strings as they are, numbers and
// booleans as written; "" for null, objects and arrays.
func (n *repNode) text() string {
	if n == nil {
		return ""
	}
	switch n.kind {
	case 's', 'n':
		return n.str
	case 'b':
		if n.b {
			return "true"
		}
		return "false"
	}
	return ""
}

// strField returns key's value when it is a string, else "".
func (n *repNode) strField(key string) string {
	v := n.get(key)
	if v == nil || v.kind != 's' {
		return ""
	}
	return v.str
}

// marshal writes n back as compact JSON.
func (n *repNode) marshal() []byte {
	var buf bytes.Buffer
	n.write(&buf)
	return buf.Bytes()
}

func (n *repNode) write(buf *bytes.Buffer) {
	switch n.kind {
	case 'o':
		buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			repWriteString(buf, k)
			buf.WriteByte(':')
			n.vals[i].write(buf)
		}
		buf.WriteByte('}')
	case 'a':
		buf.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				buf.WriteByte(',')
			}
			v.write(buf)
		}
		buf.WriteByte(']')
	case 's':
		repWriteString(buf, n.str)
	case 'n':
		buf.WriteString(n.str)
	case 'b':
		if n.b {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	default:
		buf.WriteString("null")
	}
}

func repWriteString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	buf.Write(b)
}

// repSalvageStrings reads a broken JSON document token by token and returns
// the string values it could read before the error, skipping object keys and
// values of keys that never carry prose (type, ids, styles). It is how
// Repair keeps the words of a truncated payload.
func repSalvageStrings(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var (
		out []string
		// stack of containers: true for an object
		stack     []bool
		expectKey bool
		lastKey   string
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			// A payload cut off mid-string (the model ran out of tokens)
			// still has the start of that string: keep it.
			inObject := len(stack) > 0 && stack[len(stack)-1]
			if tail := repTruncatedString(data[dec.InputOffset():]); tail != "" && (!inObject || !expectKey && !repNonProseKeys[lastKey]) {
				out = append(out, tail)
			}
			break
		}
		inObject := len(stack) > 0 && stack[len(stack)-1]
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, true)
				expectKey = true
				continue
			case '[':
				stack = append(stack, false)
				expectKey = false
				continue
			default:
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
		case string:
			if inObject && expectKey {
				lastKey = t
				expectKey = false
				continue
			}
			if !inObject || !repNonProseKeys[lastKey] {
				if strings.TrimSpace(t) != "" {
					out = append(out, t)
				}
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1]
	}
	return out
}

// repTruncatedString returns the text of an unterminated JSON string at the
// start of rest (after separators), with its escapes decoded as far as they
// go, or "" when rest does not start one.
func repTruncatedString(rest []byte) string {
	rest = bytes.TrimLeft(rest, " \t\r\n,:")
	if len(rest) < 2 || rest[0] != '"' || bytes.IndexByte(rest[1:], '"') >= 0 && json.Valid(rest[:bytes.IndexByte(rest[1:], '"')+2]) {
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
