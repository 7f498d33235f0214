package slack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// approval is a wait on the asker for an approval, and its end.
func approval(kind agent.EventKind, outcome string) agent.Event {
	return agent.Event{Kind: kind, Time: time.Now(), Wait: &agent.WaitInfo{ID: "approval-1", Who: []string{asker},
		What: "approval of github create_issue", Outcome: outcome}}
}

// heldSession starts a session in a new thread whose model waits for the
// returned gate, and returns once the session runs.
func heldSession(t *testing.T, w *bottest.World) (*gate, string) {
	t.Helper()
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	ts := w.Slack.Mention(channel, asker, "open an issue")
	w.Model.Wait(1)
	return g, ts
}

// observe hands e to the display of the session running in thread ts, as
// the session's observer does.
func observe(w *bottest.World, ts string, e agent.Event) {
	w.T.Helper()
	if !w.Bots[0].ObserveSession(channel, ts, e) {
		w.T.Fatalf("no session runs in thread %s", ts)
	}
}

// taskTitled is the stream's task titled title.
func taskTitled(s emulator.Stream, title string) (emulator.Task, bool) {
	for _, task := range s.Tasks {
		if task.Title == title {
			return task, true
		}
	}
	return emulator.Task{}, false
}

func agentStatus(w *bottest.World, ts, want string) func() bool {
	return func() bool {
		a, ok := w.Slack.AgentSession(channel, ts)
		return ok && a.Status == want
	}
}

// A streamed session waiting on the asker shows a task "Waiting for @ada"
// until the wait is over, and its agent session is suspended meanwhile.
func TestAStreamedSessionWaitingOnAPersonShowsItAndSuspendsItsAgentSession(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	g, ts := heldSession(t, w)
	streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })

	observe(w, ts, approval(agent.EventWaiting, ""))
	s := streamOf(w, channel, ts, "the wait's task", func(s emulator.Stream) bool {
		task, ok := taskTitled(s, "Waiting for @ada")
		return ok && task.Status == "in_progress"
	})
	if task, _ := taskTitled(s, "Waiting for @ada"); task.Details != "approval of github create_issue" {
		t.Errorf("the wait's details = %q; want what it waits for", task.Details)
	}
	w.Eventually("the agent session to be suspended", agentStatus(w, ts, "suspended"))

	observe(w, ts, approval(agent.EventResumed, "approved"))
	streamOf(w, channel, ts, "the wait to be over", func(s emulator.Stream) bool {
		task, ok := taskTitled(s, "Waiting for @ada")
		return ok && task.Status == "complete" && task.Output == "Approved"
	})
	w.Eventually("the agent session to process again", agentStatus(w, ts, "processing"))

	g.open()
	streamOf(w, channel, ts, "the stream to end with the answer", func(s emulator.Stream) bool {
		return ended(s) && strings.Contains(string(s.Blocks), "Answer to open an issue")
	})
	w.Eventually("the agent session to close", agentStatus(w, ts, "closed"))
	a, _ := w.Slack.AgentSession(channel, ts)
	if got := strings.Join(a.Statuses, ","); got != "processing,suspended,processing,active,closed" {
		t.Errorf("the agent session went %s; want processing, suspended while waiting, processing, active, closed", got)
	}
}

// A session the shutdown interrupts while it waits on a person ends its
// stream with the wait settled, not left in progress. (Slack's own Stop
// halts the stream itself: Slack, not the app, ends its timeline.)
func TestAStreamInterruptedWhileWaitingOnAPersonLeavesNoWaitInProgress(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed, bottest.WithConfig(func(c *config.Config) {
		c.Slack.ShutdownGrace = config.Duration(100 * time.Millisecond)
	}))
	_, ts := heldSession(t, w)
	streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })
	observe(w, ts, approval(agent.EventWaiting, ""))
	w.Eventually("the agent session to be suspended", agentStatus(w, ts, "suspended"))
	w.Shutdown()
	s := streamOf(w, channel, ts, "the stream to end", ended)
	if !strings.Contains(string(s.Blocks), "Interrupted") {
		t.Errorf("the stream ended with %s; want the interrupted note", s.Blocks)
	}
	task, ok := taskTitled(s, "Waiting for @ada")
	if !ok || task.Status != "error" {
		t.Errorf("the wait's task %+v (shown: %v); want it ended in error with the session", task, ok)
	}
	noTaskInProgress(t, s)
}

// A session shown as a progress message says in its headline whom it
// waits on, and goes back to its work once the wait is over.
func TestAProgressMessageWaitingOnAPersonSaysSoInItsHeadline(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) { c.Slack.Display = config.DisplayMessage }))
	g, ts := heldSession(t, w)
	w.ProgressMessage(channel, ts)
	observe(w, ts, approval(agent.EventWaiting, ""))
	w.Eventually("the headline to say whom it waits on", func() bool {
		return strings.Contains(bottest.MessageText(w.ProgressMessage(channel, ts)), "Waiting for @ada")
	})
	observe(w, ts, approval(agent.EventResumed, "approved"))
	w.Eventually("the headline to be the work again", func() bool {
		m := bottest.MessageText(w.ProgressMessage(channel, ts))
		return !strings.Contains(m, "Waiting for") && strings.Contains(m, "Thinking")
	})
	g.open()
	w.Answered(channel, ts, "Answer to open an issue")
}
