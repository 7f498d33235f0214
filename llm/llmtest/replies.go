package llmtest

import "encoding/json"

// FinalReportTool is the tool an agent delivers its answer through; the
// agent package's tests check that it is agent.FinalReportTool.
const FinalReportTool = "agent__final_report"

// Call is a reply calling one tool.
func Call(name, args string) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Arguments: args}}}
}

// Calls is a reply calling several tools in one turn.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Report is a final report in format with status, its answer in
// report_content.
func Report(format, status, content string) Reply {
	return Call(FinalReportTool, jsonArgs(map[string]any{"status": status, "report_format": format, "report_content": content}))
}

// SlackReport is a successful final report of Block Kit messages.
func SlackReport(messages any) Reply {
	return Call(FinalReportTool, jsonArgs(map[string]any{"status": "success", "report_format": "slack-block-kit", "messages": messages}))
}

// TextReport is a successful Block Kit final report written as Markdown,
// through report_content.
func TextReport(content string) Reply { return Report("slack-block-kit", "success", content) }

// Section is one Block Kit section block of mrkdwn, as a model writes it.
func Section(text string) map[string]any {
	return map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}}
}

// jsonArgs encodes v as a tool call's arguments.
func jsonArgs(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values are passed
	}
	return string(b)
}
