package blockkit

import (
	"cmp"
	"strings"

	"github.com/slack-go/slack"
)

// FileText is an answer's messages as one Markdown text, for an answer
// that goes as a file: each block's text as written — mrkdwn emphasis
// kept, Slack's <…> tokens as the words they show (a link as
// [label](address), a mention as @name) and entities decoded — headers
// as headings, tables as Markdown tables, code as fenced blocks; buttons
// and other controls are left out. A file's content is shown as text:
// nothing in it notifies anyone.
func FileText(msgs []Message) string {
	var parts []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if t := strings.TrimSpace(blockFileText(b)); t != "" {
				parts = append(parts, t)
			}
		}
		if len(m.Blocks) == 0 && strings.TrimSpace(m.Text) != "" {
			parts = append(parts, mrkdwnFileText(m.Text))
		}
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// blockFileText is one block of FileText.
func blockFileText(b slack.Block) string {
	text := func(t *slack.TextBlockObject) string {
		if t == nil {
			return ""
		}
		if t.Type == slack.MarkdownType {
			return mrkdwnFileText(t.Text)
		}
		return t.Text
	}
	switch b := b.(type) {
	case *slack.HeaderBlock:
		return "## " + text(b.Text)
	case *slack.SectionBlock:
		lines := []string{text(b.Text)}
		for _, f := range b.Fields {
			lines = append(lines, text(f))
		}
		return strings.Join(lines, "\n")
	case *slack.ContextBlock:
		var words []string
		for _, e := range b.ContextElements.Elements {
			if t, ok := e.(*slack.TextBlockObject); ok {
				words = append(words, text(t))
			}
		}
		return strings.Join(words, " ")
	case *slack.MarkdownBlock:
		return b.Text
	case *slack.DividerBlock:
		return "---"
	case *slack.ImageBlock:
		return "![" + b.AltText + "](" + b.ImageURL + ")"
	case *slack.TableBlock:
		return tableFileText(b)
	case *slack.RichTextBlock:
		return richTextFileText(b.Elements)
	}
	return ""
}

// mrkdwnFileText is mrkdwn s with its tokens as words and its entities
// decoded.
func mrkdwnFileText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(entityDecoder.Replace(s[i : i+j]))
			i += j
			continue
		}
		n := scanSlackToken([]byte(s[i:]))
		if n == 0 {
			b.WriteByte('<')
			i++
			continue
		}
		body := s[i+1 : i+n-1]
		if url, label, ok := linkTokenParts(body); ok {
			b.WriteString("[" + label + "](" + url + ")")
		} else {
			b.WriteString(entityDecoder.Replace(readableToken(body)))
		}
		i += n
	}
	return b.String()
}

// tableFileText is a table block as a Markdown table, its first row the
// header.
func tableFileText(t *slack.TableBlock) string {
	var lines []string
	for i, row := range t.Rows {
		cells := make([]string, len(row))
		for j, c := range row {
			switch c := c.(type) {
			case *slack.TableRawTextCell:
				cells[j] = c.Text
			case *slack.TableRichTextCell:
				cells[j] = strings.TrimSpace(richTextFileText(c.Elements))
			}
			cells[j] = strings.ReplaceAll(strings.ReplaceAll(cells[j], "\n", " "), "|", `\|`)
		}
		lines = append(lines, "| "+strings.Join(cells, " | ")+" |")
		if i == 0 {
			lines = append(lines, "|"+strings.Repeat(" --- |", len(row)))
		}
	}
	return strings.Join(lines, "\n")
}

// richTextFileText is rich text elements as Markdown lines.
func richTextFileText(els []slack.RichTextElement) string {
	var b strings.Builder
	for _, e := range els {
		switch e := e.(type) {
		case *slack.RichTextSection:
			b.WriteString(richSectionText(e.Elements) + "\n")
		case *slack.RichTextPreformatted:
			b.WriteString("```\n" + strings.TrimRight(richSectionText(e.Elements), "\n") + "\n```\n")
		case *slack.RichTextQuote:
			for _, l := range strings.Split(richSectionText(e.Elements), "\n") {
				b.WriteString("> " + l + "\n")
			}
		case *slack.RichTextList:
			for _, item := range e.Elements {
				if s, ok := item.(*slack.RichTextSection); ok {
					b.WriteString(strings.Repeat("  ", e.Indent) + "- " + richSectionText(s.Elements) + "\n")
				}
			}
		}
	}
	return b.String()
}

// richSectionText is a rich text section's elements as text.
func richSectionText(els []slack.RichTextSectionElement) string {
	var b strings.Builder
	for _, e := range els {
		switch e := e.(type) {
		case *slack.RichTextSectionTextElement:
			b.WriteString(e.Text)
		case *slack.RichTextSectionLinkElement:
			if e.Text != "" && e.Text != e.URL {
				b.WriteString("[" + e.Text + "](" + e.URL + ")")
			} else {
				b.WriteString(e.URL)
			}
		case *slack.RichTextSectionUserElement:
			b.WriteString("@" + e.UserID)
		case *slack.RichTextSectionChannelElement:
			b.WriteString("#" + e.ChannelID)
		case *slack.RichTextSectionEmojiElement:
			b.WriteString(":" + e.Name + ":")
		case *slack.RichTextSectionBroadcastElement:
			b.WriteString("@" + e.Range)
		case *slack.RichTextSectionUserGroupElement:
			b.WriteString("@" + cmp.Or(e.UsergroupID, "group"))
		}
	}
	return b.String()
}
