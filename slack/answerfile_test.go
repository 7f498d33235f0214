package slack_test

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/tools/tooloutput"
)

func TestAFollowUpReadsTheAnswerThatWentAsAFile(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, threeMessages, bottest.WithConfig(func(c *config.Config) {
		c.Agents[bottest.AgentName].ToolOutput = config.ToolOutput{MaxBytes: 12288, MaxChunksForFullMode: 1, OverlapPercent: 10}
	}), bottest.WithRunner(func(r *agent.Runner) {
		run, err := tooloutput.OpenRun(t.TempDir(), zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = run.Close() })
		r.ToolOutput = run
	}))
	const needle = "ERROR order 4242: the refund was sent twice."
	var answer strings.Builder
	answer.WriteString("The deployment log, summarised.\n\n")
	for i := range 20 {
		if i == 10 {
			answer.WriteString(needle + "\n\n")
		}
		fmt.Fprintf(&answer, "¶%d %s\n\n", i, strings.Repeat("A paragraph of the answer that goes on for a while. ", 40))
	}
	w.Model.Push(llmtest.TextReport(answer.String()))
	root := w.Slack.Mention(channel, asker, "how did the deployment go?")
	up := sharedFile(w, root)
	w.Answered(channel, root, "in the file answer.md")

	var history, fetched, grepped string
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if reply, ok := readGrepAgent(r, &grepped, func(g string) string { return g }); ok {
			return reply
		}
		switch res := toolResultsOf(r); len(res) {
		case 0:
			for _, m := range r.Messages {
				history += m.Content + "\n"
			}
			return llmtest.Call(slack.FetchFileTool, argsOf(map[string]any{"file_id": up.ID}))
		case 1:
			fetched = res[0].Content
			return grepFetched(fetched)
		}
		return llmtest.TextReport("Order 4242's refund was sent twice.")
	})
	w.Slack.Reply(channel, root, asker, "what went wrong with order 4242?")
	w.Answered(channel, root, "refund was sent twice")

	if want := "[File " + up.ID + " shared by the bot: answer.md, text/markdown, "; !strings.Contains(history, want) {
		t.Errorf("the follow-up's history does not list the answer's file as %q…:\n%.3000s", want, history)
	}
	if !strings.Contains(fetched, "tool_output(handle") {
		t.Errorf("%s of answer.md answered %.300q, want a handle to its text", slack.FetchFileTool, fetched)
	}
	if !strings.Contains(grepped, needle) {
		t.Errorf("Grep answered %.300q, want the line from the middle of answer.md", grepped)
	}
}
