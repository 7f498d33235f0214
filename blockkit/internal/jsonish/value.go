// Package jsonish reads the JSON a language model writes: strict JSON into a
// tree that keeps the order of object keys, and the near-JSON models also
// produce (inside a Markdown code fence, single-quoted, escaped once too
// often, inside a JSON string, cut off mid-way) by repairing the text first.
// It knows nothing of Slack.
package jsonish

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Kind is the type of a JSON value.
type Kind byte

// The kinds of JSON value.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a JSON value. Objects keep their keys in the order written, so
// text read from them comes out in the order the model wrote it.
type Value struct {
	Kind Kind
	Str  string // a String's text or a Number as written
	Bool bool
	Keys []string // an Object's keys, parallel to Vals
	Vals []*Value // an Object's values or an Array's items
}

// maxDepth bounds nesting so a hostile payload cannot exhaust the stack.
const maxDepth = 64

var errTooDeep = errors.New("JSON nested too deeply")

// Parse reads one strict JSON value. Data after the value is an error, as
// it is for json.Unmarshal.
func Parse(data []byte) (*Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth int) (*Value, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &Value{Kind: Object}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("invalid JSON: object key is not a string")
				}
				item, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.Set(key, item)
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := &Value{Kind: Array}
			for dec.More() {
				item, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.Vals = append(v.Vals, item)
			}
			_, err := dec.Token()
			return v, err
		}
		return nil, errors.New("invalid JSON: unexpected delimiter")
	case string:
		return &Value{Kind: String, Str: t}, nil
	case json.Number:
		return &Value{Kind: Number, Str: t.String()}, nil
	case bool:
		return &Value{Kind: Bool, Bool: t}, nil
	case nil:
		return &Value{Kind: Null}, nil
	}
	return nil, errors.New("invalid JSON: unexpected token")
}

// NewString returns a String value.
func NewString(s string) *Value { return &Value{Kind: String, Str: s} }

// Set adds or replaces a key of an Object; a repeated key keeps its first
// position and its last value, as encoding/json does.
func (v *Value) Set(key string, val *Value) {
	for i, k := range v.Keys {
		if k == key {
			v.Vals[i] = val
			return
		}
	}
	v.Keys = append(v.Keys, key)
	v.Vals = append(v.Vals, val)
}

// Get returns the value of key, or nil when v is not an Object or lacks it.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for i, k := range v.Keys {
		if k == key {
			return v.Vals[i]
		}
	}
	return nil
}

// Has reports whether v is an Object with key set to something but null.
func (v *Value) Has(key string) bool {
	x := v.Get(key)
	return x != nil && x.Kind != Null
}

// Del removes key from an Object.
func (v *Value) Del(key string) {
	if v == nil || v.Kind != Object {
		return
	}
	for i, k := range v.Keys {
		if k == key {
			v.Keys = append(v.Keys[:i:i], v.Keys[i+1:]...)
			v.Vals = append(v.Vals[:i:i], v.Vals[i+1:]...)
			return
		}
	}
}

// Copy returns a shallow copy of v: its own key and value lists, shared items.
func (v *Value) Copy() *Value {
	c := *v
	c.Keys = append([]string(nil), v.Keys...)
	c.Vals = append([]*Value(nil), v.Vals...)
	return &c
}

// Text returns a scalar as a string: a String as it is, a Number or Bool as
// written; "" for null, objects and arrays.
func (v *Value) Text() string {
	if v == nil {
		return ""
	}
	switch v.Kind {
	case String, Number:
		return v.Str
	case Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	}
	return ""
}

// GetString returns key's value when it is a String, else "".
func (v *Value) GetString(key string) string {
	x := v.Get(key)
	if x == nil || x.Kind != String {
		return ""
	}
	return x.Str
}

// Items returns an Array's items, or v alone when it is anything else but
// null: models write one item where a list belongs.
func (v *Value) Items() []*Value {
	switch {
	case v == nil || v.Kind == Null:
		return nil
	case v.Kind == Array:
		return v.Vals
	}
	return []*Value{v}
}

// Marshal writes v back as compact JSON.
func (v *Value) Marshal() []byte {
	var buf bytes.Buffer
	v.write(&buf)
	return buf.Bytes()
}

func (v *Value) write(buf *bytes.Buffer) {
	switch v.Kind {
	case Object:
		buf.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			v.Vals[i].write(buf)
		}
		buf.WriteByte('}')
	case Array:
		buf.WriteByte('[')
		for i, item := range v.Vals {
			if i > 0 {
				buf.WriteByte(',')
			}
			item.write(buf)
		}
		buf.WriteByte(']')
	case String:
		writeString(buf, v.Str)
	case Number:
		buf.WriteString(v.Str)
	case Bool:
		if v.Bool {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	default:
		buf.WriteString("null")
	}
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	buf.Write(b)
}
