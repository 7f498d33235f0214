package agent

import (
	"strings"
	"testing"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
)

// FuzzXMLFinal: the wrapper parser never panics, and it only ever finds a
// wrapper that carries the session's nonce.
func FuzzXMLFinal(f *testing.F) {
	for _, s := range []string{
		`<ai-agent-abc123-FINAL format="markdown">hi</ai-agent-abc123-FINAL>`,
		`<ai-agent-abc123-FINAL format="markdown" status="partial">open`,
		`<ai-agent-deadbeef-FINAL format="markdown">no</ai-agent-deadbeef-FINAL>`,
		`text <ai-agent-abc123-FINAL>`, `<ai-agent-`, `<ai-agent-abc123-FINAL format="x>y">`,
		"<ai-agent-deadbeef-FINAL>a</ai-agent-deadbeef-FINAL><ai-agent-abc123-FINAL>b",
	} {
		f.Add(s)
	}
	x := newXMLFinal("abc123")
	f.Fuzz(func(t *testing.T, text string) {
		content, attrs, ok := x.find(text)
		if !ok {
			return
		}
		if !strings.Contains(text, "<ai-agent-abc123-FINAL") || attrs == nil {
			t.Fatalf("found a wrapper without the session's nonce in %q", text)
		}
		if strings.Contains(content, "</ai-agent-abc123-FINAL>") {
			t.Fatalf("content %q runs past the closing tag", content)
		}
	})
}

// FuzzParseReport: any final_report arguments either give a report with a
// valid status and an answer, or problems for the model; never a panic, and
// never an accepted report without its answer.
func FuzzParseReport(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","report_format":"markdown","report_content":"hi"}`,
		`{"status":"partial","format":"json","content_json":"{\"a\":1}"}`,
		`{"status":"bogus","content":""}`, `{"messages":[{"blocks":[]}]}`, `{"messages":"[]","report_content":" "}`,
		`{"status":"failure","report_format":7,"metadata":[1],"content_json":{"a":[1,2]}}`,
	} {
		f.Add(s, false)
	}
	formats := []string{config.FormatMarkdown, config.FormatJSON, config.FormatSlackBlockKit}
	f.Fuzz(func(t *testing.T, args string, lenient bool) {
		m, msg := decodeArgs(&llm.ToolCall{Name: FinalReportTool, Arguments: args})
		if msg != "" {
			return
		}
		for _, format := range formats {
			r, _, problems := parseReport(copyMap(m), format, nil, lenient)
			if len(problems) > 0 {
				continue
			}
			switch r.Status {
			case StatusSuccess, StatusFailure, StatusPartial:
			default:
				t.Fatalf("accepted report has status %q", r.Status)
			}
			if r.Content == "" && r.ContentJSON == nil && len(r.Messages) == 0 {
				t.Fatalf("accepted a %s report without an answer: %s", format, args)
			}
		}
	})
}

func copyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
