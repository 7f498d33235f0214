package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema. The zero value (nil) accepts anything.
type Schema struct {
	s *jsonschema.Schema
}

// NewSchema wraps a schema compiled elsewhere (an agent's output schema,
// compiled when the configuration is loaded).
func NewSchema(s *jsonschema.Schema) *Schema {
	if s == nil {
		return nil
	}
	return &Schema{s: s}
}

// CompileSchema compiles a JSON Schema document. Schemas without "$schema"
// are read as draft 2020-12, which also accepts the draft-07 documents MCP
// servers commonly send.
func CompileSchema(doc json.RawMessage) (*Schema, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	return compileSchemaValue(v)
}

// compileSchemaValue compiles a schema already decoded into Go values.
func compileSchemaValue(v any) (*Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// A schema from a server or a model references nothing outside
	// itself: no file, no URL is ever read for it.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, v); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return &Schema{s: s}, nil
}

var printer = message.NewPrinter(language.English)

// Validate checks v (decoded with DecodeJSON, so numbers are json.Number)
// and returns an error listing every violation as "at /path: problem".
func (s *Schema) Validate(v any) error {
	if s == nil || s.s == nil {
		return nil
	}
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var lines []string
	collectLeaves(ve, &lines)
	sort.Strings(lines)
	return &ValidationError{Problems: lines}
}

func collectLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) == 0 {
		loc := "/" + strings.Join(e.InstanceLocation, "/")
		*out = append(*out, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

// ValidationError lists the ways a value breaks its schema.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "arguments do not match the schema: " + strings.Join(e.Problems, "; ")
}

// DecodeJSON decodes one JSON value with numbers kept as json.Number, the
// form schema validation wants, and refuses trailing data.
func DecodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}
