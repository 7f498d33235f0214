package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A tool's input schema comes from its server: a $ref to a file or a URL
// is never read, and the schema does not compile.
func TestAToolSchemaThatReferencesAFileIsNotRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(path, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + path, "http://127.0.0.1:1/schema.json"} {
		if _, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`)); err == nil {
			t.Errorf("a schema referencing %s compiled: the reference was read", ref)
		}
	}
}
