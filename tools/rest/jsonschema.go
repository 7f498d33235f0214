package rest

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxRefDepth bounds how many $refs deep a schema is inlined. Deeper (and
// recursive) references become an unconstrained schema: a tool's schema is
// for guiding the model, and the API checks what it receives anyway.
const maxRefDepth = 12

// converter turns the schemas of an OpenAPI document into self-contained
// JSON Schemas (draft 2020-12) for tool arguments: local $refs inlined, and
// OpenAPI 3.0's dialect — nullable, boolean exclusive bounds, example —
// rewritten in JSON Schema terms.
type converter struct {
	root map[string]any // the whole document, for resolving $refs
	v30  bool
}

func newConverter(doc *openapi3.T) (*converter, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	return &converter{root: root, v30: strings.HasPrefix(doc.OpenAPI, "3.0")}, nil
}

// schema converts one schema of the document; nil gives an empty schema.
func (c *converter) schema(s *openapi3.SchemaRef) map[string]any {
	if s == nil {
		return map[string]any{}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return map[string]any{}
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return map[string]any{}
	}
	if m, ok := c.walk(v, nil).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// walk converts a schema value; stack holds the $refs being inlined.
func (c *converter) walk(v any, stack []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v // a boolean schema
	}
	if ref, ok := m["$ref"].(string); ok {
		target, found := c.resolve(ref)
		if !found || slices.Contains(stack, ref) || len(stack) >= maxRefDepth {
			return map[string]any{}
		}
		out, _ := c.walk(target, append(stack, ref)).(map[string]any)
		if len(m) == 1 || out == nil {
			return out
		}
		// Keywords beside a $ref (OpenAPI 3.1) refine the target.
		merged := make(map[string]any, len(out)+len(m))
		for k, x := range out {
			merged[k] = x
		}
		rest := make(map[string]any, len(m))
		for k, x := range m {
			if k != "$ref" {
				rest[k] = x
			}
		}
		for k, x := range c.walk(rest, stack).(map[string]any) {
			merged[k] = x
		}
		return merged
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		switch k {
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
			if mm, ok := x.(map[string]any); ok {
				sub := make(map[string]any, len(mm))
				for name, s := range mm {
					sub[name] = c.walk(s, stack)
				}
				out[k] = sub
			}
		case "items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains",
			"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema":
			out[k] = c.walk(x, stack)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			if arr, ok := x.([]any); ok {
				sub := make([]any, len(arr))
				for i, s := range arr {
					sub[i] = c.walk(s, stack)
				}
				out[k] = sub
			}
		case "example":
			if _, has := m["examples"]; !has {
				out["examples"] = []any{x}
			}
		case "nullable", "discriminator", "xml", "externalDocs", "exclusiveMinimum", "exclusiveMaximum":
			// OpenAPI-only, or rewritten below.
		default:
			if !strings.HasPrefix(k, "x-") {
				out[k] = x
			}
		}
	}
	c.bounds(m, out, "exclusiveMinimum", "minimum")
	c.bounds(m, out, "exclusiveMaximum", "maximum")
	if m["nullable"] == true {
		nullable(out)
	}
	return out
}

// bounds rewrites OpenAPI 3.0's boolean exclusive bound, a flag on
// minimum or maximum, as JSON Schema's numeric one.
func (c *converter) bounds(in, out map[string]any, excl, incl string) {
	switch x := in[excl].(type) {
	case bool:
		if x {
			if n, ok := in[incl]; ok {
				out[excl] = n
				delete(out, incl)
			}
		}
	case nil:
	default:
		out[excl] = x
	}
}

// nullable lets a schema also accept null.
func nullable(s map[string]any) {
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(t, "null")
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		s["enum"] = append(e, nil)
	}
}

// resolve finds a local reference ("#/components/schemas/Pet") in the
// document. External references were refused when the document loaded.
func (c *converter) resolve(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	var cur any = c.root
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}
