package blockkit

import (
	"encoding/json"
	"strings"
	"testing"
)

// q encodes s as a JSON string.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const (
	sectionHi   = `{"type":"section","text":{"type":"mrkdwn","text":"hi there"}}`
	messageHi   = `[{"blocks":[` + sectionHi + `]}]`
	reportMD    = "# Deploy\n\nAll **green** in eu-west."
	legacyColor = `{"color":"danger","pretext":"Heads up","author_name":"CI bot","title":"Build 42 failed","title_link":"https://ci.io/42",` +
		`"text":"Step *test* failed","fields":[{"title":"Branch","value":"main","short":true},{"title":"Commit","value":"abc123"}],` +
		`"footer":"Pipeline","ts":1700000000}`
)

func TestRepairRecoversTheShapesModelsEmit(t *testing.T) {
	t.Parallel()
	runRepairTests(t, []repairTest{
		{name: "Block Kit JSON in a json fence as the messages string is read as its blocks",
			messages: q("```json\n" + messageHi + "\n```"),
			has:      []string{"hi there"}, hasNot: []string{"```", `"type"`}, kinds: []string{"json_unfenced"}},
		{name: "Block Kit JSON in a fence after a line of prose keeps the prose and reads the blocks",
			messages: q("Here is the report:\n\n```json\n" + messageHi + "\n```"),
			has:      []string{"Here is the report:", "hi there"}, hasNot: []string{"```", `"blocks"`}, kinds: []string{"json_unfenced"}},
		{name: "a fenced block in a list of blocks is read as the block",
			messages: `[{"blocks":[` + q("```json\n"+sectionHi+"\n```") + `]}]`,
			has:      []string{"hi there"}, hasNot: []string{"```", `"type"`}, kinds: []string{"json_unfenced"}},
		{name: "a section whose whole text is fenced Block Kit JSON is read as its blocks",
			messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":` + q("```json\n[{\"type\":\"header\",\"text\":{\"type\":\"plain_text\",\"text\":\"Inner title\"}},"+sectionHi+"]\n```") + `}}]}]`,
			has:      []string{"Inner title", "hi there"}, hasNot: []string{"```", `"type"`},
			check: func(t *testing.T, msgs []Message) {
				if got := blockTypesOf(msgs); got != "header section" {
					t.Errorf("blocks %q, want a header and a section", got)
				}
			}},
		{name: "a section whose whole text is bare Block Kit JSON is read as its blocks",
			messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":` + q(`{"blocks":[`+sectionHi+`]}`) + `}}]}]`,
			has:      []string{"hi there"}, hasNot: []string{`"blocks"`, "{"}},
		{name: "single-quoted JSON is read",
			messages: `[{'blocks': [{'type': 'section', 'text': {'type': 'mrkdwn', 'text': "it's done"}}]}]`,
			has:      []string{"it's done"}, kinds: []string{"json_relaxed"}},
		{name: "Python literals, unquoted keys and trailing commas are read",
			messages: `[{blocks: [{'type': 'section', 'expand': True, 'block_id': None, 'text': {'type': 'mrkdwn', 'text': 'ok',},},]}]`,
			has:      []string{"ok"}, hasNot: []string{"True", "None"}, kinds: []string{"json_relaxed"}},
		{name: "JSON with its quotes escaped once too often is read",
			messages: `[{\"blocks\":[{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\",\"text\":\"line one\\nline two\"}}]}]`,
			has:      []string{"line one\nline two"}, hasNot: []string{`\"`}, kinds: []string{"json_unescaped"}},
		{name: "a JSON string holding over-escaped JSON is read",
			messages: q(`[{\"blocks\":[` + strings.ReplaceAll(sectionHi, `"`, `\"`) + `]}]`),
			has:      []string{"hi there"}, hasNot: []string{`\"`}, kinds: []string{"json_unescaped"}},
		{name: "message instead of messages is read",
			report: `{"status":"success","message":` + messageHi + `}`,
			has:    []string{"hi there"}},
		{name: "message holding one message object is read",
			report: `{"message":{"blocks":[` + sectionHi + `]}}`,
			has:    []string{"hi there"}},
		{name: "messages that are prose next to report_content give the report, the prose first",
			report: `{"messages":"Here is the summary you asked for.","report_content":` + q(reportMD) + `}`,
			has:    []string{"Here is the summary you asked for.", "All *green* in eu-west."}, kinds: []string{"fallback_used"}},
		{name: "messages whose words are all in report_content are not shown twice",
			report: `{"messages":"all green","report_content":` + q(reportMD) + `}`,
			has:    []string{"All *green* in eu-west."}, hasNot: []string{"all green"}, kinds: []string{"fallback_used"}},
		{name: "messages that are a number next to report_content give the report",
			report: `{"messages":3,"report_content":` + q(reportMD) + `}`,
			has:    []string{"All *green* in eu-west."}, kinds: []string{"fallback_used"},
			check: func(t *testing.T, msgs []Message) {
				if got := blockTypesOf(msgs); got != "header section" {
					t.Errorf("blocks %q, want only the report", got)
				}
			}},
		{name: "messages that are an object of no known shape give the report, after the object's words",
			report: `{"messages":{"summary":"Rollout paused"},"report_content":` + q(reportMD) + `}`,
			has:    []string{"Rollout paused", "All *green* in eu-west."}, kinds: []string{"fallback_used"}},
		{name: "Repair takes prose messages next to a fallback the same way",
			messages: `"See report_content"`, fallback: reportMD,
			has: []string{"All *green* in eu-west."}, kinds: []string{"fallback_used"}},
		{name: "report_content holding fenced Block Kit JSON beside no messages is read as its blocks",
			report: `{"messages":[],"report_content":` + q("```json\n"+messageHi+"\n```") + `}`,
			has:    []string{"hi there"}, hasNot: []string{"```", `"blocks"`}, kinds: []string{"fallback_used", "json_unfenced"}},
		{name: "legacy attachments at the top of a report become blocks with their text, pretext, fields and colour",
			report: `{"attachments":[` + legacyColor + `]}`,
			has: []string{"Heads up", ":red_circle: CI bot", "*<https://ci.io/42|Build 42 failed>*", "Step *test* failed",
				"*Branch*\nmain", "*Commit*\nabc123", "Pipeline", "<!date^1700000000^"},
			kinds: []string{"attachment_converted"},
			check: func(t *testing.T, msgs []Message) {
				if got := blockTypesOf(msgs); got != "section context section section section context" {
					t.Errorf("blocks %q", got)
				}
			}},
		{name: "legacy attachments of a message follow its blocks",
			messages: `[{"text":"notify","blocks":[` + sectionHi + `],"attachments":[{"color":"#36a64f","text":"All checks passed","fields":[{"title":"Duration","value":"4m"}]}]}]`,
			has:      []string{"hi there", ":large_green_circle: All checks passed", "*Duration*\n4m"}, kinds: []string{"attachment_converted"}},
		{name: "a legacy attachment with only a fallback keeps it",
			messages: `[{"attachments":[{"fallback":"Deploy finished","color":"good"}]}]`,
			has:      []string{"Deploy finished"}},
	})
}

func TestRepairDecodesJSONEncodedAsAStringSeveralTimes(t *testing.T) {
	t.Parallel()
	const blocks = `[{"blocks":[{"type":"header","text":{"type":"plain_text","text":"Nightly backup"}},` +
		`{"type":"section","text":{"type":"mrkdwn","text":"All *14* databases"}}]}]`
	report := func(messages string) string { return `{"messages":` + messages + `}` }
	runRepairTests(t, []repairTest{
		{name: "Block Kit JSON encoded as a string twice is read as its blocks",
			report: report(q(q(blocks))),
			has:    []string{"Nightly backup", "All *14* databases"}, hasNot: []string{"plain_text", "mrkdwn", `"blocks"`},
			kinds: []string{"json_decoded"}, check: wantTypes("header section")},
		{name: "Block Kit JSON encoded as a string three times is read as its blocks",
			report: report(q(q(q(blocks)))),
			has:    []string{"Nightly backup", "All *14* databases"}, hasNot: []string{"plain_text", "mrkdwn", `"blocks"`},
			kinds: []string{"json_decoded"}, check: wantTypes("header section")},
		{name: "a block encoded twice in a list of blocks is read as the block",
			messages: `[{"blocks":[` + q(q(`{"type":"section","text":{"type":"mrkdwn","text":"hi there"}}`)) + `]}]`,
			has:      []string{"hi there"}, hasNot: []string{"mrkdwn", `"type"`}, check: wantTypes("section")},
		{name: "a quoted sentence stays Markdown",
			messages: `[` + q(`"Done" was all it said`) + `]`,
			has:      []string{`"Done" was all it said`}},
		{name: "a quoted phrase that holds no JSON stays as written",
			messages: `[` + q(q(`all green`)) + `]`,
			has:      []string{`"all green"`}},
	})
}
