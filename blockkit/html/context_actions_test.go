package html

import "testing"

func TestContextActionsRender(t *testing.T) {
	t.Parallel()
	runCases(t, []renderCase{
		{
			name: "feedback buttons are a thumb up and a thumb down that carry their action and value",
			blocks: `[{"type":"context_actions","elements":[{"type":"feedback_buttons","action_id":"slackbot_feedback",
				"positive_button":{"text":{"type":"plain_text","text":"Good"},"value":"positive:S1","accessibility_label":"This answer helped"},
				"negative_button":{"text":{"type":"plain_text","text":"Bad"},"value":"negative:S1"}}]}]`,
			want: []string{
				`<div class="bk-context-actions">`,
				`<button class="bk-feedback bk-feedback-positive" type="button" data-action-id="slackbot_feedback" data-value="positive:S1" title="Good" aria-label="This answer helped">` + thumbUpIcon + `</button>`,
				`<button class="bk-feedback bk-feedback-negative" type="button" data-action-id="slackbot_feedback" data-value="negative:S1" title="Bad" aria-label="Bad">` + thumbDownIcon + `</button>`,
			},
			reject: []string{"unsupported"},
		},
		{
			name: "an icon button is its icon, labelled by its text",
			blocks: `[{"type":"context_actions","elements":[{"type":"icon_button","icon":"trash","action_id":"del","value":"m1",
				"text":{"type":"plain_text","text":"Delete"}}]}]`,
			want: []string{`<button class="bk-icon-button" type="button" data-action-id="del" data-value="m1" title="Delete" aria-label="Delete">` + trashIcon + `</button>`},
		},
		{
			name: "what the buttons carry is escaped",
			blocks: `[{"type":"context_actions","elements":[{"type":"feedback_buttons","action_id":"a\"><script>x</script>",
				"positive_button":{"text":{"type":"plain_text","text":"<b>up</b>"},"value":"\"><img src=x onerror=alert(1)>"},
				"negative_button":{"text":{"type":"plain_text","text":"down"},"value":"n","accessibility_label":"<i>no</i>"}}]}]`,
			want: []string{`data-action-id="a&#34;&gt;&lt;script&gt;x&lt;/script&gt;"`, `title="&lt;b&gt;up&lt;/b&gt;"`,
				`data-value="&#34;&gt;&lt;img src=x onerror=alert(1)&gt;"`, `aria-label="&lt;i&gt;no&lt;/i&gt;"`},
			reject: []string{"<script>", "<img", "<b>", "<i>"},
		},
	})
}
