// Package html draws Block Kit messages as HTML the way Slack shows them,
// for the playground and `slackbot render --html`.
package html

import (
	"encoding/json"
	"html/template"
)

// Message renders one message's blocks (a JSON array of Block Kit blocks)
// with its notification text as the fallback when there are no blocks.
// Everything from the message is escaped: a <script> in an answer is text.
func Message(blocks json.RawMessage, text string) template.HTML {
	// Placeholder until the renderer lands: the blocks as escaped JSON.
	if len(blocks) == 0 {
		return template.HTML("<div class=\"bk-text\">" + template.HTMLEscapeString(text) + "</div>")
	}
	return template.HTML("<pre class=\"bk-raw\">" + template.HTMLEscapeString(string(blocks)) + "</pre>")
}
