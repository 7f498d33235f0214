package config

import "testing"

// A REST tool's parameters are a JSON Schema checked when the file loads:
// a valid one loads (its location is the file, not a fragment the schema
// compiler would take for an anchor), an invalid one is an error naming
// the key.
func TestARestToolsParametersLoadAndAreChecked(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"slackbot.yaml": baseConfig + `
rest_tools:
  hook:
    url: https://api.example.com/hook
    method: POST
    parameters:
      type: object
      properties:
        title: {type: string, maxLength: 80}
        labels: {type: array, items: {$ref: "#/$defs/label"}}
      required: [title]
      $defs:
        label: {type: string}
`})
	if p := cfg.RestTools["hook"].Parameters; p == nil || p["required"] == nil {
		t.Fatalf("parameters not kept: %v", p)
	}
	_, err := loadFiles(t, map[string]string{"slackbot.yaml": baseConfig + `
rest_tools:
  hook:
    url: https://api.example.com/hook
    parameters:
      type: objekt
`})
	wantErrors(t, err, "rest_tools.hook.parameters: is not a valid JSON Schema")
}
