package tooloutput

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestTooLargeMessageIsExact(t *testing.T) {
	t.Parallel()
	e := &Entry{Handle: "6f1c2a9e-1b2c-4d3e-8f90-0123456789ab", Bytes: 123456, Lines: 789, Tokens: 45678}
	want := "Tool output is too large (123456 bytes, 789 lines, 45678 tokens).\n" +
		"Call tool_output(handle = \"6f1c2a9e-1b2c-4d3e-8f90-0123456789ab\", extract = \"what to extract\").\n" +
		"Provide precise and detailed instructions in `extract` about what you are looking for."
	if got := TooLargeMessage(e); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSchemaIsExact(t *testing.T) {
	t.Parallel()
	want := `{"type":"object","additionalProperties":false,"required":["handle","extract"],"properties":{` +
		`"handle":{"type":"string","minLength":1,"description":"UUID handle of the stored tool output (provided in the tool-result message: tool_output(handle = \"<uuid>\", ...))."},` +
		`"extract":{"type":"string","minLength":1,"description":"Provide precise, detailed instructions about what you need from the tool output (be specific, include keys/fields/sections if known)."},` +
		`"mode":{"type":"string","enum":["auto","full-chunked","read-grep","truncate"],"description":"Optional override. auto=module decides; full-chunked=LLM chunk+reduce; read-grep=dynamic sub-agent with Read/Grep; truncate=keeps top and bottom, truncates in the middle."}}}`
	var got bytes.Buffer
	if err := json.Compact(&got, Schema); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("schema\n%s\nwant\n%s", got.Bytes(), want)
	}
	var v map[string]any
	if err := json.Unmarshal(Schema, &v); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if ToolName != "tool_output" {
		t.Error("the tool is not named tool_output")
	}
}
