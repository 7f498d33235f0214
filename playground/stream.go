package playground

import (
	"encoding/json"
	"html/template"
	"strconv"
	"strings"

	"github.com/slackbot/slackbot/slack/emulator"
)

// A streamed message is drawn as Slack draws one: its tasks as a timeline
// (or, in plan mode, under the plan's title as a checklist), each with its
// status, details and output; the markdown streamed so far; and, once the
// stream is stopped, the blocks it was stopped with (the answer and its
// feedback buttons). While the stream is open the page shows it is still
// being written. Every title, detail, output and markdown text is the
// model's or a tool's, so all of it is escaped or drawn by the Block Kit
// renderer, which escapes. A task's texts are Slack text: the three
// entities Slack escapes with (&amp; &lt; &gt;) are read as the characters
// they stand for, once, and the result is escaped as HTML.

// taskStatus is how the page draws a task's status: its icon and the words
// a screen reader says.
var taskStatus = map[string]struct{ icon, label string }{
	"pending":     {"○", "pending"},
	"in_progress": {"◌", "in progress"},
	"complete":    {"✓", "complete"},
	"error":       {"✕", "failed"},
}

// taskHalted draws a task its ended stream left unfinished.
var taskHalted = struct{ icon, label string }{"■", "stopped"}

// streamed draws a streamed message's content.
func (p *Playground) streamed(st emulator.Stream) template.HTML {
	var b strings.Builder
	mode := "timeline"
	if st.TaskDisplayMode == "plan" {
		mode = "plan"
	}
	b.WriteString(`<div class="pg-stream pg-stream-` + mode + `" data-testid="stream" data-mode="` + mode + `" data-open="` + strconv.FormatBool(st.Open) + `">`)
	if mode == "plan" && st.Plan != "" {
		b.WriteString(`<div class="pg-plan-title" data-testid="plan-title">` + slackText(st.Plan) + `</div>`)
	}
	if len(st.Tasks) > 0 {
		b.WriteString(`<ol class="pg-tasks" data-testid="tasks">`)
		for _, t := range st.Tasks {
			writeTask(&b, t, !st.Open)
		}
		b.WriteString(`</ol>`)
	}
	if st.Markdown != "" {
		b.WriteString(`<div class="pg-stream-text" data-testid="stream-text">`)
		b.WriteString(string(p.drawer.Message(markdownBlock(st.Markdown), "")))
		b.WriteString(`</div>`)
	}
	if !st.Open && len(st.Blocks) > 0 {
		b.WriteString(string(p.drawer.Message(st.Blocks, "")))
	}
	if st.Open {
		b.WriteString(`<div class="pg-streaming" data-testid="streaming">slackbot is working…</div>`)
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String())
}

// writeTask draws one task of a stream. A task left pending or in
// progress when its stream ended (Slack's Stop halts a stream before the
// bot can settle it) is drawn as halted: nothing works on it any more.
func writeTask(b *strings.Builder, t emulator.Task, ended bool) {
	s, ok := taskStatus[t.Status]
	status := t.Status
	if !ok {
		s, status = taskStatus["pending"], "pending"
	}
	halted := ""
	if ended && (status == "pending" || status == "in_progress") {
		s, halted = taskHalted, ` data-halted="true"`
	}
	b.WriteString(`<li class="pg-task" data-testid="task" data-task-id="` + esc(t.ID) + `" data-status="` + status + `"` + halted + `>`)
	b.WriteString(`<span class="pg-task-icon" role="img" aria-label="` + s.label + `">` + s.icon + `</span>`)
	b.WriteString(`<div class="pg-task-body"><div class="pg-task-title">` + slackText(t.Title) + `</div>`)
	if t.Details != "" {
		b.WriteString(`<div class="pg-task-details" data-testid="task-details">` + slackText(t.Details) + `</div>`)
	}
	if t.Output != "" {
		b.WriteString(`<div class="pg-task-output" data-testid="task-output">` + slackText(t.Output) + `</div>`)
	}
	b.WriteString(`</div></li>`)
}

// markdownBlock is streamed markdown as a markdown block, which the Block
// Kit renderer draws the way Slack draws Markdown.
func markdownBlock(md string) json.RawMessage {
	b, _ := json.Marshal([]map[string]string{{"type": "markdown", "text": md}})
	return b
}

// streamsByTS indexes a channel's streams by their message.
func streamsByTS(list []emulator.Stream) map[string]*emulator.Stream {
	out := make(map[string]*emulator.Stream, len(list))
	for i := range list {
		out[list[i].TS] = &list[i]
	}
	return out
}

// slackEntities decodes the entities Slack text escapes with, once:
// "&amp;lt;" is the text "&lt;".
var slackEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// slackText is Slack text as HTML that shows it.
func slackText(s string) string { return esc(slackEntities.Replace(s)) }
