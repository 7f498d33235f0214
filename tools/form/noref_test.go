package form

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A requested schema is a server's words: a $ref to a file or a URL is
// never read — the form is refused, and nothing of the file shows.
func TestASchemaThatReferencesAFileIsRefusedUnread(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(path, []byte(`{"type":"string","const":"the-secret-inside"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + path, "http://127.0.0.1:1/schema.json"} {
		schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","$ref":"` + ref + `"}}}`)
		_, err := Parse(schema)
		if err == nil {
			t.Fatalf("a schema referencing %s was shown as a form", ref)
		}
		if strings.Contains(err.Error(), "the-secret-inside") {
			t.Fatalf("the refusal shows the file: %v", err)
		}
	}
}
