package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles a JSON Schema held as decoded YAML. loc (a file
// path or URL) is where relative $refs resolve from; the schema is never
// fetched from it. Only files can be referenced: loading makes no network
// calls.
func compileSchema(doc any, loc string) (*jsonschema.Schema, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("cannot be written as JSON: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(loc, v); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, flatten(err)
	}
	return s, nil
}

// flatten puts a multi-line error of the schema compiler on one line,
// keeping the lines that say what is wrong and where.
func flatten(err error) error {
	var keep []string
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-"))
		switch {
		case l == "",
			strings.Contains(l, "is not valid against metaschema"),
			strings.HasPrefix(l, "jsonschema validation failed"),
			strings.HasSuffix(l, "'allOf' failed"),
			strings.HasSuffix(l, "'anyOf' failed"):
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) == 0 {
		return err
	}
	return fmt.Errorf("%s", strings.Join(keep, "; "))
}

// readSchema reads a schema file, JSON or (by extension) YAML.
func readSchema(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("schema file %s does not exist (schema_ref is relative to the agent file)", path)
	}
	if err != nil {
		return nil, err
	}
	var m map[string]any
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		err = yaml.Unmarshal(b, &m)
	default:
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not a JSON Schema object: %v", path, err)
	}
	return m, nil
}

// jsonShape returns v as encoding/json would decode it (float64 numbers,
// map[string]any objects), so consumers see one shape whatever the source.
func jsonShape(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// Validator returns the compiled output schema, nil when there is none.
// Load compiles every agent's schema where the agent file lies, so that
// $refs to sibling files resolve; an Output built in code is compiled here,
// and its schema cannot refer to files.
func (o *Output) Validator() (*jsonschema.Schema, error) {
	if o.Compiled != nil || len(o.Schema) == 0 {
		return o.Compiled, nil
	}
	return compileSchema(o.Schema, "mem:///output-schema.json")
}

// resolveSchema checks an agent's output key and compiles its schema.
func (a *Agent) resolveSchema(w *walker) {
	o := &a.Output
	if o.Schema != nil && o.SchemaRef != "" {
		w.errorf("output.schema_ref", "set output.schema or output.schema_ref, not both")
		return
	}
	if o.Format != FormatJSON {
		for _, k := range []string{"schema", "schema_ref"} {
			if w.present["output."+k] {
				w.errorf("output."+k, "a schema applies only to json output; set output.format: json, or remove %s", k)
			}
		}
		return
	}
	loc, _ := filepath.Abs(a.Path)
	if o.SchemaRef != "" {
		ref := resolve(filepath.Dir(a.Path), o.SchemaRef)
		m, err := readSchema(ref)
		if err != nil {
			w.errorf("output.schema_ref", "%v", err)
			return
		}
		o.Schema = m
		loc, _ = filepath.Abs(ref)
	}
	if o.Schema == nil {
		return
	}
	key := "output.schema"
	if o.SchemaRef != "" {
		key = "output.schema_ref"
	}
	s, err := compileSchema(o.Schema, loc)
	if err != nil {
		w.errorf(key, "is not a valid JSON Schema: %v", err)
		return
	}
	o.Schema = jsonShape(o.Schema)
	o.Compiled = s
}
