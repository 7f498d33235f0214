package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/slackbot/slackbot/config"
)

// Messages the loop injects. They name the final report tool because that
// is the only way an answer leaves a session.
const (
	maxTurnsFinalMessage = "This is your final turn: no more tools can be called. Call " + FinalReportTool +
		" now with the best answer you can give from what you already have. If the task is not complete, use status \"partial\" and say what is missing."
	contextFinalMessage = "The conversation has reached the limit of the context window, so no more tools can be called. Call " + FinalReportTool +
		" now with the best answer you can give from what you already have. If the task is not complete, use status \"partial\" and say what is missing."
	timeFinalMessage = "The time for this request is almost up, so no more tools can be called. Call " + FinalReportTool +
		" now with the best answer you can give from what you already have. If the task is not complete, use status \"partial\" and say what is missing."
	taskDoneFinalMessage    = "You reported the task complete. Call " + FinalReportTool + " now with your answer."
	restrictionFinalMessage = "You answered without calling a tool too many times. Call " + FinalReportTool + " now; it is the only tool left."
	finalRetryMessage       = "You did not call " + FinalReportTool + ". Call it now: it is the only way to deliver your answer, and no other tool is available."
	emptyReplyMessage       = "Your reply was empty. Continue the task with a tool call, or deliver your answer by calling " + FinalReportTool + "."
)

// systemPrompt is the agent's prompt followed by how to deliver the answer
// in this session's format, and the instructions that come with the tools
// it is offered. It is the same for every session of an agent while the
// tools stay the same, so it is built (and its tokens counted) once;
// sessionPrompt adds what changes.
func systemPrompt(a *config.Agent, format string, offered map[string]bool, instructions string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(a.Prompt))
	b.WriteString("\n\n## Delivering your answer\n")
	fmt.Fprintf(&b, "When you have the answer, call the tool `%s` with status, report_format \"%s\" and ", FinalReportTool, format)
	switch format {
	case config.FormatJSON:
		b.WriteString("content_json: a JSON object with the answer.")
		if len(a.Output.Schema) > 0 {
			s, _ := json.Marshal(a.Output.Schema)
			fmt.Fprintf(&b, " content_json must match this JSON Schema:\n```json\n%s\n```", s)
		}
	case config.FormatSlackBlockKit:
		b.WriteString("messages: the answer as Slack Block Kit messages.\n" + slackGuide)
	default:
		fmt.Fprintf(&b, "report_content: the complete answer. %s", formatGuide(format))
	}
	b.WriteString("\nCall it exactly once: it ends the session, and text outside it is not shown to the user.")
	if offered[TaskStatusTool] {
		b.WriteString("\nDuring longer tasks, call `" + TaskStatusTool + "` to tell the user what you are doing.")
	}
	if offered[SearchTool] {
		b.WriteString("\nOnly some of your tools are listed. To find the others, call `" + SearchTool + "` with what you want to do in words; " +
			"the tools it finds can be called from your next turn.")
	}
	if offered[BatchTool] {
		b.WriteString("\nTo run several independent tools at once, call them in one turn or use `" + BatchTool + "`.")
	}
	for _, name := range a.Agents {
		if offered[SubAgentPrefix+name] {
			b.WriteString("\nThe `" + SubAgentPrefix + "<name>` tools are other agents: each sees nothing of this conversation, so give it a self-contained task.")
			break
		}
	}
	if offered[HandoffTool] {
		b.WriteString("\nIf one of the agents of `" + HandoffTool + "` is better suited to answer, hand the request off to it instead of answering: " +
			"it then answers the user, and you write no final report.")
	}
	if instructions = strings.TrimSpace(instructions); instructions != "" {
		b.WriteString("\n\n## Instructions for your tools\n" + instructions)
	}
	return b.String()
}

// sessionPrompt is the part of the system prompt that changes per session:
// the XML fallback with this session's nonce, and the time.
func sessionPrompt(format, nonce string, now time.Time) string {
	return fmt.Sprintf("\nIf you cannot call tools, write your final answer wrapped exactly like this, and nothing after it:\n"+
		"<ai-agent-%s-FINAL format=\"%s\">\nyour answer\n</ai-agent-%s-FINAL>\n\nCurrent date and time: %s.",
		nonce, format, nonce, now.UTC().Format("Monday, 2 January 2006 15:04 MST"))
}

func formatGuide(format string) string {
	switch format {
	case config.FormatMarkdown:
		return "Write GitHub-flavoured Markdown."
	case config.FormatMarkdownMermai:
		return "Write GitHub-flavoured Markdown; diagrams as ```mermaid blocks."
	case config.FormatTTY:
		return "Write plain text for a terminal: short lines, no Markdown markup."
	case config.FormatPipe, config.FormatText:
		return "Write plain text without any markup."
	case config.FormatSubAgent:
		return "Write a complete, self-contained answer for the agent that asked: it sees nothing else of your work."
	}
	return ""
}

// slackGuide tells the model the shape and the limits of Block Kit
// (blocks per message, text lengths, mrkdwn rather than Markdown); blockkit
// repairs what the model still gets wrong.
const slackGuide = `Shape: [{"blocks": [ ...blocks... ]}, ...] — one object per Slack message.
Blocks you may use:
- {"type":"header","text":{"type":"plain_text","text":"Title"}} — at most 150 characters, no markup.
- {"type":"section","text":{"type":"mrkdwn","text":"..."}} — at most 2900 characters; split longer text over several sections.
- {"type":"divider"}
- {"type":"context","elements":[{"type":"mrkdwn","text":"..."}]} — small print, at most 10 elements of 2000 characters.
Text is Slack mrkdwn, NOT Markdown: *bold*, _italic_, ~strike~, ` + "`code`" + `, ` + "```code block```" + `, <https://example.com|link text>, bullets as "• item". No # headings, no **double asterisks**, no [text](url) links, no tables (use a code block with aligned columns).
At most 50 blocks per message; start another message for more.
Give the answer once, in messages. Use report_content (Markdown) only if you cannot write Block Kit, instead of messages.`
