package slack_test

import (
	"strings"

	"github.com/slackbot/slackbot/llm/llmtest"
)

// readGrepAgent plays the read-grep sub-agent when r is one of its
// requests: it greps its handle for ERROR, keeps what Grep answered in
// grepped, and reports report(grepped). ok is false for any other request.
func readGrepAgent(r *llmtest.Recorded, grepped *string, report func(grepped string) string) (reply llmtest.Reply, ok bool) {
	if !strings.Contains(r.System, "You can only use Read and Grep tools") {
		return llmtest.Reply{}, false
	}
	res := toolResultsOf(r)
	if len(res) == 0 {
		m := readGrepHandle.FindStringSubmatch(r.System)
		if m == nil {
			return llmtest.Call("agent__final_report", argsOf(map[string]any{"status": "failure", "report_format": "text", "report_content": "no handle"})), true
		}
		return llmtest.Call("Grep", argsOf(map[string]any{"pattern": "ERROR", "path": m[1]})), true
	}
	*grepped = res[len(res)-1].Content
	return llmtest.Call("agent__final_report", argsOf(map[string]any{"status": "success", "report_format": "text", "report_content": report(*grepped)})), true
}

// grepFetched asks tool_output for every ERROR line of the handle a file
// fetch answered with, or reports "no handle" when it answered none.
func grepFetched(fetched string) llmtest.Reply {
	m := attachmentHandle.FindStringSubmatch(fetched)
	if m == nil {
		return llmtest.TextReport("no handle")
	}
	return llmtest.Call("tool_output", argsOf(map[string]any{"handle": m[1], "extract": "every ERROR line", "mode": "read-grep"}))
}
