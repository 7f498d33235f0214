package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// Names of the optional built-in tools. An agent gets them when one of its
// tools globs matches the name (agent__final_report is always offered).
const (
	TaskStatusTool = "agent__task_status"
	BatchTool      = "agent__batch"
	FinishTool     = "finish"
)

// TaskStatus is what the model said with agent__task_status: where the
// task stands, what is done and pending, and what it does now.
type TaskStatus struct {
	Status              string `json:"status"` // starting | in-progress | completed
	Done                string `json:"done"`
	Pending             string `json:"pending"`
	Now                 string `json:"now"`
	ReadyForFinalReport bool   `json:"ready_for_final_report"`
	NeedToRunMoreTools  bool   `json:"need_to_run_more_tools"`
}

// Complete reports whether the status forces the final turn: only when the
// task is completed, ready for the report and needs no more tools.
func (t *TaskStatus) Complete() bool {
	return t.Status == "completed" && t.ReadyForFinalReport && !t.NeedToRunMoreTools
}

var (
	taskStatusSchema = json.RawMessage(`{"type":"object","additionalProperties":false,` +
		`"required":["status","done","pending","now","ready_for_final_report","need_to_run_more_tools"],` +
		`"properties":{` +
		`"status":{"type":"string","enum":["starting","in-progress","completed"],"description":"Where the task stands."},` +
		`"done":{"type":"string","description":"What has been completed so far."},` +
		`"pending":{"type":"string","description":"What remains to be done."},` +
		`"now":{"type":"string","description":"The step you are taking right now, in a few words (shown to the user as progress)."},` +
		`"ready_for_final_report":{"type":"boolean","description":"True when you have enough to write the final report."},` +
		`"need_to_run_more_tools":{"type":"boolean","description":"True when more tools must run before the final report."}}}`)

	batchSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["calls"],` +
		`"properties":{"calls":{"type":"array","minItems":1,"description":"Independent tool calls to run in parallel.",` +
		`"items":{"type":"object","additionalProperties":false,"required":["tool","parameters"],` +
		`"properties":{"tool":{"type":"string","description":"Full tool name."},` +
		`"parameters":{"type":"object","description":"The tool's arguments."}}}}}}`)

	finishSchema = json.RawMessage(`{"type":"object","additionalProperties":false,` +
		`"properties":{"note":{"type":"string","description":"Optional closing note: the answer or what was done."}}}`)
)

// builtinDefs returns the definitions of the built-ins, final report first.
func builtinDefs(format string) map[string]llm.ToolDef {
	return map[string]llm.ToolDef{
		FinalReportTool: {Name: FinalReportTool, Schema: finalReportSchema(format),
			Description: "Deliver your final answer to the user. Call it exactly once, when you are done; it ends the session. " +
				"The answer goes in the field the schema requires; text outside this call is not shown."},
		TaskStatusTool: {Name: TaskStatusTool, Schema: taskStatusSchema,
			Description: "Report progress on the task: what is done, what is pending, what you are doing now. " +
				"The user sees 'now' as live progress. Set status completed, ready_for_final_report true and need_to_run_more_tools false when only the final report remains."},
		BatchTool: {Name: BatchTool, Schema: batchSchema,
			Description: "Run several independent tool calls in parallel and get all their results at once. " +
				"Cannot contain agent__batch or agent__final_report."},
		FinishTool: {Name: FinishTool, Schema: finishSchema,
			Description: "Signal the current task is complete. Call this before ending when output is restricted."},
	}
}

var builtinSchemas = func() map[string]*tools.Schema {
	m := map[string]*tools.Schema{}
	for name, def := range builtinDefs("markdown") {
		if name == FinalReportTool {
			continue // validated by parseReport, which knows the aliases
		}
		s, err := tools.CompileSchema(def.Schema)
		if err != nil {
			panic(fmt.Sprintf("built-in schema %s: %v", name, err))
		}
		m[name] = s
	}
	return m
}()

// batchCall is one entry of agent__batch.
type batchCall struct {
	Tool       string          `json:"tool"`
	Parameters json.RawMessage `json:"parameters"`
}

// formatBatch joins the results of a batch as plain text, so that results
// that are themselves JSON are not escaped a second time.
func formatBatch(calls []batchCall, results []callOutcome) string {
	var b strings.Builder
	for i, c := range calls {
		status := "ok"
		if results[i].isError {
			status = "error"
		}
		fmt.Fprintf(&b, "=== [%d] %s (%s) ===\n%s\n", i+1, c.Tool, status, results[i].content)
	}
	return strings.TrimRight(b.String(), "\n")
}
