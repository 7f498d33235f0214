package blockkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// repairCase is one repair: the model's messages (and report_content), the
// messages Slack receives and the changes reported, as path + " " + kind.
type repairCase struct {
	name     string
	messages string
	fallback string
	want     string // JSON array of messages; a "text" of "*" is not compared
	changes  []string
}

var (
	unit       = "alpha beta gamma delta. "
	longText   = strings.Repeat(unit, 150) // 3600 characters
	longFirst  = strings.Repeat(unit, 120) + "alpha beta gamma"
	longSecond = "delta. " + strings.TrimSpace(strings.Repeat(unit, 29))
	x52        = strings.TrimSuffix(strings.Repeat(`{"type":"section","text":{"type":"mrkdwn","text":"x"}},`, 52), ",")
	x50        = strings.TrimSuffix(strings.Repeat(`{"type":"section","text":{"type":"mrkdwn","text":"x"}},`, 50), ",")
	x2         = strings.TrimSuffix(strings.Repeat(`{"type":"section","text":{"type":"mrkdwn","text":"x"}},`, 2), ",")
)

var repairCases = []repairCase{
	{
		name:     "valid mrkdwn passes through untouched",
		messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Done:* see <https://x.com/a_b|the run> • ok &amp; _fine_"}}]}]`,
		want:     `[{"text":"Done: see the run • ok &amp; fine","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Done:* see <https://x.com/a_b|the run> • ok &amp; _fine_"}}]}]`,
	},
	{
		name:     "Markdown in mrkdwn text is converted",
		messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"# Result\n**bold**, [docs](https://d.io) and ~~old~~"}}]}]`,
		want:     `[{"text":"Result bold, docs and old","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Result*\n\n*bold*, <https://d.io|docs> and ~old~"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text.text markdown_converted"},
	},
	{
		name:     "mrkdwn bold stays bold when the same text has a Markdown link",
		messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Summary* see [CI](https://ci.io/1)"}}]}]`,
		want:     `[{"text":"Summary see CI","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Summary* see <https://ci.io/1|CI>"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text.text markdown_converted"},
	},
	{
		name:     "text typed markdown is converted as Markdown, single stars italic",
		messages: `[{"blocks":[{"type":"section","text":{"type":"markdown","text":"*it* and **bold**"}}]}]`,
		want:     `[{"text":"it and bold","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"_it_ and *bold*"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text.type text_type_fixed", "messages[0].blocks[0].text.text markdown_converted"},
	},
	{
		name:     "bare &, < and > are escaped, Slack tokens kept",
		messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"if a < b && c > d then <@U123ABC>"}}]}]`,
		want:     `[{"text":"if a &lt; b &amp;&amp; c &gt; d then @U123ABC","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"if a &lt; b &amp;&amp; c &gt; d then <@U123ABC>"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text.text entities_escaped"},
	},
	{
		name:     "a plain string where a text object belongs is wrapped as mrkdwn",
		messages: `[{"blocks":[{"type":"section","text":"hi there"}]}]`,
		want:     `[{"text":"hi there","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"hi there"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text text_wrapped"},
	},
	{
		name:     "a header string is wrapped as plain_text",
		messages: `[{"blocks":[{"type":"header","text":"Weekly report"}]}]`,
		want:     `[{"text":"Weekly report","blocks":[{"type":"header","text":{"type":"plain_text","text":"Weekly report"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text text_wrapped"},
	},
	{
		name:     "a mrkdwn header becomes plain_text without markers or link syntax, its link's address after the label",
		messages: `[{"blocks":[{"type":"header","text":{"type":"mrkdwn","text":"*Q3* <https://x.io|numbers>"}}]}]`,
		want:     `[{"text":"Q3 numbers (https://x.io)","blocks":[{"type":"header","text":{"type":"plain_text","text":"Q3 numbers (https://x.io)"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text text_type_fixed"},
	},
	{
		name:     "a Markdown heading in a header loses its hashes and stars",
		messages: `[{"blocks":[{"type":"header","text":"## **Status**"}]}]`,
		want:     `[{"text":"Status","blocks":[{"type":"header","text":{"type":"plain_text","text":"Status"}}]}]`,
		changes:  []string{"messages[0].blocks[0].text text_wrapped", "messages[0].blocks[0].text markdown_converted"},
	},
	{
		name:     "a block with text and no type is a section, its text mrkdwn",
		messages: `[{"blocks":[{"text":{"text":"no types"}}]}]`,
		want:     `[{"text":"no types","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"no types"}}]}]`,
		changes:  []string{"messages[0].blocks[0] type_inferred", "messages[0].blocks[0].text.type type_inferred"},
	},
	{
		name:     "a block with elements and no type is a context",
		messages: `[{"blocks":[{"elements":[{"text":"ctx"}]}]}]`,
		want:     `[{"text":"ctx","blocks":[{"type":"context","elements":[{"type":"mrkdwn","text":"ctx"}]}]}]`,
		changes:  []string{"messages[0].blocks[0] type_inferred", "messages[0].blocks[0].elements[0].type type_inferred"},
	},
	{
		name:     "a block with image_url and no type is an image",
		messages: `[{"blocks":[{"image_url":"https://i.io/a.png","alt_text":"a"}]}]`,
		want:     `[{"text":"a","blocks":[{"type":"image","image_url":"https://i.io/a.png","alt_text":"a"}]}]`,
		changes:  []string{"messages[0].blocks[0] type_inferred"},
	},
	{
		name:     "a block with fields and no type is a section",
		messages: `[{"blocks":[{"fields":["f1"]}]}]`,
		want:     `[{"text":"f1","blocks":[{"type":"section","fields":[{"type":"mrkdwn","text":"f1"}]}]}]`,
		changes:  []string{"messages[0].blocks[0] type_inferred", "messages[0].blocks[0].fields[0] text_wrapped"},
	},
	{
		name:     "invented block types are read as the block they mean",
		messages: `[{"blocks":[{"type":"paragraph","text":"para"},{"type":"hr"}]}]`,
		want:     `[{"text":"para","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"para"}},{"type":"divider"}]}]`,
		changes:  []string{"messages[0].blocks[0].type type_fixed", "messages[0].blocks[1].type type_fixed"},
	},
	{
		name:     "an unknown block type becomes a section with its readable text",
		messages: `[{"blocks":[{"type":"callout","icon":"warning","title":"Heads up","body":"Deploys are **frozen** today"}]}]`,
		want:     `[{"text":"Heads up Deploys are frozen today","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Heads up\nDeploys are *frozen* today"}}]}]`,
		changes:  []string{"messages[0].blocks[0] block_converted", "messages[0].blocks[0] markdown_converted"},
	},
	{
		name:     "an image without image_url becomes a section with its title and alt text",
		messages: `[{"blocks":[{"type":"image","alt_text":"chart","title":{"type":"plain_text","text":"Q3 revenue"}}]}]`,
		want:     `[{"text":"chart Q3 revenue","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"chart\nQ3 revenue"}}]}]`,
		changes:  []string{"messages[0].blocks[0] block_converted"},
	},
	{
		name:     "an image without alt_text gets one",
		messages: `[{"blocks":[{"type":"image","image_url":"https://i.io/c.png"}]}]`,
		want:     `[{"text":"image","blocks":[{"type":"image","image_url":"https://i.io/c.png","alt_text":"image"}]}]`,
		changes:  []string{"messages[0].blocks[0].alt_text alt_text_added"},
	},
	{
		name:     "a button without text becomes a link; duplicate action_ids are renamed",
		messages: `[{"blocks":[{"type":"actions","elements":[{"type":"button","url":"https://x.io/run"},{"type":"button","text":"Open run","url":"https://x.io/run","action_id":"open"},{"type":"button","text":"Again","action_id":"open"}]}]}]`,
		want: `[{"text":"Open run Again https://x.io/run","blocks":[
			{"type":"actions","elements":[
				{"type":"button","text":{"type":"plain_text","text":"Open run"},"action_id":"open","url":"https://x.io/run"},
				{"type":"button","text":{"type":"plain_text","text":"Again"},"action_id":"open-2"}]},
			{"type":"section","text":{"type":"mrkdwn","text":"<https://x.io/run>"}}]}]`,
		changes: []string{"messages[0].blocks[0].elements[0] element_converted", "messages[0].blocks[0].elements[1].text text_wrapped",
			"messages[0].blocks[0].elements[2].action_id action_id_changed", "messages[0].blocks[0].elements[2].text text_wrapped"},
	},
	{
		name:     "a context element that is not text or image becomes text",
		messages: `[{"blocks":[{"type":"context","elements":[{"type":"button","text":"Docs","url":"https://d.io"}]}]}]`,
		want:     `[{"text":"Docs","blocks":[{"type":"context","elements":[{"type":"mrkdwn","text":"<https://d.io|Docs>"}]}]}]`,
		changes:  []string{"messages[0].blocks[0].elements[0] element_converted"},
	},
	{
		name:     "more than 10 fields continue in another section",
		messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Stats"},"fields":[` + fieldsJSON(1, 12) + `]}]}]`,
		want: `[{"text":"Stats 1 2 3 4 5 6 7 8 9 10 11 12","blocks":[
			{"type":"section","text":{"type":"mrkdwn","text":"Stats"},"fields":[` + fieldsJSON(1, 10) + `]},
			{"type":"section","fields":[` + fieldsJSON(11, 12) + `]}]}]`,
		changes: []string{"messages[0].blocks[0].fields fields_split"},
	},
	{
		name:     "a field over 2000 characters moves into its own section",
		messages: `[{"blocks":[{"type":"section","fields":[{"type":"mrkdwn","text":"short"},{"type":"mrkdwn","text":"` + strings.Repeat("long ", 450) + `"}]}]}]`,
		want: `[{"text":"*","blocks":[
			{"type":"section","fields":[{"type":"mrkdwn","text":"short"}]},
			{"type":"section","text":{"type":"mrkdwn","text":"` + strings.Repeat("long ", 450) + `"}}]}]`,
		changes: []string{"messages[0].blocks[0].fields[1] field_moved"},
	},
	{
		name:     "more than 10 context elements continue in another context block",
		messages: `[{"blocks":[{"type":"context","elements":[` + contextJSON("abcdefghijk") + `]}]}]`,
		want: `[{"text":"a b c d e f g h i j k","blocks":[
			{"type":"context","elements":[` + contextJSON("abcdefghij") + `]},
			{"type":"context","elements":[` + contextJSON("k") + `]}]}]`,
		changes: []string{"messages[0].blocks[0].elements context_split"},
	},
	{
		name:     "section text over 2900 characters continues in the next section",
		messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"` + longText + `"}}]}]`,
		want: `[{"text":"*","blocks":[
			{"type":"section","text":{"type":"mrkdwn","text":"` + longFirst + `"}},
			{"type":"section","text":{"type":"mrkdwn","text":"` + longSecond + `"}}]}]`,
		changes: []string{"messages[0].blocks[0].text section_split"},
	},
	{
		name:     "header text over 150 characters is cut at a word and continues in a bold section after the header",
		messages: `[{"blocks":[{"type":"header","text":{"type":"plain_text","text":"` + strings.Repeat("Release ", 25) + `"}}]}]`,
		want: `[{"text":"*","blocks":[{"type":"header","text":{"type":"plain_text","text":"` + strings.Repeat("Release ", 17) + `Release…"}},
			{"type":"section","text":{"type":"mrkdwn","text":"*…` + strings.Repeat("Release ", 6) + `Release*"}}]}]`,
		changes: []string{"messages[0].blocks[0].text header_split"},
	},
	{
		name:     "context text over 2000 characters continues in the next context block, with the elements after it",
		messages: `[{"blocks":[{"type":"context","elements":[{"type":"mrkdwn","text":"` + strings.Repeat("note ", 420) + `"},{"type":"plain_text","text":"after"}]}]}]`,
		want: `[{"text":"*","blocks":[{"type":"context","elements":[{"type":"mrkdwn","text":"` + strings.Repeat("note ", 399) + `note"}]},
			{"type":"context","elements":[{"type":"mrkdwn","text":"` + strings.Repeat("note ", 19) + `note"},{"type":"plain_text","text":"after"}]}]}]`,
		changes: []string{"messages[0].blocks[0].elements[0] context_text_split"},
	},
	{
		name:     "more than 50 blocks are split over messages",
		messages: `[{"blocks":[` + x52 + `]}]`,
		want:     `[{"text":"*","blocks":[` + x50 + `]},{"text":"x x","blocks":[` + x2 + `]}]`,
		changes:  []string{"messages[0] message_split"},
	},
	{
		name:     "a duplicate block_id is removed",
		messages: `[{"blocks":[{"type":"section","block_id":"s1","text":{"type":"mrkdwn","text":"a"}},{"type":"section","block_id":"s1","text":{"type":"mrkdwn","text":"b"}}]}]`,
		want:     `[{"text":"a b","blocks":[{"type":"section","block_id":"s1","text":{"type":"mrkdwn","text":"a"}},{"type":"section","text":{"type":"mrkdwn","text":"b"}}]}]`,
		changes:  []string{"messages[0].blocks[1].block_id block_id_removed"},
	},
	{
		name:     "a markdown block is converted like report_content",
		messages: `[{"blocks":[{"type":"markdown","text":"**Hi** there\n\n- one\n- two"}]}]`,
		want:     `[{"text":"Hi there • one • two","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Hi* there\n\n• one\n• two"}}]}]`,
		changes:  []string{"messages[0].blocks[0] markdown_block_converted"},
	},
	{
		name:     "table cells become raw_text and short rows are padded",
		messages: `[{"blocks":[{"type":"table","rows":[["Name","Count"],["a",1],["b"]]}]}]`,
		want: `[{"text":"Name Count a 1 b","blocks":[{"type":"table","rows":[
			[{"type":"raw_text","text":"Name"},{"type":"raw_text","text":"Count"}],
			[{"type":"raw_text","text":"a"},{"type":"raw_text","text":"1"}],
			[{"type":"raw_text","text":"b"},{"type":"raw_text","text":" "}]]}]}]`,
		changes: []string{"messages[0].blocks[0].rows shape_coerced"},
	},
	{
		name:     "a bare array of blocks is one message",
		messages: `[{"type":"section","text":{"type":"mrkdwn","text":"one"}},{"type":"section","text":{"type":"mrkdwn","text":"two"}}]`,
		want:     `[{"text":"one two","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"one"}},{"type":"section","text":{"type":"mrkdwn","text":"two"}}]}]`,
		changes:  []string{"messages[0] blocks_wrapped"},
	},
	{
		name:     "an untyped block in a bare list of blocks is a section of the same message",
		messages: `[{"type":"header","text":{"type":"plain_text","text":"Report"}},{"text":{"type":"mrkdwn","text":"body"}}]`,
		want:     `[{"text":"Report body","blocks":[{"type":"header","text":{"type":"plain_text","text":"Report"}},{"type":"section","text":{"type":"mrkdwn","text":"body"}}]}]`,
		changes:  []string{"messages[0] blocks_wrapped", "messages[1] type_inferred"},
	},
	{
		name:     "a list of text-only objects is a list of Markdown messages",
		messages: `[{"text":"**one**"},{"text":"two"}]`,
		want:     `[{"text":"one","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*one*"}}]},{"text":"two","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"two"}}]}]`,
		changes:  []string{"messages[0] markdown_message", "messages[1] markdown_message"},
	},
	{
		name:     "one object with blocks is one message",
		messages: `{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"solo"}}]}`,
		want:     `[{"text":"solo","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"solo"}}]}]`,
		changes:  []string{"messages shape_coerced"},
	},
	{
		name:     "nested messages are unwrapped; plain_text is kept as written and escaped in the notification",
		messages: `{"messages":[{"blocks":[{"type":"section","text":{"type":"plain_text","text":"a < b","emoji":true}}]}]}`,
		want:     `[{"text":"a &lt; b","blocks":[{"type":"section","text":{"type":"plain_text","text":"a < b","emoji":true}}]}]`,
		changes:  []string{"messages shape_coerced"},
	},
	{
		name:     "strings are Markdown messages",
		messages: `["**One**", "Two"]`,
		want:     `[{"text":"One","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*One*"}}]},{"text":"Two","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Two"}}]}]`,
		changes:  []string{"messages[0] markdown_message", "messages[1] markdown_message"},
	},
	{
		name:     "messages given as a JSON string are decoded",
		messages: `"[{\"blocks\":[{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\",\"text\":\"inside\"}}]}]"`,
		want:     `[{"text":"inside","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"inside"}}]}]`,
		changes:  []string{"messages json_decoded"},
	},
	{
		name:     "the words of truncated JSON are kept",
		messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"first part"}},{"type":"section","text":"second part that was cu`,
		want:     `[{"text":"first part second part that was cu","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"first part\n\nsecond part that was cu"}}]}]`,
		changes:  []string{"messages json_invalid"},
	},
	{
		name:     "empty messages fall back to report_content",
		messages: `[]`,
		fallback: "## Answer\n\nAll **good**.",
		want:     `[{"text":"Answer All good.","blocks":[{"type":"header","text":{"type":"plain_text","text":"Answer","emoji":true}},{"type":"section","text":{"type":"mrkdwn","text":"All *good*."}}]}]`,
		changes:  []string{"messages fallback_used"},
	},
	{
		name:     "messages with nothing but dividers fall back to report_content",
		messages: `[{"blocks":[{"type":"divider"}]}]`,
		fallback: "Only **this**.",
		want:     `[{"text":"Only this.","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Only *this*."}}]}]`,
		changes:  []string{"messages[0] empty_dropped", "messages fallback_used"},
	},
	{
		name:     "no messages and no report_content still give one message",
		messages: ``,
		fallback: "  ",
		want:     `[{"text":"The answer was empty.","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"_The answer was empty._"}}]}]`,
		changes:  []string{"messages empty_answer"},
	},
}

func fieldsJSON(from, to int) string {
	var parts []string
	for i := from; i <= to; i++ {
		parts = append(parts, fmt.Sprintf(`{"type":"mrkdwn","text":"%d"}`, i))
	}
	return strings.Join(parts, ",")
}

func contextJSON(letters string) string {
	var parts []string
	for _, c := range letters {
		parts = append(parts, fmt.Sprintf(`{"type":"mrkdwn","text":"%c"}`, c))
	}
	return strings.Join(parts, ",")
}

// normalJSON decodes JSON for a comparison that ignores key order and
// spacing; text "*" in want means "not compared".
func normalJSON(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var v []map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("bad JSON %v:\n%s", err, data)
	}
	return v
}

func TestRepair(t *testing.T) {
	for _, tc := range repairCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs, changes := Repair(json.RawMessage(tc.messages), tc.fallback)
			for i, m := range msgs {
				if err := Validate(m); err != nil {
					t.Errorf("message %d fails Validate: %v", i, err)
				}
			}
			gotJSON, err := json.Marshal(msgs)
			if err != nil {
				t.Fatal(err)
			}
			got, want := normalJSON(t, gotJSON), normalJSON(t, []byte(tc.want))
			for i := range want {
				if i < len(got) && want[i]["text"] == "*" {
					if txt, _ := got[i]["text"].(string); strings.TrimSpace(txt) == "" {
						t.Errorf("message %d has no text fallback", i)
					}
					got[i]["text"] = "*"
				}
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("messages:\n%s\nwant:\n%s", g, w)
			}
			var gotChanges []string
			for _, c := range changes {
				gotChanges = append(gotChanges, c.Path+" "+c.Kind)
				if c.Detail == "" {
					t.Errorf("change %s %s has no detail", c.Path, c.Kind)
				}
			}
			if !reflect.DeepEqual(gotChanges, tc.changes) {
				t.Errorf("changes:\n  %s\nwant:\n  %s", strings.Join(gotChanges, "\n  "), strings.Join(tc.changes, "\n  "))
			}
		})
	}
}

func TestRepairReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		report  string
		want    string // expected section text of the first message
		changes []string
	}{
		{
			name:   "messages are repaired",
			report: `{"status":"success","report_format":"slack-block-kit","messages":[{"blocks":[{"type":"section","text":"**ok**"}]}]}`,
			want:   "*ok*",
			changes: []string{
				"messages[0].blocks[0].text text_wrapped",
				"messages[0].blocks[0].text markdown_converted",
			},
		},
		{
			name:    "report_content is the fallback",
			report:  `{"status":"success","messages":[],"report_content":"From **content**"}`,
			want:    "From *content*",
			changes: []string{"messages fallback_used"},
		},
		{
			name:    "content is an alias of report_content",
			report:  `{"status":"success","content":"Alias **works**"}`,
			want:    "Alias *works*",
			changes: []string{"messages fallback_used"},
		},
		{
			name:    "blocks at the top level are accepted",
			report:  `{"status":"success","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"top"}}]}`,
			want:    "top",
			changes: []string{"blocks shape_coerced", "blocks[0] blocks_wrapped"},
		},
		{
			name:    "nothing at all is one message saying so",
			report:  `{"status":"failure"}`,
			want:    "_The answer was empty._",
			changes: []string{"messages empty_answer"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, changes, err := RepairReport(json.RawMessage(tc.report))
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) == 0 {
				t.Fatal("no messages")
			}
			for _, m := range msgs {
				if err := Validate(m); err != nil {
					t.Errorf("invalid message: %v", err)
				}
			}
			var texts []string
			for _, b := range msgs[0].Blocks {
				texts = append(texts, blockReadable(b))
			}
			if !strings.Contains(strings.Join(texts, "\n"), tc.want) {
				t.Errorf("first message reads %q, want it to contain %q", texts, tc.want)
			}
			var got []string
			for _, c := range changes {
				got = append(got, c.Path+" "+c.Kind)
			}
			if !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("changes %q, want %q", got, tc.changes)
			}
		})
	}
}

func TestRepairReportRejectsWhatIsNotAnObject(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `null`, `[]`, `"text"`, `{"messages": [`, `42`} {
		msgs, changes, err := RepairReport(json.RawMessage(in))
		if !errors.Is(err, ErrNotObject) {
			t.Errorf("RepairReport(%q) error = %v, want ErrNotObject", in, err)
		}
		if msgs != nil || changes != nil {
			t.Errorf("RepairReport(%q) returned messages or changes with an error", in)
		}
	}
}

func TestRepairTextHelpers(t *testing.T) {
	t.Parallel()
	t.Run("clamp never ends inside a token or an entity", func(t *testing.T) {
		s := "see <https://example.com/a|the link> now &amp; then"
		for max := 2; max < len(s); max++ {
			got, _ := clampText(s, max, true)
			if n := len([]rune(got)); n > max {
				t.Fatalf("clamp(%d) = %q: %d characters", max, got, n)
			}
			head := strings.TrimSuffix(got, "…")
			if strings.Count(head, "<") != strings.Count(head, ">") || strings.Count(head, "&") != strings.Count(head, ";") {
				t.Fatalf("clamp(%d) = %q cuts a token or entity", max, got)
			}
		}
	})
	t.Run("plain text of mrkdwn keeps labels, names mentions and keeps a lone tilde", func(t *testing.T) {
		got := mrkdwnPlain("*Done* by <@U1ABC> in <https://x.io|the run> ~old~ snake_case_name in ~5 min &amp; &lt;3")
		want := "Done by @U1ABC in the run old snake_case_name in ~5 min & <3"
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("Markdown is detected, mrkdwn is not", func(t *testing.T) {
		for s, want := range map[string]bool{
			"*bold* <https://x|y> • item _it_ ~s~": false,
			"1. step one\n2. step two":             false,
			"```\ncode\n```":                       false,
			"**strong**":                           true,
			"[a](https://b)":                       true,
			"# Title":                              true,
			"~~gone~~":                             true,
			"- item":                               true,
			"```go\ncode\n```":                     true,
			"| a | b |\n|---|---|\n| 1 | 2 |":      true,
			"Title\n---":                           false,
		} {
			if got := markdownSignals(s); got != want {
				t.Errorf("markdownSignals(%q) = %v, want %v", s, got, want)
			}
		}
	})
}
