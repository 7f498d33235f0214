package blockkit

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// Answers as files. An answer that takes many messages floods a thread, and
// a table or code too wide for Slack reads as wrapped noise; either is
// better posted as a short message with the whole answer as a file.

// CodeMaxColumns is the widest code line Slack shows without wrapping it
// in a thread on a desktop screen.
const CodeMaxColumns = 120

// FileDecision says whether an answer goes as a file, and why.
type FileDecision struct {
	AsFile bool
	// Reason is a short sentence for the message that goes with the file
	// ("the answer would take 5 messages").
	Reason string
}

// AnswerAsFile decides whether the rendered answer msgs goes as a short
// message plus a file: when it takes more than maxMessages messages, when
// its Markdown source (may be "") holds a table wider than a table block
// takes (TableMaxCells columns) or a code line wider than CodeMaxColumns,
// or when a code block of msgs has such a line. changes are Repair's (may
// be nil): a table block the model wrote too wide, converted to text,
// counts too.
func AnswerAsFile(msgs []Message, markdown string, changes []Change, maxMessages int) FileDecision {
	if maxMessages > 0 && len(msgs) > maxMessages {
		return FileDecision{true, fmt.Sprintf("the answer would take %d messages", len(msgs))}
	}
	if reason := wideMarkdown(markdown); reason != "" {
		return FileDecision{true, reason}
	}
	for _, c := range changes {
		if c.Kind == "table_converted" {
			return FileDecision{true, "a table is too wide for Slack"}
		}
	}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if w := widestCode(b); w > CodeMaxColumns {
				return FileDecision{true, fmt.Sprintf("a code block is %d columns wide", w)}
			}
		}
	}
	return FileDecision{}
}

// wideMarkdown names the first table or code block of markdown too wide
// for Slack, "" when there is none.
func wideMarkdown(markdown string) string {
	if strings.TrimSpace(markdown) == "" {
		return ""
	}
	src := []byte(markdown)
	reason := ""
	_ = ast.Walk(parseMarkdown(src), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *east.Table:
			if cols := len(n.Alignments); cols > TableMaxCells {
				reason = fmt.Sprintf("a table has %d columns", cols)
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				if w := displayWidth(strings.TrimRight(string(seg.Value(src)), "\r\n")); w > CodeMaxColumns {
					reason = fmt.Sprintf("a code block is %d columns wide", w)
					break
				}
			}
		}
		if reason != "" {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return reason
}

// widestCode is the widest line of the code in a block: ``` fences in a
// section's mrkdwn, or rich_text_preformatted elements.
func widestCode(b slack.Block) int {
	widest := 0
	lines := func(s string) {
		for _, l := range strings.Split(s, "\n") {
			widest = max(widest, displayWidth(l))
		}
	}
	switch b := b.(type) {
	case *slack.SectionBlock:
		if b.Text != nil && b.Text.Type == slack.MarkdownType {
			parts := strings.Split(b.Text.Text, "```")
			for i := 1; i < len(parts); i += 2 {
				lines(parts[i])
			}
		}
	case *slack.RichTextBlock:
		for _, e := range b.Elements {
			if p, ok := e.(*slack.RichTextPreformatted); ok {
				var sb strings.Builder
				for _, el := range p.Elements {
					if t, ok := el.(*slack.RichTextSectionTextElement); ok {
						sb.WriteString(t.Text)
					}
				}
				lines(sb.String())
			}
		}
	}
	return widest
}
