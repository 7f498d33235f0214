package slack_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/state/redistest"
)

const (
	threeInProgress = "You already have 3 questions in progress; ask again when one is answered."
	oneInProgress   = "You already have a question in progress; ask again when it is answered."
	busyRefusal     = "I'm answering a lot of questions right now; please ask again in a few minutes."
)

// ephemeralsTo counts the ephemeral messages with text shown to user.
func ephemeralsTo(w *bottest.World, user, text string) int {
	n := 0
	for _, e := range w.Slack.Ephemerals() {
		if e.User == user && e.Text == text {
			n++
		}
	}
	return n
}

// heldModel makes every model call wait until the gate opens (at the
// latest when the test ends), then answer "Answer to <question>".
func heldModel(t *testing.T, w *bottest.World) *gate {
	g := newGate()
	t.Cleanup(g.open) // before the bots stop, so no session is left waiting
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	return g
}

func TestAPersonWithThreeQuestionsInProgressIsAskedToWaitForOne(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.MaxSessionsPerUser = 3
		c.Slack.MaxConcurrentSessions = 1 // one runs, two wait: queued ones count too
	}))
	g := heldModel(t, w)
	var threads []string
	for i := range 3 {
		threads = append(threads, w.Slack.Mention(fmt.Sprintf("C0ROOM%d", i), asker, "question "+strconv.Itoa(i)))
	}
	w.Model.Wait(1)
	w.Slack.Mention("C0ROOM3", asker, "question 3")
	w.Eventually("the fourth question to be refused", func() bool { return ephemeralsTo(w, asker, threeInProgress) == 1 })
	// Someone else is not held back by Ada's questions.
	w.Slack.AddUser("U0BOB", "bob")
	bobs := w.Slack.Mention("C0ROOM4", "U0BOB", "bob's question")
	g.open()
	for i, ts := range threads {
		w.Answered(fmt.Sprintf("C0ROOM%d", i), ts, "Answer to question "+strconv.Itoa(i))
	}
	w.Answered("C0ROOM4", bobs, "Answer to bob's question")
	// Once they are answered, Ada may ask again.
	ts := w.Slack.Mention("C0ROOM3", asker, "question 5")
	w.Answered("C0ROOM3", ts, "Answer to question 5")
	if n := len(w.Model.Requests()); n != 5 {
		t.Fatalf("%d model calls, want 5: the refused question reached the model", n)
	}
}

func TestAQuestionPastTheQueueBoundIsToldTheBotIsBusy(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.MaxConcurrentSessions = 1
		c.Slack.MaxQueuedSessions = 1
	}))
	g := heldModel(t, w)
	for _, u := range []string{"U0BOB", "U0CAT"} {
		w.Slack.AddUser(u, strings.ToLower(u[3:]))
	}
	first := w.Slack.Mention("C0ROOM0", asker, "question 0")
	w.Model.Wait(1) // the first runs
	second := w.Slack.Mention("C0ROOM1", "U0BOB", "question 1")
	w.Eventually("the second to queue", func() bool {
		for _, m := range bottest.BotMessages(w.Slack.Thread("C0ROOM1", second)) {
			if strings.Contains(bottest.MessageText(m), "Queued") {
				return true
			}
		}
		return false
	})
	w.Slack.Mention("C0ROOM2", "U0CAT", "question 2")
	w.Eventually("the third to be refused", func() bool { return ephemeralsTo(w, "U0CAT", busyRefusal) == 1 })
	g.open()
	w.Answered("C0ROOM0", first, "Answer to question 0")
	w.Answered("C0ROOM1", second, "Answer to question 1")
	if n := len(w.Model.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2: the refused question reached the model", n)
	}
}

func TestTwoReplicasOnRedisHoldOnePersonsCapTogether(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "percap:")), bottest.WithConfig(func(c *config.Config) { c.Slack.MaxSessionsPerUser = 1 }))
	w.Replica(bottest.OnStore(dialRedis(t, srv, "percap:")))
	g := heldModel(t, w)
	first := w.Slack.Mention(channel, asker, "question 0")
	w.Model.Wait(1)
	firstConn := mentionConn(w, first)
	// Mentions until one goes to the other replica: each is refused, there
	// too, while the first is in progress.
	for i := 1; ; i++ {
		if i > 40 {
			t.Fatalf("%d mentions all went to connection %d", i-1, firstConn)
		}
		ts := w.Slack.Mention(channel, asker, "question "+strconv.Itoa(i))
		w.Eventually("question "+strconv.Itoa(i)+" to be refused", func() bool { return ephemeralsTo(w, asker, oneInProgress) == i })
		if mentionConn(w, ts) != firstConn {
			break
		}
	}
	g.open()
	w.Answered(channel, first, "Answer to question 0")
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls, want 1: a question over the person's cap reached the model", n)
	}
}

// quotaSpent is what the state store counts against user's daily tokens.
func quotaSpent(t *testing.T, w *bottest.World, kind, who string) float64 {
	t.Helper()
	key := "quota:" + kind + ":" + who + ":" + time.Now().UTC().Format("2006-01-02") + ":tokens"
	v, err := w.Store.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSixQuestionsAskedAtOnceCannotSpendMoreThanTheDailyBudget(t *testing.T) {
	t.Parallel()
	const budget = 1000
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Quotas = config.Quotas{User: config.Budget{DailyTokens: budget}, Message: config.DefaultQuotaMessage}
		c.Slack.MaxConcurrentSessions = 6
	}))
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		reply := llmtest.TextReport("Answer to " + lastUserText(r))
		reply.Usage = &llmtest.Usage{Input: 300, Output: 100} // 400 tokens a session
		return reply
	})
	threads := map[string]string{}
	for i := range 6 {
		ch := fmt.Sprintf("C0ROOM%d", i)
		threads[ch] = w.Slack.Mention(ch, asker, "question "+strconv.Itoa(i))
	}
	w.Eventually("every question to be admitted or refused", func() bool {
		return len(w.Model.Requests())+ephemeralsTo(w, asker, config.DefaultQuotaMessage) == 6
	})
	g.open()
	for ch, ts := range threads {
		w.Eventually("the question in "+ch+" to be settled", func() bool {
			for _, m := range bottest.BotMessages(w.Slack.Thread(ch, ts)) {
				if strings.Contains(bottest.MessageText(m), "Answer to") {
					return true
				}
			}
			return w.Slack.Thread(ch, ts) != nil && len(bottest.BotMessages(w.Slack.Thread(ch, ts))) == 0 && ephemeralsTo(w, asker, config.DefaultQuotaMessage) > 0
		})
	}
	answered := len(w.Model.Requests())
	w.Eventually("the sessions' usage to be settled", func() bool { return quotaSpent(t, w, "user", asker) == float64(400*answered) })
	if spent := quotaSpent(t, w, "user", asker); spent > budget {
		t.Fatalf("six questions at once spent %v tokens of a daily budget of %d (%d answered)", spent, budget, answered)
	}
	if answered == 0 {
		t.Fatal("no question was answered")
	}
}

func TestASlashCommandIsChargedToTheChannelWhereItWasTyped(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Quotas = config.Quotas{Channel: config.Budget{DailyTokens: 100}, Message: config.DefaultQuotaMessage}
	}))
	w.Slack.AddChannel("C0OUTSIDE", "outside", false)   // the bot is not a member: the answer goes to the DM
	w.Model.Push(llmtest.TextReport("A first answer.")) // 150 tokens: over the channel's budget afterwards
	w.Slack.Slash("C0OUTSIDE", asker, "/ask", "first question")
	w.Eventually("the answer in the DM", func() bool {
		for _, m := range w.Slack.BotMessages("D" + asker) {
			if strings.Contains(bottest.MessageText(m), "A first answer") {
				return true
			}
		}
		return false
	})
	w.Eventually("the usage to be counted", func() bool { return quotaSpent(t, w, "channel", "C0OUTSIDE") == 150 })
	if dm := quotaSpent(t, w, "channel", "D"+asker); dm != 0 {
		t.Fatalf("the DM was charged %v tokens for a question asked in #outside", dm)
	}
	w.Slack.Slash("C0OUTSIDE", asker, "/ask", "second question")
	w.Eventually("the refusal to be logged", func() bool {
		return w.Logs.FilterMessage("request over its daily budget").Len() == 1
	})
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls: the question over the channel's budget reached the model", n)
	}
}
