package blockkit

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func mrkdwnText(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plainText(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
}

func section(s string) *slack.SectionBlock { return slack.NewSectionBlock(mrkdwnText(s), nil, nil) }

// withID sets the block_id of a section or divider.
func withID(b slack.Block, id string) slack.Block {
	switch b := b.(type) {
	case *slack.SectionBlock:
		b.BlockID = id
	case *slack.DividerBlock:
		b.BlockID = id
	}
	return b
}

func rawTable(rows, cells int, text string) *slack.TableBlock {
	tb := slack.NewTableBlock("")
	for range rows {
		row := make([]slack.TableCell, cells)
		for i := range row {
			row[i] = slack.NewTableRawTextCell(text)
		}
		tb.AddRow(row...)
	}
	return tb
}

func problems(err error) []string {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Problems
	}
	if err != nil {
		return []string{"not a ValidationError: " + err.Error()}
	}
	return nil
}

func TestValidateAcceptsGoodMessages(t *testing.T) {
	t.Parallel()
	fields := []*slack.TextBlockObject{mrkdwnText("*a*"), plainText("b")}
	msgs := []Message{
		{Text: "hi", Blocks: []slack.Block{section("hi")}},
		{Text: "only text, no blocks"},
		{Text: "all kinds", Blocks: []slack.Block{
			slack.NewHeaderBlock(plainText(strings.Repeat("h", HeaderTextMax))),
			slack.NewSectionBlock(mrkdwnText(strings.Repeat("s", SlackSectionTextMax)), nil, nil),
			slack.NewSectionBlock(nil, fields, nil),
			slack.NewDividerBlock(),
			slack.NewContextBlock("ctx", mrkdwnText("context"), slack.NewImageBlockElement("https://i.io/a.png", "alt")),
			slack.NewMarkdownBlock("", "**markdown**"),
			slack.NewImageBlock("https://i.io/b.png", "alt", "", nil),
			rawTable(TableMaxRows, TableMaxCells, "v"),
		}},
		{Text: "CJK counts characters, not bytes", Blocks: []slack.Block{section(strings.Repeat("字", SlackSectionTextMax))}},
		{Text: "block values as well as pointers", Blocks: []slack.Block{*section("value"), *slack.NewDividerBlock()}},
		{Text: "media, lists and grouped options Slack takes", Blocks: []slack.Block{
			&slack.VideoBlock{Type: slack.MBTVideo, VideoURL: "https://v.io/e", ThumbnailURL: "http://v.io/t.jpg", AltText: "a",
				Title: plainText("t"), TitleURL: "https://v.io/w"},
			slack.NewRichTextBlock("", slack.NewRichTextList(slack.RTEListOrdered, 0,
				slack.NewRichTextSection(slack.NewRichTextSectionTextElement("first", nil)))),
			slack.NewActionBlock("", &slack.SelectBlockElement{Type: "static_select", OptionGroups: []*slack.OptionGroupBlockObject{
				slack.NewOptionGroupBlockElement(plainText("g"), slack.NewOptionBlockObject("v", plainText("o"), nil))}}),
		}},
	}
	for i, m := range msgs {
		if err := Validate(m); err != nil {
			t.Errorf("message %d: %v", i, err)
		}
	}
}

func TestValidateReportsEachProblem(t *testing.T) {
	t.Parallel()
	many := func(n int, b func(int) slack.Block) []slack.Block {
		out := make([]slack.Block, n)
		for i := range out {
			out[i] = b(i)
		}
		return out
	}
	elems := func(n int) []slack.MixedElement {
		out := make([]slack.MixedElement, n)
		for i := range out {
			out[i] = mrkdwnText("e")
		}
		return out
	}
	twoTables := rawTable(1, 1, "x")
	cases := []struct {
		name   string
		msg    Message
		wanted []string
	}{
		{"more than 50 blocks",
			Message{Text: "t", Blocks: many(51, func(int) slack.Block { return slack.NewDividerBlock() })},
			[]string{"blocks: 51 blocks; Slack allows 50 a message"}},
		{"section text over Slack's 3000",
			Message{Text: "t", Blocks: []slack.Block{section(strings.Repeat("x", 3120))}},
			[]string{"blocks[0] (section): text is 3120 characters; Slack allows 3000"}},
		{"empty section text",
			Message{Text: "t", Blocks: []slack.Block{section("  ")}},
			[]string{"blocks[0] (section): text is empty; Slack needs at least 1 character"}},
		{"section with neither text nor fields",
			Message{Text: "t", Blocks: []slack.Block{slack.NewSectionBlock(nil, nil, nil)}},
			[]string{"blocks[0] (section): has neither text nor fields; Slack needs one"}},
		{"text object of an unknown type",
			Message{Text: "t", Blocks: []slack.Block{slack.NewSectionBlock(&slack.TextBlockObject{Type: "markdown", Text: "x"}, nil, nil)}},
			[]string{`blocks[0] (section): text type is "markdown"; Slack accepts plain_text or mrkdwn`}},
		{"more than 10 fields, one too long",
			Message{Text: "t", Blocks: []slack.Block{slack.NewSectionBlock(nil, append(slices.Repeat([]*slack.TextBlockObject{plainText("f")}, 10), plainText(strings.Repeat("f", 2001))), nil)}},
			[]string{"blocks[0] (section): has 11 fields; Slack allows 10", "blocks[0] (section): fields[10] text is 2001 characters; Slack allows 2000"}},
		{"header over 150 characters",
			Message{Text: "t", Blocks: []slack.Block{slack.NewHeaderBlock(plainText(strings.Repeat("h", 151)))}},
			[]string{"blocks[0] (header): text is 151 characters; Slack allows 150"}},
		{"header in mrkdwn",
			Message{Text: "t", Blocks: []slack.Block{slack.NewHeaderBlock(mrkdwnText("*h*"))}},
			[]string{`blocks[0] (header): text type is "mrkdwn"; a header takes plain_text`}},
		{"header without text",
			Message{Text: "t", Blocks: []slack.Block{slack.NewHeaderBlock(nil)}},
			[]string{"blocks[0] (header): has no text; Slack needs plain_text of 1 to 150 characters"}},
		{"context with 11 elements",
			Message{Text: "t", Blocks: []slack.Block{slack.NewContextBlock("", elems(11)...)}},
			[]string{"blocks[0] (context): has 11 elements; Slack allows 1 to 10"}},
		{"context without elements",
			Message{Text: "t", Blocks: []slack.Block{slack.NewContextBlock("")}},
			[]string{"blocks[0] (context): has 0 elements; Slack allows 1 to 10"}},
		{"context text over 2000",
			Message{Text: "t", Blocks: []slack.Block{slack.NewContextBlock("", mrkdwnText(strings.Repeat("c", 2001)))}},
			[]string{"blocks[0] (context): elements[0] text is 2001 characters; Slack allows 2000"}},
		{"block_id over 255",
			Message{Text: "t", Blocks: []slack.Block{withID(section("x"), strings.Repeat("i", 256))}},
			[]string{"blocks[0] (section): block_id is 256 characters; Slack allows 255"}},
		{"repeated block_id",
			Message{Text: "t", Blocks: []slack.Block{withID(section("x"), "a"), withID(slack.NewDividerBlock(), "a")}},
			[]string{`blocks[1] (divider): block_id "a" repeats blocks[0]; Slack needs it unique`}},
		{"empty notification text",
			Message{Text: " ", Blocks: []slack.Block{section("x")}},
			[]string{"text: empty; Slack needs it as the notification fallback"}},
		{"block text over the message budget",
			Message{Text: "t", Blocks: many(5, func(int) slack.Block { return section(strings.Repeat("x", 2500)) })},
			[]string{"blocks: block text totals 12500 characters; the budget is 12000 a message (Slack answers msg_blocks_too_long near 13000)"}},
		{"table over 100 rows",
			Message{Text: "t", Blocks: []slack.Block{rawTable(101, 1, "v")}},
			[]string{"blocks[0] (table): has 101 rows; Slack allows 1 to 100"}},
		{"table row over 20 cells",
			Message{Text: "t", Blocks: []slack.Block{rawTable(1, 21, "v")}},
			[]string{"blocks[0] (table): rows[0] has 21 cells; Slack allows 20"}},
		{"table cells over 10000 characters",
			Message{Text: "t", Blocks: []slack.Block{rawTable(11, 1, strings.Repeat("v", 1000))}},
			[]string{"blocks[0] (table): cells total 11000 characters; Slack allows 10000"}},
		{"table cell empty or null",
			Message{Text: "t", Blocks: []slack.Block{&slack.TableBlock{Type: slack.MBTTable, Rows: [][]slack.TableCell{{slack.NewTableRawTextCell(""), nil}}}}},
			[]string{"blocks[0] (table): rows[0][0] text is empty; Slack needs at least 1 character", "blocks[0] (table): rows[0][1] is null; Slack needs a raw_text or rich_text cell"}},
		{"two tables in one message",
			Message{Text: "t", Blocks: []slack.Block{twoTables, rawTable(1, 1, "y")}},
			[]string{"blocks[1] (table): is table 2 of this message; Slack allows 1 (only_one_table_allowed)"}},
		{"markdown blocks over 12000 together",
			Message{Text: "t", Blocks: []slack.Block{slack.NewMarkdownBlock("", strings.Repeat("m", 7000)), slack.NewMarkdownBlock("", strings.Repeat("m", 7000))}},
			[]string{"blocks: markdown blocks total 14000 characters; Slack allows 12000", "blocks: block text totals 14000 characters; the budget is 12000 a message (Slack answers msg_blocks_too_long near 13000)"}},
		{"block without a type",
			Message{Text: "t", Blocks: []slack.Block{&slack.SectionBlock{Text: mrkdwnText("x")}}},
			[]string{"blocks[0] (): type is empty"}},
		{"nil block",
			Message{Text: "t", Blocks: []slack.Block{nil}},
			[]string{"blocks[0]: null block"}},
		{"every problem is listed at once",
			Message{Blocks: []slack.Block{slack.NewHeaderBlock(plainText(strings.Repeat("h", 200))), section(strings.Repeat("s", 3001))}},
			[]string{"text: empty; Slack needs it as the notification fallback", "blocks[0] (header): text is 200 characters; Slack allows 150", "blocks[1] (section): text is 3001 characters; Slack allows 3000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := problems(Validate(tc.msg)); !slices.Equal(got, tc.wanted) {
				t.Errorf("problems\n got: %q\nwant: %q", got, tc.wanted)
			}
		})
	}
}

func TestValidationErrorMessage(t *testing.T) {
	t.Parallel()
	err := Validate(Message{Blocks: []slack.Block{section(strings.Repeat("x", 3120))}})
	want := "blockkit: invalid message: text: empty; Slack needs it as the notification fallback; blocks[0] (section): text is 3120 characters; Slack allows 3000"
	if err == nil || err.Error() != want {
		t.Errorf("Error() = %v, want %q", err, want)
	}
}

func TestValidateJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		payload string
		wanted  []string
	}{
		{"a valid payload passes",
			`{"text":"hi","blocks":[{"type":"header","text":{"type":"plain_text","text":"Hi"}},{"type":"section","text":{"type":"mrkdwn","text":"*x*"}},{"type":"divider"}]}`,
			nil},
		{"a payload without blocks passes", `{"text":"hi"}`, nil},
		{"an unknown block type is rejected",
			`{"text":"t","blocks":[{"type":"sektion","text":{"type":"mrkdwn","text":"x"}}]}`,
			[]string{`blocks[0] (sektion): unknown block type "sektion"`}},
		{"text given as a string is a malformed text object",
			`{"text":"t","blocks":[{"type":"section","text":"plain string"}]}`,
			[]string{`blocks[0] (section): text is a string; Slack needs a text object {"type": "mrkdwn", "text": "..."}`}},
		{"a text object missing its type is caught",
			`{"text":"t","blocks":[{"type":"section","text":{"text":"x"}}]}`,
			[]string{`blocks[0] (section): text type is ""; Slack accepts plain_text or mrkdwn`}},
		{"a number where text goes is malformed",
			`{"text":"t","blocks":[{"type":"header","text":{"type":"plain_text","text":5}}]}`,
			[]string{"blocks[0] (header): malformed: json: cannot unmarshal number into Go struct field TextBlockObject.text.text of type string"}},
		{"a block that is not an object",
			`{"text":"t","blocks":["section"]}`,
			[]string{"blocks[0]: not a JSON object"}},
		{"a block without a type",
			`{"text":"t","blocks":[{"text":{"type":"mrkdwn","text":"x"}}]}`,
			[]string{"blocks[0]: has no type"}},
		{"blocks that are not an array",
			`{"text":"t","blocks":{"type":"divider"}}`,
			[]string{"blocks: not an array"}},
		{"missing text",
			`{"blocks":[{"type":"divider"}]}`,
			[]string{"text: empty; Slack needs it as the notification fallback"}},
		{"not JSON at all",
			`<html>`,
			[]string{"payload: not a JSON object: invalid character '<' looking for beginning of value"}},
		{"limits are checked as in Validate, and every problem listed",
			`{"text":"t","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"` + strings.Repeat("x", 3001) + `"}},{"type":"nope"}]}`,
			[]string{`blocks[1] (nope): unknown block type "nope"`, "blocks[0] (section): text is 3001 characters; Slack allows 3000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := problems(ValidateJSON([]byte(tc.payload))); !slices.Equal(got, tc.wanted) {
				t.Errorf("problems\n got: %q\nwant: %q", got, tc.wanted)
			}
		})
	}
}

func TestValidateChecksInteractiveAndMediaElements(t *testing.T) {
	t.Parallel()
	opts := func(n int) []*slack.OptionBlockObject {
		out := make([]*slack.OptionBlockObject, n)
		for i := range out {
			out[i] = slack.NewOptionBlockObject("v", plainText("o"), nil)
		}
		return out
	}
	actions := func(els ...slack.BlockElement) slack.Block { return slack.NewActionBlock("", els...) }
	cases := []struct {
		name  string
		block slack.Block
		want  string // a word of the problem
	}{
		{"a static select without options", actions(&slack.SelectBlockElement{Type: "static_select", Placeholder: plainText("p")}), "options"},
		{"an overflow menu of six options", actions(&slack.OverflowBlockElement{Type: slack.METOverflow, Options: opts(6)}), "options"},
		{"a date picker with a date in another form", actions(&slack.DatePickerBlockElement{Type: slack.METDatepicker, InitialDate: "03/05/2024"}), "initial_date"},
		{"a button label of 76 characters", actions(slack.NewButtonBlockElement("", "", plainText(strings.Repeat("b", 76)))), "75"},
		{"an option value of 151 characters", actions(&slack.RadioButtonsBlockElement{Type: slack.METRadioButtons,
			Options: []*slack.OptionBlockObject{slack.NewOptionBlockObject(strings.Repeat("v", 151), plainText("o"), nil)}}), "value"},
		{"a video without a thumbnail", &slack.VideoBlock{Type: slack.MBTVideo, VideoURL: "https://v.io", AltText: "a", Title: plainText("t")}, "thumbnail_url"},
		{"a video whose video_url is http", &slack.VideoBlock{Type: slack.MBTVideo, VideoURL: "http://v.io/e", ThumbnailURL: "https://v.io/t.jpg",
			AltText: "a", Title: plainText("t")}, "https"},
		{"a video whose title_url is http", &slack.VideoBlock{Type: slack.MBTVideo, VideoURL: "https://v.io/e", ThumbnailURL: "https://v.io/t.jpg",
			AltText: "a", Title: plainText("t"), TitleURL: "http://v.io/w"}, "title_url"},
		{"a rich_text list styled numbered", slack.NewRichTextBlock("", slack.NewRichTextList("numbered", 0,
			slack.NewRichTextSection(slack.NewRichTextSectionTextElement("a", nil)))), "style"},
		{"a rich_text list without a style", slack.NewRichTextBlock("", slack.NewRichTextList("", 0,
			slack.NewRichTextSection(slack.NewRichTextSectionTextElement("a", nil)))), "style"},
		{"a rich_text list whose item is a quote", slack.NewRichTextBlock("", slack.NewRichTextList(slack.RTEListBullet, 0,
			&slack.RichTextQuote{Type: slack.RTEQuote, Elements: []slack.RichTextSectionElement{slack.NewRichTextSectionTextElement("a", nil)}})), "rich_text_section"},
		{"a static select with both options and option groups", actions(&slack.SelectBlockElement{Type: "static_select", Options: opts(1),
			OptionGroups: []*slack.OptionGroupBlockObject{slack.NewOptionGroupBlockElement(plainText("g"), opts(1)...)}}), "option_groups"},
		{"a multi static select with both options and option groups", actions(&slack.MultiSelectBlockElement{Type: "multi_static_select", Options: opts(1),
			OptionGroups: []*slack.OptionGroupBlockObject{slack.NewOptionGroupBlockElement(plainText("g"), opts(1)...)}}), "option_groups"},
		{"a static select option group without a label", actions(&slack.SelectBlockElement{Type: "static_select",
			OptionGroups: []*slack.OptionGroupBlockObject{{Options: opts(1)}}}), "label"},
		{"a rich_text block without elements", &slack.RichTextBlock{Type: slack.MBTRichText}, "elements"},
		{"an image without alt text", slack.NewImageBlock("https://i.io/a.png", "", "", nil), "alt_text"},
		{"a section accessory overflow of one option", slack.NewSectionBlock(mrkdwnText("x"), nil,
			slack.NewAccessory(&slack.OverflowBlockElement{Type: slack.METOverflow, Options: opts(1)})), "options"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			t.Parallel()
			got := problems(Validate(Message{Text: "x", Blocks: []slack.Block{tc.block}}))
			if len(got) == 0 || !strings.Contains(strings.Join(got, "; "), tc.want) {
				t.Errorf("problems %q, want one about %s", got, tc.want)
			}
		})
	}
}
