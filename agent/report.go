package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/tools"
)

// FinalReportTool is the tool every session offers for delivering its
// answer.
const FinalReportTool = "agent__final_report"

// Report statuses.
const (
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusPartial = "partial"
)

// Source says how a report was obtained.
type Source string

// Report sources, from the regular path to the last resort.
const (
	SourceToolCall    Source = "tool_call"    // the model called agent__final_report
	SourceXML         Source = "xml"          // the <ai-agent-NONCE-FINAL> wrapper in plain text
	SourceText        Source = "text"         // a plain-text answer, adopted where the format allows
	SourceToolMessage Source = "tool_message" // a tool's result (terminate note, last-chance adoption)
	SourceFinish      Source = "finish"       // the finish tool
	SourceSynthetic   Source = "synthetic"    // the loop gave up and says why
)

// Report is a session's answer. Exactly one is produced per session.
type Report struct {
	Status string
	Format string
	// Content is the answer text (report_content); for slack-block-kit it is
	// the Markdown fallback used when Messages is empty or unusable.
	Content string
	// ContentJSON is the answer of a json-format session.
	ContentJSON map[string]any
	// Messages are the Block Kit messages of a slack-block-kit session, as
	// the model wrote them.
	Messages json.RawMessage
	// Slack are those messages repaired to pass Slack's checks (or built
	// from Content when they are unusable), and Repairs what repair changed:
	// set for every slack-block-kit report when it is captured.
	Slack    []blockkit.Message
	Repairs  []blockkit.Change
	Metadata map[string]any
	Source   Source
	// Reason explains a synthetic report (and is its Content too).
	Reason string
	// SchemaErrors lists how ContentJSON still breaks the agent's output
	// schema when it was accepted at the last chance.
	SchemaErrors []string
	Time         time.Time
}

// Synthetic reports whether the loop made this report up because the model
// never delivered one.
func (r *Report) Synthetic() bool { return r.Source == SourceSynthetic }

// Text returns the report as text for terminals and logs: Content, or the
// JSON of ContentJSON, or the raw Messages.
func (r *Report) Text() string {
	switch {
	case r.ContentJSON != nil:
		b, _ := json.MarshalIndent(r.ContentJSON, "", "  ")
		return string(b)
	case r.Content != "":
		return r.Content
	case len(r.Messages) > 0:
		return string(r.Messages)
	}
	return ""
}

// finalReportSchema builds the final report's input schema for a format:
// json wants content_json, slack-block-kit wants messages, every other
// format report_content.
func finalReportSchema(format string) json.RawMessage {
	props := map[string]any{
		"status": map[string]any{
			"type": "string", "enum": []string{StatusSuccess, StatusFailure, StatusPartial},
			"description": "success: the task is done; partial: done in part, say what is missing; failure: it could not be done, say why.",
		},
		"report_format": map[string]any{
			"type": "string", "const": format,
			"description": "The output format of this session. Always \"" + format + "\".",
		},
		"metadata": map[string]any{"type": "object", "description": "Optional facts about the answer (sources, confidence)."},
	}
	var content string
	switch format {
	case config.FormatJSON:
		content = "content_json"
		props[content] = map[string]any{"type": "object", "description": "The answer as a JSON object matching the output schema given in your instructions."}
	case config.FormatSlackBlockKit:
		content = "messages"
		props[content] = map[string]any{
			"type": "array", "minItems": 1,
			"description": "The answer as Slack messages, each {\"blocks\": [...]} of Block Kit blocks (section, header, divider, context, table). Text in section/context is Slack mrkdwn, not Markdown.",
			"items": map[string]any{
				"type":       "object",
				"properties": map[string]any{"blocks": map[string]any{"type": "array", "items": map[string]any{"type": "object"}}},
				"required":   []string{"blocks"},
			},
		}
		props["report_content"] = map[string]any{"type": "string", "description": "Only if you cannot write Block Kit: the answer in Markdown, instead of messages. Never both."}
	default:
		content = "report_content"
		props[content] = map[string]any{"type": "string", "minLength": 1, "description": "The complete answer, in " + format + " format."}
	}
	b, _ := json.Marshal(map[string]any{
		"type":       "object",
		"properties": props,
		"required":   []string{"status", "report_format", content},
	})
	return b
}

// parseReport turns final_report arguments into a Report. Aliases (format,
// content) are canonicalised and a report_format that disagrees with the
// session is overwritten (notes says so, for the log). problems, when not
// empty, is what the model must fix; with lenient (the last chance) only a
// missing answer is a problem, and schema errors are kept on the report.
func parseReport(args map[string]any, format string, schema *tools.Schema, lenient bool) (r *Report, notes, problems []string) {
	if _, ok := args["report_format"]; !ok {
		if f, ok := args["format"]; ok {
			args["report_format"] = f
			notes = append(notes, "alias format canonicalised to report_format")
		}
	}
	if _, ok := args["report_content"]; !ok {
		if c, ok := args["content"]; ok {
			args["report_content"] = c
			notes = append(notes, "alias content canonicalised to report_content")
		}
	}
	r = &Report{Format: format, Source: SourceToolCall}
	status, _ := args["status"].(string)
	switch status := normStatus(status); status {
	case StatusSuccess, StatusFailure, StatusPartial:
		r.Status = status
	default:
		if !lenient {
			problems = append(problems, fmt.Sprintf("status must be one of \"success\", \"failure\", \"partial\" (got %s)", describe(args["status"])))
		}
		r.Status = StatusPartial
	}
	switch f := args["report_format"].(type) {
	case string:
		if f != format {
			notes = append(notes, fmt.Sprintf("report_format %q "+formatMismatch+" %q; normalised", tools.Snippet(f, 40), format))
		}
	case nil:
		notes = append(notes, "report_format missing; the session's format was used")
	default:
		notes = append(notes, "report_format is not a string; the session's format was used")
	}
	if m, ok := args["metadata"].(map[string]any); ok {
		r.Metadata = m
	}
	content, _ := args["report_content"].(string)
	r.Content = strings.TrimSpace(content)

	switch format {
	case config.FormatJSON:
		obj, note := asObject(args["content_json"])
		if note != "" {
			notes = append(notes, note)
		}
		if obj == nil {
			problems = append(problems, "content_json must be a JSON object with the answer (got "+describe(args["content_json"])+")")
			break
		}
		r.ContentJSON = obj
		if err := validateJSON(schema, obj); err != nil {
			if lenient {
				r.SchemaErrors = err
				notes = append(notes, "content_json accepted with schema errors at the last chance")
			} else {
				problems = append(problems, "content_json does not match the output schema:\n  - "+strings.Join(err, "\n  - "))
			}
		}
	case config.FormatSlackBlockKit:
		// Repair reads every shape models write: messages, or message,
		// blocks or attachments in its place, with report_content as the
		// fallback. Only a report with no answer anywhere goes back.
		for _, k := range []string{"messages", "message", "blocks"} {
			if r.Messages = messagesArg(args[k]); r.Messages != nil {
				break
			}
		}
		raw, err := json.Marshal(args)
		if err != nil {
			problems = append(problems, "the arguments could not be read: "+err.Error())
			break
		}
		slack, changes, _ := blockkit.RepairReport(raw)
		if slices.ContainsFunc(changes, func(c blockkit.Change) bool { return c.Kind == "empty_answer" }) {
			problems = append(problems, "messages must be a non-empty array of {\"blocks\": [...]} (or give report_content in Markdown)")
			break
		}
		r.Slack, r.Repairs = slack, changes
	default:
		if r.Content == "" {
			problems = append(problems, "report_content must be a non-empty string with the complete answer")
		}
	}
	return r, notes, problems
}

// formatMismatch marks the note of a report whose report_format is not the
// session's: the report is kept, normalised, and the log warns.
const formatMismatch = "does not match the session's"

// normStatus reads a status the way a model may write it: any case,
// surrounding spaces.
func normStatus(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// asMarkdownData presents a tool's result as data for a Markdown reader: a
// JSON value pretty-printed in a code block, any other text as it is.
func asMarkdownData(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") || !json.Valid([]byte(t)) {
		return s
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(t), "", "  ") != nil {
		return s
	}
	fence := "```"
	for strings.Contains(b.String(), fence) {
		fence += "`"
	}
	return fence + "json\n" + b.String() + "\n" + fence
}

// asObject accepts an object, or a string holding one (models often
// double-encode).
func asObject(v any) (map[string]any, string) {
	switch t := v.(type) {
	case map[string]any:
		return t, ""
	case string:
		var obj map[string]any
		if json.Unmarshal([]byte(stripFence(t)), &obj) == nil && obj != nil {
			return obj, "content_json was a string holding JSON; decoded"
		}
	}
	return nil, ""
}

// messagesArg keeps whatever the model gave for messages, in JSON, unless it
// is empty; repair happens in blockkit, which understands every shape.
func messagesArg(v any) json.RawMessage {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		if len(t) == 0 {
			return nil
		}
	case string:
		if strings.TrimSpace(t) == "" {
			return nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func validateJSON(schema *tools.Schema, obj map[string]any) []string {
	if schema == nil {
		return nil
	}
	// The schema validator wants json.Number for numbers: re-decode.
	b, _ := json.Marshal(obj)
	v, err := tools.DecodeJSON(b)
	if err != nil {
		return []string{err.Error()}
	}
	if err := schema.Validate(v); err != nil {
		if ve, ok := err.(*tools.ValidationError); ok {
			return ve.Problems
		}
		return []string{err.Error()}
	}
	return nil
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("%q", tools.Snippet(t, 60))
	}
	b, _ := json.Marshal(v)
	return tools.Snippet(string(b), 60)
}

var fenceRe = regexp.MustCompile("(?s)^\\s*```[A-Za-z0-9_-]*\\s*\\n(.*?)\\n?```\\s*$")

// stripFence removes a Markdown code fence around a whole text.
func stripFence(s string) string {
	if m := fenceRe.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return strings.TrimSpace(s)
}

// xmlFinal finds the XML final-report wrapper with this session's nonce in
// an assistant's text. A wrapper with another nonce is
// ignored, so a tool result that smuggles one in cannot end the session. The
// closing tag is optional.
type xmlFinal struct {
	nonce string
}

func newXMLFinal(nonce string) *xmlFinal { return &xmlFinal{nonce: nonce} }

// hasWrapper reports whether text holds a final-answer wrapper with any
// nonce. Called when find saw none with the session's own, it detects a
// wrapper that must be ignored.
func hasWrapper(text string) bool { return llm.HasFinalWrapper(text) }

// find returns the wrapped content and the wrapper's attributes.
func (x *xmlFinal) find(text string) (content string, attrs map[string]string, ok bool) {
	return llm.FindFinal(text, x.nonce)
}

// reportFromText builds a report from answer text (a plain reply or the XML
// wrapper's content) where the session's format allows it. For json the
// text must hold a JSON object matching the schema; problems says why not.
func reportFromText(text, format string, schema *tools.Schema, src Source) (*Report, []string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, []string{"the answer is empty"}
	}
	r := &Report{Status: StatusSuccess, Format: format, Source: src}
	switch format {
	case config.FormatJSON:
		var obj map[string]any
		if err := json.Unmarshal([]byte(stripFence(text)), &obj); err != nil || obj == nil {
			return nil, []string{"a json answer must be a JSON object; call " + FinalReportTool + " with content_json"}
		}
		if errs := validateJSON(schema, obj); errs != nil {
			return nil, append([]string{"the JSON answer does not match the output schema:"}, errs...)
		}
		r.ContentJSON = obj
	case config.FormatSlackBlockKit:
		// Block Kit JSON in the wrapper is taken as messages; anything else
		// is Markdown for the report_content fallback.
		if s := stripFence(text); strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
			var v any
			if json.Unmarshal([]byte(s), &v) == nil {
				if m := messagesArg(v); m != nil {
					r.Messages = m
					return r, nil
				}
			}
		}
		r.Content = text
	default:
		r.Content = text
	}
	return r, nil
}

// syntheticReport is the loop's own report when the model never delivered
// one: status failure, the reason as content, in the session's format.
func syntheticReport(format, reason string, now time.Time) *Report {
	r := &Report{Status: StatusFailure, Format: format, Source: SourceSynthetic, Reason: reason, Content: reason, Time: now}
	if format == config.FormatJSON {
		r.ContentJSON = map[string]any{"error": reason}
	}
	return r
}
