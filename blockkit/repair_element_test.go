package blockkit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// actionsOf wraps elements in a message with one actions block.
func actionsOf(elements ...string) string {
	return `[{"blocks":[{"type":"actions","elements":[` + strings.Join(elements, ",") + `]}]}]`
}

func option(text, value string) string {
	return fmt.Sprintf(`{"text":{"type":"plain_text","text":%q},"value":%q}`, text, value)
}

func options(n int, url bool) string {
	var parts []string
	for i := range n {
		o := option(fmt.Sprintf("choice %d", i), fmt.Sprintf("v%d", i))
		if url {
			o = strings.TrimSuffix(o, "}") + fmt.Sprintf(`,"url":"https://d.io/%d"}`, i)
		}
		parts = append(parts, o)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

var longURL = "https://example.com/" + strings.Repeat("a", 3100)

func TestRepairKeepsInteractiveAndMediaElementsValid(t *testing.T) {
	t.Parallel()
	runRepairTests(t, []repairTest{
		{name: "a select without options becomes its words as text",
			messages: actionsOf(`{"type":"static_select","placeholder":{"type":"plain_text","text":"Pick a region"},"action_id":"r"}`),
			has:      []string{"Pick a region"}, kinds: []string{"element_converted"},
			check: wantTypes("section")},
		{name: "a select's options get a value from their label and lose an initial option not among them",
			messages: actionsOf(`{"type":"static_select","placeholder":"Region","options":[{"text":"eu-west"},{"text":"us-east"}],"initial_option":{"text":"ap-south","value":"ap"}}`),
			has:      []string{"eu-west", "us-east", "Region"}, hasNot: []string{"ap-south"}, kinds: []string{"element_fixed"},
			check: wantTypes("actions")},
		{name: "a select whose option label is over 75 characters becomes a list of its options",
			messages: actionsOf(`{"type":"static_select","options":[` + option(strings.Repeat("long label ", 8), "l") + `,` + option("short", "s") + `]}`),
			has:      []string{strings.TrimSpace(strings.Repeat("long label ", 8)), "short"}, kinds: []string{"element_converted"},
			check: wantTypes("section")},
		{name: "an overflow menu with more than 5 options becomes a select menu with all of them",
			messages: actionsOf(`{"type":"overflow","action_id":"more","options":` + options(7, false) + `}`),
			has:      []string{"choice 0", "choice 6"}, kinds: []string{"element_converted"},
			check: func(t *testing.T, msgs []Message) {
				el := msgs[0].Blocks[0].(*slack.ActionBlock).Elements.ElementSet[0]
				if s, ok := el.(*slack.SelectBlockElement); !ok || s.Type != "static_select" || len(s.Options) != 7 {
					t.Errorf("element %#v, want a static_select with 7 options", el)
				}
			}},
		{name: "an overflow menu with more than 5 linked options becomes a list of links",
			messages: actionsOf(`{"type":"overflow","options":` + options(6, true) + `}`),
			has:      []string{"• <https://d.io/0|choice 0>", "• <https://d.io/5|choice 5>"}, kinds: []string{"element_converted"},
			check: wantTypes("section")},
		{name: "an overflow menu with one option becomes a button",
			messages: actionsOf(`{"type":"overflow","options":` + options(1, true) + `}`),
			has:      []string{"choice 0", "https://d.io/0"}, check: func(t *testing.T, msgs []Message) {
				if _, ok := msgs[0].Blocks[0].(*slack.ActionBlock).Elements.ElementSet[0].(*slack.ButtonBlockElement); !ok {
					t.Error("the overflow menu is not a button")
				}
			}},
		{name: "a date picker's initial_date written another way is rewritten as YYYY-MM-DD",
			messages: actionsOf(`{"type":"datepicker","action_id":"d","initial_date":"March 5, 2024"}`),
			kinds:    []string{"element_fixed"},
			check: func(t *testing.T, msgs []Message) {
				dp := msgs[0].Blocks[0].(*slack.ActionBlock).Elements.ElementSet[0].(*slack.DatePickerBlockElement)
				if dp.InitialDate != "2024-03-05" {
					t.Errorf("initial_date %q", dp.InitialDate)
				}
			}},
		{name: "a date picker's initial_date that is no date is dropped and shown as text",
			messages: actionsOf(`{"type":"datepicker","initial_date":"next Friday"}`),
			has:      []string{"next Friday"}, kinds: []string{"element_fixed"}, check: wantTypes("actions section")},
		{name: "a time picker's initial_time in 12-hour form is rewritten as HH:mm",
			messages: actionsOf(`{"type":"timepicker","initial_time":"9:30 PM"}`),
			check: func(t *testing.T, msgs []Message) {
				tp := msgs[0].Blocks[0].(*slack.ActionBlock).Elements.ElementSet[0].(*slack.TimePickerBlockElement)
				if tp.InitialTime != "21:30" {
					t.Errorf("initial_time %q", tp.InitialTime)
				}
			}},
		{name: "radio buttons with more than 10 options become a list of their words",
			messages: actionsOf(`{"type":"radio_buttons","options":` + options(11, false) + `}`),
			has:      []string{"choice 0", "choice 10"}, check: wantTypes("section")},
		{name: "a video without a thumbnail becomes a link to the video with its title and description",
			messages: `[{"blocks":[{"type":"video","title":{"type":"plain_text","text":"Demo of the release"},"description":{"type":"plain_text","text":"Five minutes"},"video_url":"https://v.io/x"}]}]`,
			has:      []string{"<https://v.io/x|Demo of the release>", "Five minutes"}, kinds: []string{"block_converted"},
			check: wantTypes("section")},
		{name: "a video with a title over 200 characters becomes text",
			messages: `[{"blocks":[{"type":"video","title":{"type":"plain_text","text":"` + strings.Repeat("demo ", 41) + `"},"video_url":"https://v.io/x","thumbnail_url":"https://v.io/x.png","alt_text":"demo"}]}]`,
			has:      []string{"demo demo"}, check: wantTypes("section")},
		{name: "a video with its required fields is kept and gets alt text from its title",
			messages: `[{"blocks":[{"type":"video","title":{"type":"plain_text","text":"Demo"},"video_url":"https://v.io/x","thumbnail_url":"https://v.io/x.png"}]}]`,
			kinds:    []string{"alt_text_added"}, check: wantTypes("video")},
		{name: "an empty rich_text block is dropped",
			messages: `[{"blocks":[{"type":"rich_text","elements":[]},{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[]}]},` + sectionHi + `]}]`,
			has:      []string{"hi there"}, kinds: []string{"empty_dropped"}, check: wantTypes("section")},
		{name: "a rich_text block Slack would refuse becomes a section of its words",
			messages: `[{"blocks":[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"see "},{"type":"link","text":"docs"}]}]}]}]`,
			has:      []string{"see", "docs"}, kinds: []string{"block_converted"}, check: wantTypes("section")},
		{name: "a button label over 75 characters is shortened on the button and shown whole after it",
			messages: actionsOf(`{"type":"button","action_id":"ok","text":{"type":"plain_text","text":"Approve the deployment of the new payment service to production in the EU region now"}}`),
			has:      []string{"Approve the deployment of the new payment service to production in the EU region now"},
			kinds:    []string{"label_moved"}, check: wantTypes("actions section")},
		{name: "a link button with a label over 75 characters becomes the link with its whole label",
			messages: actionsOf(`{"type":"button","url":"https://d.io/run","text":"` + strings.Repeat("Open the run ", 7) + `"}`),
			has:      []string{"<https://d.io/run|" + strings.TrimSpace(strings.Repeat("Open the run ", 7)) + ">"},
			kinds:    []string{"label_moved"}, check: wantTypes("section")},
		{name: "a button URL longer than Slack allows becomes its label and address as text, never a broken token",
			messages: actionsOf(`{"type":"button","text":"Open the report","url":"` + longURL + `"}`),
			has:      []string{"Open the report", "(https://example.com/aaaa"}, kinds: []string{"element_converted", "link_flattened"}},
		{name: "an image URL longer than Slack allows becomes its alt text and address as text",
			messages: `[{"blocks":[{"type":"image","image_url":"` + longURL + `","alt_text":"latency chart"}]}]`,
			has:      []string{"latency chart", "(https://example.com/aaaa"}, kinds: []string{"link_flattened"}},
		{name: "a link longer than a section keeps its label and address, and no token is cut",
			messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"see <` + longURL + `|the full log> for details"}}]}]`,
			has:      []string{"see the full log", "for details"}, kinds: []string{"link_flattened"}},
		{name: "alt text over 2000 characters is shortened on the image and shown whole after it",
			messages: `[{"blocks":[{"type":"image","image_url":"https://i.io/a.png","alt_text":"` + strings.Repeat("chart ", 400) + `end"}]}]`,
			has:      []string{strings.Repeat("chart ", 399) + "chart end"}, kinds: []string{"alt_text_moved"}, check: wantTypes("image section")},
		{name: "an overflow accessory without options becomes text after its section",
			messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Actions"},"accessory":{"type":"overflow","options":[]}}]}]`,
			has:      []string{"Actions"}, check: func(t *testing.T, msgs []Message) {
				if s := msgs[0].Blocks[0].(*slack.SectionBlock); s.Accessory != nil {
					t.Errorf("the section kept an overflow menu Slack refuses: %+v", s.Accessory.OverflowElement)
				}
			}},
	})
}

// wantTypes checks the block types of the result.
func wantTypes(types string) func(t *testing.T, msgs []Message) {
	return func(t *testing.T, msgs []Message) {
		t.Helper()
		if got := blockTypesOf(msgs); got != types {
			t.Errorf("blocks %q, want %q", got, types)
		}
	}
}

func TestRepairPutsSelectOptionsGivenBesideOptionGroupsInAGroupOfTheirOwn(t *testing.T) {
	t.Parallel()
	groups := `"option_groups":[{"label":{"type":"plain_text","text":"Replicas"},"options":[` +
		option("replica-eu-1", "r1") + `,` + option("replica-eu-2", "r2") + `]}]`
	selectOf := func(typ, extra string) string {
		return actionsOf(`{"type":"` + typ + `","action_id":"pick","options":[` + option("primary-eu", "p") + `],` + groups + extra + `}`)
	}
	wantGroups := func(labels ...string) func(t *testing.T, msgs []Message) {
		return func(t *testing.T, msgs []Message) {
			var got []*slack.OptionGroupBlockObject
			var opts []*slack.OptionBlockObject
			switch el := msgs[0].Blocks[0].(*slack.ActionBlock).Elements.ElementSet[0].(type) {
			case *slack.SelectBlockElement:
				got, opts = el.OptionGroups, el.Options
			case *slack.MultiSelectBlockElement:
				got, opts = el.OptionGroups, el.Options
			default:
				t.Fatalf("element %T, want a select menu", el)
			}
			if len(opts) != 0 || len(got) != len(labels) {
				t.Fatalf("%d options and %d groups, want no options and groups %q", len(opts), len(got), labels)
			}
			for i, g := range got {
				if g.Label.Text != labels[i] {
					t.Errorf("group %d labelled %q, want %q", i, g.Label.Text, labels[i])
				}
			}
		}
	}
	runRepairTests(t, []repairTest{
		{name: "a static select with options and option groups keeps the options as a group before the others",
			messages: selectOf("static_select", ""),
			has:      []string{"primary-eu", "replica-eu-1", "replica-eu-2", "Replicas"}, kinds: []string{"element_fixed"},
			check: wantGroups(looseOptionsLabel, "Replicas")},
		{name: "a multi static select with options and option groups keeps them all",
			messages: selectOf("multi_static_select", ""),
			has:      []string{"primary-eu", "replica-eu-1"}, kinds: []string{"element_fixed"},
			check: wantGroups(looseOptionsLabel, "Replicas")},
		{name: "an initial option among the loose options stays, matched to its group's option",
			messages: selectOf("static_select", `,"initial_option":`+option("primary-eu", "p")),
			check: func(t *testing.T, msgs []Message) {
				el := msgs[0].Blocks[0].(*slack.ActionBlock).Elements.ElementSet[0].(*slack.SelectBlockElement)
				if el.InitialOption == nil || el.InitialOption.Value != "p" {
					t.Errorf("initial option %#v, want primary-eu", el.InitialOption)
				}
			}},
		{name: "an initial option in no group is dropped",
			messages: selectOf("static_select", `,"initial_option":`+option("ap-south", "ap")),
			hasNot:   []string{"ap-south"}, kinds: []string{"element_fixed"}, check: wantGroups(looseOptionsLabel, "Replicas")},
	})
}
