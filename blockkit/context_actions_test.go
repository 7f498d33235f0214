package blockkit

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// feedbackBlock is a context_actions block with feedback buttons, as the
// Slack headend closes an answer with.
func feedbackBlock() *slack.ContextActionsBlock {
	return slack.NewContextActionsBlock("feedback",
		slack.NewFeedbackButtonsBlockElement("slackbot_feedback",
			slack.NewFeedbackButton(plainText("👍"), "positive:S1").WithAccessibilityLabel("Good answer"),
			slack.NewFeedbackButton(plainText("👎"), "negative:S1")))
}

func TestValidateAcceptsContextActions(t *testing.T) {
	t.Parallel()
	trash := slack.NewIconButtonBlockElement("trash", plainText("Delete"), "delete").WithValue("d")
	for name, b := range map[string]slack.Block{
		"feedback buttons":                feedbackBlock(),
		"an icon button":                  slack.NewContextActionsBlock("", trash),
		"feedback and icon buttons, five": slack.NewContextActionsBlock("", feedbackBlock().Elements.ElementSet[0], trash, trash, trash, trash),
	} {
		if err := Validate(Message{Text: "answer", Blocks: []slack.Block{section("answer"), b}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The example of Slack's reference, as JSON.
	payload := `{"text":"t","blocks":[{"type":"context_actions","elements":[{"type":"feedback_buttons","action_id":"feedback_buttons_1",
		"positive_button":{"text":{"type":"plain_text","text":"👍"},"value":"positive_feedback"},
		"negative_button":{"text":{"type":"plain_text","text":"👎"},"value":"negative_feedback"}}]}]}`
	if err := ValidateJSON([]byte(payload)); err != nil {
		t.Errorf("Slack's own example: %v", err)
	}
}

func TestValidateRefusesMalformedContextActions(t *testing.T) {
	t.Parallel()
	fb := func(edit func(e *slack.FeedbackButtonsBlockElement)) slack.Block {
		b := feedbackBlock()
		edit(b.Elements.ElementSet[0].(*slack.FeedbackButtonsBlockElement))
		return b
	}
	icon := func(edit func(e *slack.IconButtonBlockElement)) slack.Block {
		e := slack.NewIconButtonBlockElement("trash", plainText("Delete"), "delete")
		edit(e)
		return slack.NewContextActionsBlock("", e)
	}
	six := slack.NewContextActionsBlock("")
	for range 6 {
		six.Elements.ElementSet = append(six.Elements.ElementSet, feedbackBlock().Elements.ElementSet[0])
	}
	cases := []struct {
		name  string
		block slack.Block
		want  string // the problem, or a part of it
	}{
		{"no elements", slack.NewContextActionsBlock(""), "has 0 elements; Slack allows 1 to 5"},
		{"six elements", six, "has 6 elements; Slack allows 1 to 5"},
		{"a plain button", slack.NewContextActionsBlock("", slack.NewButtonBlockElement("b", "v", plainText("Go"))),
			"takes feedback_buttons and icon_button elements"},
		{"no negative button", fb(func(e *slack.FeedbackButtonsBlockElement) { e.NegativeButton = nil }),
			"negative_button is missing; Slack needs both buttons"},
		{"a button without text", fb(func(e *slack.FeedbackButtonsBlockElement) { e.PositiveButton.Text = nil }),
			"positive_button text is missing"},
		{"a mrkdwn button text", fb(func(e *slack.FeedbackButtonsBlockElement) { e.PositiveButton.Text = mrkdwnText("*up*") }),
			`positive_button text type is "mrkdwn"; Slack needs plain_text`},
		{"a button text of 76 characters", fb(func(e *slack.FeedbackButtonsBlockElement) { e.NegativeButton.Text = plainText(strings.Repeat("n", 76)) }),
			"negative_button text is 76 characters; Slack allows 75"},
		{"an empty value", fb(func(e *slack.FeedbackButtonsBlockElement) { e.PositiveButton.Value = "" }),
			"positive_button value is empty"},
		{"a value of 2001 characters", fb(func(e *slack.FeedbackButtonsBlockElement) { e.PositiveButton.Value = strings.Repeat("v", 2001) }),
			"positive_button value is 2001 characters; Slack allows 2000"},
		{"an accessibility label of 76 characters", fb(func(e *slack.FeedbackButtonsBlockElement) {
			e.PositiveButton.AccessibilityLabel = strings.Repeat("l", 76)
		}), "positive_button accessibility_label is 76 characters; Slack allows 75"},
		{"an action_id of 256 characters", fb(func(e *slack.FeedbackButtonsBlockElement) { e.ActionID = strings.Repeat("a", 256) }),
			"action_id is 256 characters; Slack allows 255"},
		{"an icon Slack does not have", icon(func(e *slack.IconButtonBlockElement) { e.Icon = "star" }), `icon is "star"`},
		{"an icon button without text", icon(func(e *slack.IconButtonBlockElement) { e.Text = nil }), "text is missing"},
		{"an icon button value of 2001 characters", icon(func(e *slack.IconButtonBlockElement) { e.Value = strings.Repeat("v", 2001) }),
			"value is 2001 characters; Slack allows 2000"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			t.Parallel()
			got := problems(Validate(Message{Text: "x", Blocks: []slack.Block{tc.block}}))
			if len(got) == 0 || !strings.Contains(strings.Join(got, "; "), tc.want) {
				t.Errorf("problems %q, want one with %q", got, tc.want)
			}
		})
	}
	// Feedback buttons belong in context_actions, not in an actions block.
	if got := problems(Validate(Message{Text: "x", Blocks: []slack.Block{
		slack.NewActionBlock("", feedbackBlock().Elements.ElementSet[0])}})); len(got) == 0 {
		t.Error("feedback buttons in an actions block passed")
	}
}

func TestRepairKeepsContextActions(t *testing.T) {
	t.Parallel()
	feedback := `{"type":"context_actions","elements":[{"type":"feedback_buttons","action_id":"fb",
		"positive_button":{"text":{"type":"plain_text","text":"Good"},"value":"good"},
		"negative_button":{"text":{"type":"plain_text","text":"Bad"},"value":"bad"}}]}`
	var long []string
	for i := range 70 {
		long = append(long, `{"type":"section","text":{"type":"mrkdwn","text":"part `+strings.Repeat("x", i%7+1)+`"}}`)
	}
	runRepairTests(t, []repairTest{
		{name: "feedback buttons a model wrote are kept as they are",
			messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Answer"}},` + feedback + `]}]`,
			has:      []string{"Good", "good", "Bad", "bad"}, check: wantTypes("section context_actions")},
		{name: "malformed feedback buttons are dropped, not shown as text",
			messages: `[{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Answer"}},
				{"type":"context_actions","elements":[{"type":"feedback_buttons","positive_button":{"text":{"type":"plain_text","text":"Good"},"value":"good"}}]}]}]`,
			hasNot: []string{"Good"}, kinds: []string{"empty_dropped"}, check: wantTypes("section")},
		{name: "a split answer keeps its feedback buttons on its last message",
			messages: `[{"blocks":[` + strings.Join(long, ",") + `,` + feedback + `]}]`,
			kinds:    []string{"message_split"},
			check: func(t *testing.T, msgs []Message) {
				if len(msgs) < 2 {
					t.Fatalf("%d messages, want the answer split", len(msgs))
				}
				for i, m := range msgs {
					for k, b := range m.Blocks {
						isLast := i == len(msgs)-1 && k == len(m.Blocks)-1
						if _, ok := b.(*slack.ContextActionsBlock); ok != isLast {
							t.Errorf("message %d block %d is %s; the feedback buttons belong last", i, k, b.BlockType())
						}
					}
				}
			}},
	})
}

func TestAppendBlocksEndsTheAnswerWithThem(t *testing.T) {
	t.Parallel()
	full := Message{Text: "full"}
	for range MaxBlocks {
		full.Blocks = append(full.Blocks, section("x"))
	}
	cases := []struct {
		name string
		msgs []Message
		want []int // blocks in each message after
	}{
		{"room in the last message", []Message{{Text: "a", Blocks: []slack.Block{section("a")}}, {Text: "b", Blocks: []slack.Block{section("b")}}}, []int{1, 2}},
		{"a full last message", []Message{{Text: "a", Blocks: []slack.Block{section("a")}}, full}, []int{1, MaxBlocks, 1}},
		{"a last message of text only", []Message{{Text: "plain"}}, []int{0, 1}},
		{"no messages", nil, []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := json.Marshal(tc.msgs)
			got := AppendBlocks(tc.msgs, "Feedback", feedbackBlock())
			var sizes []int
			for _, m := range got {
				sizes = append(sizes, len(m.Blocks))
				if err := Validate(m); err != nil && len(m.Blocks) > 0 {
					t.Errorf("message fails Validate: %v", err)
				}
			}
			if !slices.Equal(sizes, tc.want) {
				t.Errorf("blocks per message %v, want %v", sizes, tc.want)
			}
			last := got[len(got)-1].Blocks
			if _, ok := last[len(last)-1].(*slack.ContextActionsBlock); !ok {
				t.Error("the answer does not end with the block")
			}
			if after, _ := json.Marshal(tc.msgs); string(after) != string(before) {
				t.Error("the messages given were changed")
			}
		})
	}
}
