package tools

import (
	"encoding/json"
	"testing"
)

// FuzzParseArguments: whatever a model sends as arguments, parsing never
// panics, and accepted arguments are a JSON object that passes the schema.
func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"text":"hi"}`, `{"text":1}`, `[1]`, `"x"`, `{"text":"a"} {}`, `{"text":"\u0000"}`, `{"n":1e400,"text":"x"}`, `nul`, `{"text":"é","n":3}`} {
		f.Add(s)
	}
	schema, err := CompileSchema(echoSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		raw, msg := ParseArguments("t__echo", args, schema)
		if msg != "" {
			return
		}
		v, err := DecodeJSON(raw)
		obj, isObj := v.(map[string]any)
		if err != nil || !isObj || !json.Valid(raw) {
			t.Fatalf("accepted arguments %q are not a JSON object: %v", raw, err)
		}
		if _, ok := obj["text"].(string); !ok {
			t.Fatalf("accepted arguments %q break the schema", raw)
		}
	})
}
