package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// compile compiles the requested schema for the final check of an answer.
// Schemas without "$schema" are read as draft 2020-12.
func compile(doc json.RawMessage) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("the requested schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// A schema from a server or a model references nothing outside
	// itself: no file, no URL is ever read for it.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const loc = "mem:///requested.json"
	if err := c.AddResource(loc, v); err != nil {
		return nil, fmt.Errorf("the requested schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("the requested schema does not compile: %w", err)
	}
	return s, nil
}

var printer = message.NewPrinter(language.English)

// check validates content against the whole schema, which catches what
// the field checks do not know (a pattern, a constraint the server added);
// each violation is put on its field, or on "" for the whole form.
func check(s *jsonschema.Schema, content map[string]any, problems Problems) {
	if s == nil {
		return
	}
	// Round-trip through JSON so the values have the types the validator
	// expects (json.Number for numbers).
	b, err := json.Marshal(content)
	if err != nil {
		problems[""] = "The answer cannot be encoded."
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		problems[""] = "The answer cannot be encoded."
		return
	}
	err = s.Validate(v)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return
	}
	leaves(ve, problems)
}

func leaves(e *jsonschema.ValidationError, problems Problems) {
	if len(e.Causes) == 0 {
		field := ""
		if len(e.InstanceLocation) > 0 {
			field = e.InstanceLocation[0]
		}
		if _, seen := problems[field]; !seen {
			msg := e.ErrorKind.LocalizedString(printer)
			if msg != "" {
				msg = strings.ToUpper(msg[:1]) + msg[1:] + "."
			}
			problems[field] = msg
		}
		return
	}
	for _, c := range e.Causes {
		leaves(c, problems)
	}
}
