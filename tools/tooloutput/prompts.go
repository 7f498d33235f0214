package tooloutput

import (
	"strconv"
	"strings"
)

// The extraction prompts. Each asks for the answer inside the final-answer
// wrapper with a nonce drawn for this extraction, so that text the model
// merely quotes from the document is never taken for its answer.

const mapPrompt = `You are an internal extraction agent. You must extract information from a document chunk.

SOURCE TOOL
- Name: <TOOL_NAME>
- Arguments (verbatim JSON): <TOOL_ARGS_JSON>

DOCUMENT STATS
- Bytes: <DOC_BYTES>
- Lines: <DOC_LINES>
- Tokens (estimate): <DOC_TOKENS>

CHUNK INFO
- Index: <CHUNK_INDEX> of <CHUNK_TOTAL>
- Overlap: <CHUNK_OVERLAP_PERCENT>%

WHAT TO EXTRACT
<EXTRACT_INSTRUCTIONS>

OUTPUT FORMAT (required)
- Emit exactly one XML final-report wrapper:
  <ai-agent-<NONCE>-FINAL format="text"> ... </ai-agent-<NONCE>-FINAL>
- Put your extracted result inside the wrapper.
- If no relevant data exists, output:
  NO RELEVANT DATA FOUND
  <short description of what kind of information is available in this chunk>`

const reducePrompt = `You are an internal extraction agent. You must synthesize multiple chunk extractions into one final answer.

SOURCE TOOL
- Name: <TOOL_NAME>
- Arguments (verbatim JSON): <TOOL_ARGS_JSON>

WHAT TO EXTRACT
<EXTRACT_INSTRUCTIONS>

CHUNK OUTPUTS
<CHUNK_OUTPUTS>

OUTPUT FORMAT (required)
- Emit exactly one XML final-report wrapper:
  <ai-agent-<NONCE>-FINAL format="text"> ... </ai-agent-<NONCE>-FINAL>
- If no relevant data exists, output:
  NO RELEVANT DATA FOUND
  <short description of what kind of information is available across the chunks>`

const readGrepPrompt = `You are an internal extraction agent. You can only use Read and Grep tools.

IMPORTANT: The handle is the filename.
Use the filename exactly as given when calling Read or Grep.

SOURCE TOOL
- Name: <TOOL_NAME>
- Arguments (verbatim JSON): <TOOL_ARGS_JSON>
- Handle/filename: <HANDLE_FILENAME>
- Root directory: <SESSION_TMP_DIR>

WHAT TO EXTRACT
<EXTRACT_INSTRUCTIONS>

OUTPUT FORMAT (required)
- Emit exactly one XML final-report wrapper:
  <ai-agent-<NONCE>-FINAL format="text"> ... </ai-agent-<NONCE>-FINAL>
- If no relevant data exists, output:
  NO RELEVANT DATA FOUND
  <short description of what kind of information is available in the file>`

// notFound opens an answer that found nothing relevant.
const notFound = "NO RELEVANT DATA FOUND"

// fill replaces each <KEY> of prompt with its value in one pass, so a
// value that happens to contain a placeholder is left alone.
func fill(prompt string, kv ...string) string {
	pairs := make([]string, 0, len(kv))
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, "<"+kv[i]+">", kv[i+1])
	}
	return strings.NewReplacer(pairs...).Replace(prompt)
}

// mapSystem is the map prompt for chunk index (1-based) of total.
func mapSystem(e *Entry, extract, nonce string, index, total, overlap int) string {
	return fill(mapPrompt,
		"TOOL_NAME", e.Tool, "TOOL_ARGS_JSON", e.Args,
		"DOC_BYTES", strconv.Itoa(e.Bytes), "DOC_LINES", strconv.Itoa(e.Lines), "DOC_TOKENS", strconv.Itoa(e.Tokens),
		"CHUNK_INDEX", strconv.Itoa(index), "CHUNK_TOTAL", strconv.Itoa(total),
		"CHUNK_OVERLAP_PERCENT", strconv.Itoa(overlap),
		"EXTRACT_INSTRUCTIONS", extract, "NONCE", nonce)
}

func reduceSystem(e *Entry, extract, nonce, outputs string) string {
	return fill(reducePrompt,
		"TOOL_NAME", e.Tool, "TOOL_ARGS_JSON", e.Args,
		"EXTRACT_INSTRUCTIONS", extract, "CHUNK_OUTPUTS", outputs, "NONCE", nonce)
}

func readGrepSystem(e *Entry, dir, extract, nonce string) string {
	return fill(readGrepPrompt,
		"TOOL_NAME", e.Tool, "TOOL_ARGS_JSON", e.Args,
		"HANDLE_FILENAME", e.Handle, "SESSION_TMP_DIR", dir,
		"EXTRACT_INSTRUCTIONS", extract, "NONCE", nonce)
}

// The user messages that go with the prompts above.

func mapUser(chunk string) string {
	return "Extract from this chunk as instructed. The chunk follows between the markers.\n\n" +
		"-----BEGIN CHUNK-----\n" + chunk + "\n-----END CHUNK-----"
}

const reduceUser = "Synthesize the chunk outputs above into one final answer as instructed."

func readGrepUser(e *Entry, extract string) string {
	return "Use Read and Grep on the file " + e.Handle + " (" + strconv.Itoa(e.Bytes) + " bytes, " +
		strconv.Itoa(e.Lines) + " lines) to extract:\n\n" + extract
}
