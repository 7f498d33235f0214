package agent

import (
	"strings"

	"github.com/slackbot/slackbot/blockkit"
	"github.com/slackbot/slackbot/config"
)

// Reports the loop adopts when the model did not write one: from a
// terminate result, or as a last resort from the latest tool result.

// adoptTerminate builds the report from a terminate result when the model
// did not deliver one: the note, or without one the last text the model
// wrote, or else "Finished".
func (s *session) adoptTerminate() {
	note, src := s.terminate.note, SourceToolMessage
	if s.terminate.finish {
		src = SourceFinish
	}
	if note != "" && src == SourceToolMessage && s.format == config.FormatSlackBlockKit {
		// A tool's note is the tool's words, shown as such.
		s.capture(s.toolDataReport(note, StatusSuccess), nil)
		return
	}
	if note == "" {
		note = strings.TrimSpace(s.lastText)
	}
	if note == "" {
		note = finishedNote
	}
	rep, _ := reportFromText(note, s.format, s.schema, src)
	if rep == nil {
		rep = &Report{Status: StatusSuccess, Format: s.format, Source: src, Content: note}
		if s.format == config.FormatJSON {
			rep.ContentJSON = map[string]any{"note": note}
			rep.SchemaErrors = validateJSON(s.schema, rep.ContentJSON)
		}
	}
	s.capture(rep, nil)
}

// finishedNote is what a terminate result without a note says, to the
// model and, when the model wrote nothing, to the user.
const finishedNote = "Finished"

// adoptLastResort takes the latest successful tool result as a partial
// answer rather than ending with nothing. It is the tool's data, not an
// answer the model wrote: for slack-block-kit it is shown as text (JSON in
// a code block), never read as Block Kit.
func (s *session) adoptLastResort() bool {
	s.mu.Lock()
	last := s.lastTool
	s.mu.Unlock()
	if strings.TrimSpace(last) == "" {
		return false
	}
	var rep *Report
	if s.format == config.FormatSlackBlockKit {
		rep = s.toolDataReport(last, StatusPartial)
	} else if rep, _ = reportFromText(last, s.format, s.schema, SourceToolMessage); rep == nil {
		return false
	}
	rep.Status = StatusPartial
	rep.Metadata = map[string]any{"note": "The model did not write a final report; this is the last tool result it received."}
	return s.capture(rep, []string{"adopted the last tool result"})
}

// toolDataReport is a slack-block-kit report made of a tool's text: JSON
// shown pretty-printed in a code block, other text as Markdown. It is
// converted as Markdown only, since repair would read Block Kit JSON in the
// fallback text as blocks, letting a tool post blocks in the bot's name.
// Slack tokens in the tool's text are its words, shown as written: a tool
// cannot mention, broadcast or disguise a link in the bot's name.
func (s *session) toolDataReport(text, status string) *Report {
	md := asMarkdownData(text)
	return &Report{Status: status, Format: s.format, Source: SourceToolMessage, Content: md, Slack: blockkit.FromMarkdownData(md)}
}
