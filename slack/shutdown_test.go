package slack_test

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/wait"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
)

// botGoroutines is the stacks of the goroutines running the bot's own
// code (not the tests'), "" when there are none.
func botGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []byte
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("slackbot/slack.(")) || bytes.Contains(g, []byte("slackbot/slack.newLimiter")) {
			out = append(append(out, g...), "\n\n"...)
		}
	}
	return string(out)
}

// Not parallel: it counts every goroutine of the bot's package, and
// parallel tests start only once it is over.
func TestShutdownAfterABurstOfMentionsDropsQueuedReactionRemovalsAndLeavesNothingRunning(t *testing.T) {
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		// Reaction removals at Slack's tier 2, everything else unbounded;
		// the default grace, longer than the test waits for Run.
		c.Slack.RateLimits = map[string]config.RateLimit{"reactions.remove": {PerMinute: 20, Burst: 3}}
		c.Slack.ShutdownGrace = config.Duration(config.DefaultShutdownGrace)
		c.Slack.MaxConcurrentSessions = 40
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	var threads []string
	for i := range 40 {
		threads = append(threads, w.Slack.Mention(channel, asker, "question "+strconv.Itoa(i)))
	}
	for i, ts := range threads {
		w.Answered(channel, ts, "Answer to question "+strconv.Itoa(i))
	}
	if removed := len(w.Slack.Calls("reactions.remove")); removed >= 40 {
		t.Fatalf("all %d reaction removals went out before the shutdown: nothing was queued", removed)
	}
	w.Shutdown() // fails the test when Run has not returned within 20 s
	if t.Failed() {
		return
	}
	w.Eventually("the bot's goroutines to end after Run returned", func() bool { return botGoroutines() == "" },
		wait.Within(5*time.Second), wait.Log(botGoroutines))
}
