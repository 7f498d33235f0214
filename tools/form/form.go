// Package form reads the requested schema of an MCP elicitation as a form
// a person can fill in — text, number, integer, yes/no, single and
// multiple choice, with the server's defaults — and checks what was filled
// in against the schema, with a problem in words per field. Front ends
// (Slack's modal, the terminal) draw the fields and hand back what the
// person typed or chose as strings; Answer turns that into typed content.
package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind is the kind of input a field takes.
type Kind string

// The kinds of field a requested schema may hold.
const (
	Text        Kind = "text"
	Number      Kind = "number"
	Integer     Kind = "integer"
	Boolean     Kind = "boolean"
	Select      Kind = "select"       // one of Options
	MultiSelect Kind = "multi_select" // any of Options
)

// Option is one choice of a select field.
type Option struct {
	Value string // what is sent back
	Title string // what a person reads; Value when the schema gives none
}

// Field is one property of the requested schema.
type Field struct {
	Name        string
	Title       string // the schema's title, else Name
	Description string
	Kind        Kind
	Required    bool
	Format      string // text: email, uri, date or date-time
	MinLength   *int
	MaxLength   *int
	Minimum     *float64
	Maximum     *float64
	MinItems    *int
	MaxItems    *int
	Options     []Option
	// Default is the server's default as the person would type or choose
	// it (a number in decimal, "true"/"false", option values); nil for none.
	Default []string
}

// Form is a requested schema read as fields, in the schema's order.
type Form struct {
	Fields []Field
	schema *jsonschema.Schema
}

// maxFields bounds a form: a schema with more properties is not a form a
// person fills in.
const maxFields = 50

// Parse reads a requested schema. It refuses what form mode does not allow
// — nested objects, arrays other than of enums, references — with an
// error in words.
func Parse(schema json.RawMessage) (*Form, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return &Form{}, nil
	}
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("the requested schema is not a JSON object: %w", err)
	}
	if top.Type != "" && top.Type != "object" {
		return nil, fmt.Errorf("the requested schema is of type %q, not an object", top.Type)
	}
	names, props, err := orderedProperties(top.Properties)
	if err != nil {
		return nil, err
	}
	if len(names) > maxFields {
		return nil, fmt.Errorf("the requested schema has %d fields; at most %d are shown", len(names), maxFields)
	}
	required := map[string]bool{}
	for _, r := range top.Required {
		required[r] = true
	}
	f := &Form{}
	for _, name := range names {
		fd, err := parseField(name, props[name])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		fd.Required = required[name]
		f.Fields = append(f.Fields, fd)
	}
	if f.schema, err = compile(schema); err != nil {
		return nil, err
	}
	return f, nil
}

// orderedProperties decodes "properties" keeping the order the server
// wrote them in, the order a person should see.
func orderedProperties(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	props := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, props, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("the requested schema's properties are not an object")
	}
	var names []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("the requested schema's properties: %w", err)
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("the requested schema's property %q: %w", name, err)
		}
		if _, dup := props[name]; !dup {
			names = append(names, name)
		}
		props[name] = v
	}
	return names, props, nil
}

type propSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []constTitle    `json:"oneOf"`
	AnyOf       []constTitle    `json:"anyOf"`
	Items       *propSchema     `json:"items"`
	Default     json.RawMessage `json:"default"`
}

type constTitle struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

func parseField(name string, raw json.RawMessage) (Field, error) {
	var p propSchema
	if err := json.Unmarshal(raw, &p); err != nil {
		return Field{}, fmt.Errorf("not a schema: %w", err)
	}
	f := Field{Name: name, Title: strings.TrimSpace(p.Title), Description: strings.TrimSpace(p.Description),
		Format: p.Format, MinLength: p.MinLength, MaxLength: p.MaxLength, Minimum: p.Minimum, Maximum: p.Maximum,
		MinItems: p.MinItems, MaxItems: p.MaxItems}
	if f.Title == "" {
		f.Title = name
	}
	switch {
	case p.Type == "array":
		if p.Items == nil {
			return Field{}, errors.New("a list without items is not a form field")
		}
		opts := options(*p.Items)
		if len(opts) == 0 {
			return Field{}, errors.New("only lists of choices are form fields")
		}
		f.Kind, f.Options = MultiSelect, opts
	case len(p.Enum) > 0 || len(p.OneOf) > 0:
		f.Kind, f.Options = Select, options(p)
	case p.Type == "string":
		f.Kind = Text
	case p.Type == "number":
		f.Kind = Number
	case p.Type == "integer":
		f.Kind = Integer
	case p.Type == "boolean":
		f.Kind = Boolean
	default:
		return Field{}, fmt.Errorf("type %q is not a form field (text, number, integer, boolean or a choice)", p.Type)
	}
	if d := bytes.TrimSpace(p.Default); len(d) > 0 && string(d) != "null" {
		def, err := defaultStrings(f, d)
		if err != nil {
			return Field{}, err
		}
		f.Default = def
	}
	return f, nil
}

// options reads the choices of an enum (titles from enumNames) or of a
// oneOf/anyOf of consts with titles.
func options(p propSchema) []Option {
	var out []Option
	for i, v := range p.Enum {
		o := Option{Value: scalar(v)}
		if i < len(p.EnumNames) {
			o.Title = p.EnumNames[i]
		}
		out = append(out, o)
	}
	for _, c := range append(append([]constTitle(nil), p.OneOf...), p.AnyOf...) {
		if c.Const == nil {
			continue
		}
		out = append(out, Option{Value: scalar(c.Const), Title: c.Title})
	}
	for i := range out {
		if strings.TrimSpace(out[i].Title) == "" {
			out[i].Title = out[i].Value
		}
	}
	return out
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// defaultStrings renders a field's default in the form a person enters it.
func defaultStrings(f Field, raw json.RawMessage) ([]string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("default: %w", err)
	}
	bad := fmt.Errorf("the default %s does not fit a %s field", raw, f.Kind)
	switch f.Kind {
	case Text, Select:
		s, ok := v.(string)
		if !ok {
			return nil, bad
		}
		return []string{s}, nil
	case Number, Integer:
		n, ok := v.(float64)
		if !ok {
			return nil, bad
		}
		return []string{strconv.FormatFloat(n, 'f', -1, 64)}, nil
	case Boolean:
		b, ok := v.(bool)
		if !ok {
			return nil, bad
		}
		return []string{strconv.FormatBool(b)}, nil
	case MultiSelect:
		list, ok := v.([]any)
		if !ok {
			return nil, bad
		}
		out := make([]string, 0, len(list))
		for _, e := range list {
			out = append(out, scalar(e))
		}
		return out, nil
	}
	return nil, bad
}

// Initial is what the form shows before anyone touches it: each field's
// default. Submitted unchanged, it is what a person pressing Submit on the
// prefilled form sends.
func (f *Form) Initial() map[string][]string {
	out := map[string][]string{}
	for _, fd := range f.Fields {
		if fd.Default != nil {
			out[fd.Name] = append([]string(nil), fd.Default...)
		}
	}
	return out
}

// Problems maps a field's name to what is wrong with its value, in words.
type Problems map[string]string

// Error lists the problems, field by field.
func (p Problems) Error() string {
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", n, p[n])
	}
	return b.String()
}

// Answer turns what a person entered (a field's strings: one for text,
// numbers, yes/no and a single choice, any number for a multiple choice;
// a missing or blank field is left out) into the content to send back:
// typed values, each omitted field that has a default given its default.
// Every field is checked against the schema; the problems come back per
// field, and content is nil while there are any.
func (f *Form) Answer(in map[string][]string) (map[string]any, Problems) {
	content := map[string]any{}
	problems := Problems{}
	known := map[string]bool{}
	for _, fd := range f.Fields {
		known[fd.Name] = true
		vals := nonBlank(in[fd.Name], fd.Kind)
		if len(vals) == 0 && fd.Default != nil {
			vals = fd.Default
		}
		if len(vals) == 0 && fd.Kind != MultiSelect {
			if fd.Required {
				problems[fd.Name] = "This field is required."
			}
			continue
		}
		v, msg := fd.value(vals)
		if msg != "" {
			problems[fd.Name] = msg
			continue
		}
		if fd.Kind == MultiSelect && len(vals) == 0 && !fd.Required && fd.MinItems == nil {
			continue
		}
		content[fd.Name] = v
	}
	for name := range in {
		if !known[name] {
			problems[name] = "The form has no such field."
		}
	}
	if len(problems) == 0 {
		check(f.schema, content, problems)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return content, nil
}

func nonBlank(vals []string, k Kind) []string {
	var out []string
	for _, v := range vals {
		if k != Text || strings.TrimSpace(v) == "" {
			v = strings.TrimSpace(v)
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// value types and checks one field's entry; a problem is in words.
func (fd Field) value(vals []string) (any, string) {
	if fd.Kind != MultiSelect && len(vals) > 1 {
		return nil, "Enter one value."
	}
	switch fd.Kind {
	case Text:
		return fd.text(vals[0])
	case Number, Integer:
		return fd.number(vals[0])
	case Boolean:
		switch strings.ToLower(vals[0]) {
		case "true", "yes", "y":
			return true, ""
		case "false", "no", "n":
			return false, ""
		}
		return nil, "Answer yes or no."
	case Select:
		if !fd.hasOption(vals[0]) {
			return nil, "Choose one of the options."
		}
		return vals[0], ""
	case MultiSelect:
		seen := map[string]bool{}
		out := []any{}
		for _, v := range vals {
			if !fd.hasOption(v) {
				return nil, fmt.Sprintf("%q is not one of the options.", v)
			}
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		if fd.Required && len(out) == 0 {
			return nil, "Choose at least one option."
		}
		if fd.MinItems != nil && len(out) < *fd.MinItems {
			return nil, fmt.Sprintf("Choose at least %d.", *fd.MinItems)
		}
		if fd.MaxItems != nil && len(out) > *fd.MaxItems {
			return nil, fmt.Sprintf("Choose at most %d.", *fd.MaxItems)
		}
		return out, ""
	}
	return nil, "This field cannot be answered."
}

func (fd Field) hasOption(v string) bool {
	for _, o := range fd.Options {
		if o.Value == v {
			return true
		}
	}
	return false
}

func (fd Field) text(s string) (any, string) {
	n := len([]rune(s))
	if fd.MinLength != nil && n < *fd.MinLength {
		return nil, fmt.Sprintf("Enter at least %d characters.", *fd.MinLength)
	}
	if fd.MaxLength != nil && n > *fd.MaxLength {
		return nil, fmt.Sprintf("Enter at most %d characters.", *fd.MaxLength)
	}
	if msg := checkFormat(fd.Format, s); msg != "" {
		return nil, msg
	}
	return s, ""
}

func (fd Field) number(s string) (any, string) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != x || x > 1e308 || x < -1e308 {
		if fd.Kind == Integer {
			return nil, "Enter a whole number."
		}
		return nil, "Enter a number."
	}
	if fd.Kind == Integer && x != float64(int64(x)) {
		return nil, "Enter a whole number."
	}
	if fd.Minimum != nil && x < *fd.Minimum {
		return nil, "Enter " + num(*fd.Minimum) + " or more."
	}
	if fd.Maximum != nil && x > *fd.Maximum {
		return nil, "Enter " + num(*fd.Maximum) + " or less."
	}
	if fd.Kind == Integer {
		return int64(x), ""
	}
	return x, ""
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
