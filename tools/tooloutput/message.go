package tooloutput

import (
	"encoding/json"
	"strconv"
)

// ToolName is the name the model calls; it has no namespace.
const ToolName = "tool_output"

// Schema is tool_output's input schema.
var Schema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["handle", "extract"],
  "properties": {
    "handle": {
      "type": "string",
      "minLength": 1,
      "description": "UUID handle of the stored tool output (provided in the tool-result message: tool_output(handle = \"<uuid>\", ...))."
    },
    "extract": {
      "type": "string",
      "minLength": 1,
      "description": "Provide precise, detailed instructions about what you need from the tool output (be specific, include keys/fields/sections if known)."
    },
    "mode": {
      "type": "string",
      "enum": ["auto", "full-chunked", "read-grep", "truncate"],
      "description": "Optional override. auto=module decides; full-chunked=LLM chunk+reduce; read-grep=dynamic sub-agent with Read/Grep; truncate=keeps top and bottom, truncates in the middle."
    }
  }
}`)

// TooLargeMessage is what the model sees instead of an oversized result.
func TooLargeMessage(e *Entry) string {
	return "Tool output is too large (" + strconv.Itoa(e.Bytes) + " bytes, " + strconv.Itoa(e.Lines) + " lines, " +
		strconv.Itoa(e.Tokens) + " tokens).\n" +
		"Call tool_output(handle = \"" + e.Handle + "\", extract = \"what to extract\").\n" +
		"Provide precise and detailed instructions in `extract` about what you are looking for."
}

// successText and failureText are the two shapes of a tool_output answer.
func successText(tool, handle string, mode Mode, abstract string) string {
	return "ABSTRACT FROM TOOL OUTPUT " + tool + " WITH HANDLE " + handle + ", STRATEGY:" + string(mode) + ":\n\n" + abstract
}

func failureText(tool, handle string, mode Mode, msg string) string {
	return "TOOL_OUTPUT FAILED FOR " + tool + " WITH HANDLE " + handle + ", STRATEGY:" + string(mode) + ":\n\n" + msg
}
