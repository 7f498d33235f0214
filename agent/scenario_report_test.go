package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
)

// Scenarios of agent__final_report: the regular way a session ends.

// The scripted model's report replies name the tool the session offers, or
// every test that answers through them would be testing a stranger.
func TestTheScriptedModelsReportToolIsTheSessions(t *testing.T) {
	t.Parallel()
	if llmtest.FinalReportTool != FinalReportTool {
		t.Fatalf("llmtest reports through %q, the session offers %q", llmtest.FinalReportTool, FinalReportTool)
	}
}

func TestAToolCallThenAFinalReportEndsWithTheReportFromTheCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withTools(toolbox{"echo": echo()}), script(
		llmtest.Call("test__echo", `{"text":"ping"}`),
		llmtest.Report(config.FormatMarkdown, StatusSuccess, "The echo said **ping**."),
	))
	res := h.run("Echo ping, then report.")

	wantReport(t, res, StatusSuccess, SourceToolCall)
	if res.Report.Content != "The echo said **ping**." || res.Report.Format != config.FormatMarkdown {
		t.Errorf("report = %q in %s", res.Report.Content, res.Report.Format)
	}
	if res.Err != nil {
		t.Errorf("Err = %v, want nil", res.Err)
	}
	wantTurns(t, res, 2)
	if res.ToolCalls != 2 {
		t.Errorf("tool calls = %d, want 2 (the echo and the report)", res.ToolCalls)
	}
	reqs := h.wantRequests(2)
	wantOpenTurn(t, reqs[0], FinalReportTool, "test__echo")
	wantOpenTurn(t, reqs[1], FinalReportTool, "test__echo")
	if first := reqs[0].Messages; len(first) != 1 || first[0].Role != llm.RoleUser || first[0].Content != "Echo ping, then report." {
		t.Errorf("first request messages = %s, want the user prompt alone", dump(first))
	}
	if !strings.HasPrefix(reqs[0].System, h.agent.Prompt) || !strings.Contains(reqs[0].System, FinalReportTool) {
		t.Errorf("system prompt does not start with the agent's prompt and name the final report tool:\n%s", reqs[0].System)
	}
	if got := lastToolResult(t, reqs[1]); got != "echo: ping" {
		t.Errorf("tool result the model received = %q, want %q", got, "echo: ping")
	}
	if got := injected(t, reqs[1]); len(got) != 0 {
		t.Errorf("the loop injected %q into a regular turn", got)
	}
	if reqs[0].Model != testModel || reqs[0].APIKey != testKey || !reqs[0].Stream {
		t.Errorf("request model/key/stream = %q/%q/%v", reqs[0].Model, reqs[0].APIKey, reqs[0].Stream)
	}
	if reqs[0].MaxTokens != h.agent.MaxOutputTokens {
		t.Errorf("max tokens sent = %d, want the agent's %d", reqs[0].MaxTokens, h.agent.MaxOutputTokens)
	}
}

func TestFinalReportAliasesAndAMismatchedFormatAreNormalised(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    map[string]any
		content string
		notices []string
	}{
		{"format and content are canonicalised",
			map[string]any{"status": "success", "format": "markdown", "content": "Aliased answer."}, "Aliased answer.",
			[]string{"alias format canonicalised to report_format", "alias content canonicalised to report_content"}},
		{"a report_format that disagrees with the session is overwritten",
			map[string]any{"status": "success", "report_format": "json", "report_content": "Answer in the wrong format."}, "Answer in the wrong format.",
			[]string{`report_format "json" does not match the session's "markdown"; normalised`}},
		{"an aliased format that disagrees is overwritten too",
			map[string]any{"status": "partial", "format": "tty", "content": "Half of it."}, "Half of it.",
			[]string{"alias format canonicalised to report_format", `report_format "tty" does not match the session's "markdown"; normalised`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, script(llmtest.Call(FinalReportTool, jsonArgs(tt.args))))
			res := h.run("Answer.")
			wantReport(t, res, tt.args["status"].(string), SourceToolCall)
			if res.Report.Format != config.FormatMarkdown || res.Report.Content != tt.content {
				t.Errorf("report = %q in %q, want %q in markdown", res.Report.Content, res.Report.Format, tt.content)
			}
			for _, n := range tt.notices {
				if !h.events.hasNotice(n) {
					t.Errorf("no notice %q; notices: %q", n, h.events.notices())
				}
			}
			wantTurns(t, res, 1)
			h.wantRequests(1)
		})
	}
}

func TestASlackFinalReportKeepsItsMessagesOrFallsBackToReportContent(t *testing.T) {
	t.Parallel()
	blocks := `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Done*"}}]}]`
	tests := []struct {
		name     string
		args     string
		messages string
		content  string
		slack    string // the repaired section text
		repaired bool
	}{
		{"messages are kept as the model wrote them",
			`{"status":"success","report_format":"slack-block-kit","messages":` + blocks + `,"report_content":"**Done**"}`, blocks, "**Done**", "*Done*", false},
		{"empty messages fall back to report_content",
			`{"status":"success","report_format":"slack-block-kit","messages":[],"report_content":"Only **Markdown**."}`, "", "Only **Markdown**.", "Only *Markdown*.", true},
		{"Markdown inside the blocks is repaired",
			`{"status":"success","report_format":"slack-block-kit","messages":[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"See [docs](https://x.example)"}}]}]}`,
			`[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"See [docs](https://x.example)"}}]}]`, "", "See <https://x.example|docs>", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withFormat(config.FormatSlackBlockKit), script(llmtest.Call(FinalReportTool, tt.args)))
			res := h.run("Answer in Slack.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			if res.Report.Format != config.FormatSlackBlockKit || res.Report.Content != tt.content {
				t.Errorf("report content %q in %s, want %q", res.Report.Content, res.Report.Format, tt.content)
			}
			if !jsonEqual(t, string(res.Report.Messages), tt.messages) {
				t.Errorf("messages = %s, want %s", res.Report.Messages, tt.messages)
			}
			if len(res.Report.Slack) != 1 || blockkit.Validate(res.Report.Slack[0]) != nil {
				t.Fatalf("repaired messages = %s", dump(res.Report.Slack))
			}
			raw, _ := json.Marshal(res.Report.Slack[0])
			var msg struct {
				Blocks []struct {
					Text struct{ Text string } `json:"text"`
				} `json:"blocks"`
			}
			if err := json.Unmarshal(raw, &msg); err != nil || len(msg.Blocks) != 1 || msg.Blocks[0].Text.Text != tt.slack {
				t.Errorf("repaired message %s, want the section text %q", raw, tt.slack)
			}
			if (len(res.Report.Repairs) > 0) != tt.repaired || h.events.hasNotice("Block Kit repaired") != tt.repaired {
				t.Errorf("repairs %v, notices %v; want repaired=%v", res.Report.Repairs, h.events.notices(), tt.repaired)
			}
			reqs := h.wantRequests(1)
			if !strings.Contains(reqs[0].System, "mrkdwn") || !strings.Contains(reqs[0].System, "2900") {
				t.Errorf("a slack session's system prompt does not explain Block Kit and its limits:\n%s", reqs[0].System)
			}
		})
	}
}

func TestAnIncompleteFinalReportIsRefusedWithItsProblemsAndTheFixIsAccepted(t *testing.T) {
	t.Parallel()
	const fix = "\nFix these and call " + FinalReportTool + " again."
	tests := []struct {
		name string
		args string
		want string // the tool result the model receives
	}{
		{"a bad status and no content",
			`{"status":"done"}`,
			"The final report was not accepted:\n- status must be one of \"success\", \"failure\", \"partial\" (got \"done\")\n" +
				"- report_content must be a non-empty string with the complete answer" + fix},
		{"no status at all",
			`{"report_format":"markdown","report_content":"An answer."}`,
			"The final report was not accepted:\n- status must be one of \"success\", \"failure\", \"partial\" (got nothing)" + fix},
		{"blank content",
			`{"status":"success","report_format":"markdown","report_content":"   "}`,
			"The final report was not accepted:\n- report_content must be a non-empty string with the complete answer" + fix},
		{"arguments that are not an object",
			`"just the answer"`,
			"The arguments for " + FinalReportTool + " must be a JSON object, not a string. You sent: \"just the answer\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, script(
				llmtest.Call(FinalReportTool, tt.args),
				llmtest.Report(config.FormatMarkdown, StatusSuccess, "The fixed answer."),
			))
			res := h.run("Answer.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			if res.Report.Content != "The fixed answer." {
				t.Errorf("content = %q", res.Report.Content)
			}
			wantTurns(t, res, 2)
			reqs := h.wantRequests(2)
			if got := lastToolResult(t, reqs[1]); got != tt.want {
				t.Errorf("the model was told:\n%s\nwant:\n%s", got, tt.want)
			}
			wantOpenTurn(t, reqs[1], FinalReportTool)
		})
	}
}

// outputSchema is a json agent's output schema as config loading leaves it
// (YAML-decoded: []any, ints).
func outputSchema() map[string]any {
	return map[string]any{
		"type":                 "object",
		"required":             []any{"answer", "confidence"},
		"additionalProperties": false,
		"properties": map[string]any{
			"answer":     map[string]any{"type": "string"},
			"confidence": map[string]any{"type": "number", "minimum": 0, "maximum": 1},
		},
	}
}

func jsonAgent(a *config.Agent) {
	a.Output = config.Output{Format: config.FormatJSON, Schema: outputSchema()}
}

func TestAJSONSessionChecksContentJSONAgainstTheOutputSchema(t *testing.T) {
	t.Parallel()
	good := map[string]any{"answer": "yes", "confidence": 0.9}
	jsonReport := func(v any) llmtest.Reply {
		return llmtest.Call(FinalReportTool, jsonArgs(map[string]any{"status": "success", "report_format": "json", "content_json": v}))
	}
	tests := []struct {
		name  string
		first llmtest.Reply
		// told lists what the tool result for the first report must say.
		told []string
	}{
		{"report_content instead of content_json is refused",
			llmtest.Call(FinalReportTool, `{"status":"success","report_format":"json","report_content":"yes"}`),
			[]string{"The final report was not accepted:\n- content_json must be a JSON object with the answer (got nothing)"}},
		{"content_json that breaks the schema gets diagnostics naming the paths",
			jsonReport(map[string]any{"answer": 42, "confidence": 2}),
			[]string{"content_json does not match the output schema:", "at /answer:", "at /confidence:"}},
		{"a missing property is named",
			jsonReport(map[string]any{"answer": "yes"}),
			[]string{"content_json does not match the output schema:", "confidence"}},
		{"content_json that is not an object is refused",
			jsonReport([]any{"yes"}),
			[]string{`content_json must be a JSON object with the answer (got ["yes"])`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withAgent(jsonAgent), script(tt.first, jsonReport(good)))
			res := h.run("Answer as JSON.")
			wantReport(t, res, StatusSuccess, SourceToolCall)
			if !reflect.DeepEqual(res.Report.ContentJSON, good) || res.Report.Format != config.FormatJSON {
				t.Errorf("content_json = %v in %s, want %v", res.Report.ContentJSON, res.Report.Format, good)
			}
			if len(res.Report.SchemaErrors) != 0 {
				t.Errorf("schema errors on a valid report: %q", res.Report.SchemaErrors)
			}
			wantTurns(t, res, 2)
			reqs := h.wantRequests(2)
			got := lastToolResult(t, reqs[1])
			for _, w := range tt.told {
				if !strings.Contains(got, w) {
					t.Errorf("the model was told:\n%s\nwhich lacks %q", got, w)
				}
			}
			if !strings.Contains(reqs[0].System, `"confidence"`) {
				t.Errorf("the system prompt does not carry the output schema:\n%s", reqs[0].System)
			}
		})
	}
}

func TestContentJSONGivenAsAJSONStringIsDecoded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withAgent(jsonAgent), script(llmtest.Call(FinalReportTool,
		jsonArgs(map[string]any{"status": "success", "report_format": "json", "content_json": `{"answer":"yes","confidence":0.5}`}))))
	res := h.run("Answer as JSON.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if want := map[string]any{"answer": "yes", "confidence": 0.5}; !reflect.DeepEqual(res.Report.ContentJSON, want) {
		t.Errorf("content_json = %#v, want %#v", res.Report.ContentJSON, want)
	}
	if !h.events.hasNotice("content_json was a string holding JSON; decoded") {
		t.Errorf("no notice of the decoding; notices: %q", h.events.notices())
	}
	wantTurns(t, res, 1)
	h.wantRequests(1)
}

func TestAtTheLastChanceAReportThatStillBreaksTheSchemaIsKeptWithItsErrors(t *testing.T) {
	t.Parallel()
	bad := jsonArgs(map[string]any{"status": "success", "report_format": "json", "content_json": map[string]any{"answer": 7}})
	h := newHarness(t, withAgent(func(a *config.Agent) { jsonAgent(a); a.MaxTurns = 1 }), script(
		llmtest.Call(FinalReportTool, bad),
		llmtest.Call(FinalReportTool, bad),
	))
	res := h.run("Answer as JSON.")
	wantReport(t, res, StatusSuccess, SourceToolCall)
	if res.Report.ContentJSON["answer"] != 7.0 {
		t.Errorf("content_json = %v", res.Report.ContentJSON)
	}
	if len(res.Report.SchemaErrors) == 0 {
		t.Errorf("the report kept no schema errors")
	}
	wantTurns(t, res, 2)
	reqs := h.wantRequests(2)
	wantFinalOnly(t, reqs[0])
	wantFinalOnly(t, reqs[1])
	if got := injected(t, reqs[1]); !reflect.DeepEqual(got, []string{maxTurnsFinalMessage, finalRetryMessage}) {
		t.Errorf("injected = %q, want the final-turn message then the retry message", got)
	}
	if got := lastToolResult(t, reqs[1]); !strings.Contains(got, "at /") {
		t.Errorf("the first refusal did not carry schema diagnostics: %s", got)
	}
}

// jsonEqual compares two JSON texts by value; two empty texts are equal.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	if a == "" || b == "" {
		return a == b
	}
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Errorf("not JSON: %s", a)
		return false
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Errorf("not JSON: %s", b)
		return false
	}
	return reflect.DeepEqual(x, y)
}

func TestAtTheLastChanceABadStatusIsAcceptedAsPartial(t *testing.T) {
	t.Parallel()
	args := `{"status":"finished","report_format":"markdown","report_content":"Most of it."}`
	h := newHarness(t, withAgent(func(a *config.Agent) { a.MaxTurns = 1 }), script(
		llmtest.Call(FinalReportTool, args),
		llmtest.Call(FinalReportTool, args),
	))
	res := h.run("Answer.")
	wantReport(t, res, StatusPartial, SourceToolCall)
	if res.Report.Content != "Most of it." {
		t.Errorf("content = %q", res.Report.Content)
	}
	if res.Report.Time.IsZero() {
		t.Errorf("the report has no time")
	}
	wantTurns(t, res, 2)
	reqs := h.wantRequests(2)
	if got := lastToolResult(t, reqs[1]); !strings.Contains(got, `(got "finished")`) {
		t.Errorf("the first refusal = %q", got)
	}
}
