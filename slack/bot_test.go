package slack_test

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

func TestAMentionIsAnsweredInItsThreadAndTheProgressGivesWayToTheAnswer(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{
		map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": "Release notes"}},
		llmtest.Section("The *fast path* is now the default."),
	}}}))
	ts := w.Slack.Mention(channel, asker, "what changed in the release?")
	thread := w.Answered(channel, ts, "fast path")

	if got := lastUserText(w.Model.Requests()[0]); got != "what changed in the release?" {
		t.Errorf("the model was asked %q: the mention must be stripped", got)
	}
	bot := bottest.BotMessages(thread)
	if len(bot) != 1 {
		t.Fatalf("%d bot messages in the thread, want the answer alone (the progress message replaced): %+v", len(bot), bot)
	}
	if len(bot[0].History) == 0 || !strings.Contains(string(bot[0].History[0].Blocks), "Stop") {
		t.Errorf("the answer did not replace a progress message with a Stop button: history %+v", bot[0].History)
	}
	if !strings.Contains(string(bot[0].Blocks), `"header"`) {
		t.Errorf("the answer is not the Block Kit the model wrote: %s", bot[0].Blocks)
	}
	w.Eventually("every envelope to be acked", func() bool {
		for _, a := range w.Slack.Envelopes() {
			if !a.Acked {
				return false
			}
		}
		return true
	})
}

func TestADirectMessageIsAnswered(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Hello **Ada**."))
	dm, ts := w.Slack.DM(asker, "hi there")
	w.Answered(dm, ts, "Ada")
	if got := lastUserText(w.Model.Requests()[0]); got != "hi there" {
		t.Errorf("the model was asked %q", got)
	}
}

func TestTheSlashCommandIsAckedAtOnceAndAnsweredInTheChannel(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Forty-two."))
	env := w.Slack.Slash(channel, asker, "/ask", "the answer to everything?")
	var root string
	w.Eventually("the question posted in the channel", func() bool {
		for _, m := range w.Slack.Messages(channel) {
			if m.BotID != "" && m.ThreadTS == "" || m.BotID != "" && m.ThreadTS == m.TS {
				if strings.Contains(bottest.MessageText(m), "the answer to everything?") {
					root = m.TS
					return true
				}
			}
		}
		return false
	})
	w.Answered(channel, root, "Forty-two")
	var ack *emulator.Ack
	for _, a := range w.Slack.Acks() {
		if a.EnvelopeID == env {
			ack = &a
		}
	}
	if ack == nil || !strings.Contains(string(ack.Payload), "Working on it") || !strings.Contains(string(ack.Payload), "ephemeral") {
		t.Fatalf("the slash command's ack: %+v", ack)
	}
}

func TestAFollowUpInTheThreadCarriesTheConversation(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Paris is the capital of France."), llmtest.TextReport("About 2.1 million people."))
	ts := w.Slack.Mention(channel, asker, "capital of France?")
	w.Answered(channel, ts, "Paris")
	w.Slack.Reply(channel, ts, asker, "and how many live there?")
	w.Answered(channel, ts, "2.1 million")
	reqs := w.Model.Requests()
	second := reqs[len(reqs)-1]
	var roles []string
	for _, m := range second.Messages {
		roles = append(roles, string(m.Role)+": "+m.Content)
	}
	joined := strings.Join(roles, "\n")
	for _, want := range []string{"user: ada: capital of France?", "assistant: Paris is the capital of France.", "user: and how many live there?"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the follow-up's conversation lacks %q:\n%s", want, joined)
		}
	}
}

func TestARedeliveredEventIsAnsweredOnce(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Once."), llmtest.TextReport("Twice?!"))
	ts := w.Slack.Mention(channel, asker, "say it once")
	w.Answered(channel, ts, "Once")
	for _, e := range w.Slack.Envelopes() {
		if e.Type == "events_api" && strings.Contains(string(e.Payload), "app_mention") {
			if _, err := w.Slack.Redeliver(e.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Logged("duplicate event ignored") // the redelivered mention was recognised
	// A later question is answered with the second scripted reply: the
	// duplicate did not take it.
	ts2 := w.Slack.Mention(channel, asker, "and again")
	w.Answered(channel, ts2, "Twice")
	if n := len(w.Model.Requests()); n != 2 {
		t.Fatalf("%d model calls: the duplicate was answered", n)
	}
}

func TestAnAnswerSurvivesADisconnectMidSession(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	g := newGate()
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Still here.")
	})
	ts := w.Slack.Mention(channel, asker, "are you there?")
	w.Model.Wait(1)
	w.Slack.Disconnect("refresh_requested")
	w.Eventually("the bot to reconnect", func() bool { return w.Slack.Connections() > 0 })
	g.open()
	w.Answered(channel, ts, "Still here")
	ts2 := w.Slack.Mention(channel, asker, "and now?")
	w.Answered(channel, ts2, "Still here")
}

func TestRateLimitedUpdatesStillDeliverTheAnswer(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Slack.RateLimit("chat.update", 3, time.Second)
	w.Model.Push(llmtest.TextReport("Delivered despite the limit."))
	ts := w.Slack.Mention(channel, asker, "hello")
	w.Answered(channel, ts, "Delivered despite the limit")
	limited := 0
	for _, c := range w.Slack.Calls("chat.update") {
		if c.Status == 429 {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("no chat.update was rate limited: the test proves nothing")
	}
}

func TestAnAnswerTooLongForOneMessageIsSplit(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	var b strings.Builder
	for i := range 120 {
		b.WriteString("## Part ")
		b.WriteString(strings.Repeat("x", 1))
		b.WriteString("\n\nParagraph number " + strings.Repeat("long text ", 40) + "\n\n")
		_ = i
	}
	b.WriteString("THE END")
	// Streamed in pieces of a kilobyte, not five bytes: fifty kilobytes in
	// ten thousand pieces take longer than the model's timeout under -race.
	report := llmtest.TextReport(b.String())
	report.ChunkSize = 1024
	w.Model.Push(report)
	ts := w.Slack.Mention(channel, asker, "write a lot")
	thread := w.Answered(channel, ts, "THE END")
	if n := len(bottest.BotMessages(thread)); n < 2 {
		t.Fatalf("%d messages for a long answer", n)
	}
}

func TestAModelThatFailsEndsInAShortHumanMessage(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.Reply{Status: 401, ErrorType: "invalid_api_key"})
	ts := w.Slack.Mention(channel, asker, "hello?")
	thread := w.Answered(channel, ts, "credentials")
	text := bottest.MessageText(bottest.BotMessages(thread)[0])
	for _, leak := range []string{"127.0.0.1", "sk-test-key", "goroutine", "http://"} {
		if strings.Contains(text, leak) {
			t.Errorf("the failure message shows %q: %s", leak, text)
		}
	}
}

func TestStopCancelsTheSessionForTheAskerOnly(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.Slack.Mention(channel, asker, "take your time")
	progress := w.ProgressMessage(channel, ts)
	w.Model.Wait(1)
	value := stopValue(t, progress)
	if _, err := w.Slack.Click(channel, progress.TS, "U0EVE", "slackbot_stop", value); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the refusal to someone else", func() bool {
		for _, e := range w.Slack.Ephemerals() {
			if e.User == "U0EVE" && strings.Contains(e.Text, "Only the person who asked") {
				return true
			}
		}
		return false
	})
	if _, err := w.Slack.Click(channel, progress.TS, asker, "slackbot_stop", value); err != nil {
		t.Fatal(err)
	}
	w.Answered(channel, ts, "Stopped by")
}

func TestShutdownMidSessionLeavesAnInterruptedNote(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.ShutdownGrace = config.Duration(100 * time.Millisecond)
	}))
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.Slack.Mention(channel, asker, "a long question")
	w.Model.Wait(1)
	w.Shutdown()
	thread := w.Slack.Thread(channel, ts)
	found := false
	for _, m := range bottest.BotMessages(thread) {
		if strings.Contains(bottest.MessageText(m), "Interrupted") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no interrupted note in the thread: %+v", thread)
	}
}

func TestRequestsFromOutsideTheAllowListOrInDeniedChannelsAreRefusedPolitely(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.Allow.Users = []string{asker}
		c.Slack.Routing.Deny = []string{"random"}
	}))
	w.Slack.AddChannel("C0RANDOM", "random", true)
	w.Slack.Mention(channel, "U0MALLORY", "let me in")
	w.Slack.Mention("C0RANDOM", asker, "hello in random")
	_, _ = w.Slack.DM("U0MALLORY", "a DM from outside")
	w.Eventually("three refusals", func() bool {
		n := 0
		for _, e := range w.Slack.Ephemerals() {
			if e.Text == config.DefaultRejectionMessage {
				n++
			}
		}
		return n == 3
	})
	if n := len(w.Model.Requests()); n != 0 {
		t.Fatalf("%d model calls for refused requests", n)
	}
}

// stopValue is the value of the Stop button of a progress message.
func stopValue(t *testing.T, m emulator.Message) string {
	t.Helper()
	s := string(m.Blocks)
	i := strings.Index(s, `"slackbot_stop"`)
	if i < 0 {
		t.Fatalf("no stop button in %s", s)
	}
	rest := s[i:]
	j := strings.Index(rest, `"value":"`)
	if j < 0 {
		t.Fatalf("no value on the stop button in %s", s)
	}
	rest = rest[j+len(`"value":"`):]
	return rest[:strings.Index(rest, `"`)]
}

func TestAMentionWhoseAgentCallsAnMCPToolIsAnsweredWithItsResult(t *testing.T) {
	t.Parallel()
	_, orch := everything(t, "")
	w := bottest.Start(t, bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "Echo: ping from slack") {
				return llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("The server said: *" + m.Content + "*")}}})
			}
		}
		return llmtest.Call("everything__echo", `{"message":"ping from slack"}`)
	})
	ts := w.Slack.Mention(channel, asker, "echo something")
	w.Answered(channel, ts, "The server said: *Echo: ping from slack*")
}

func TestSessionsBeyondTheLimitWaitWithAVisibleQueuedStatus(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) { c.Slack.MaxConcurrentSessions = 1 }))
	g := newGate()
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(lastUserText(r), "first") {
			<-g.ch
		}
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	ts1 := w.Slack.Mention(channel, asker, "first")
	w.Model.Wait(1)
	ts2 := w.Slack.Mention(channel, asker, "second")
	w.Eventually("the second question to show it is queued", func() bool {
		for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts2)) {
			if strings.Contains(bottest.MessageText(m), "Queued") {
				return true
			}
		}
		return false
	})
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls while one session may run", n)
	}
	g.open()
	w.Answered(channel, ts1, "Answer to first")
	w.Answered(channel, ts2, "Answer to second")
}

func TestAQueuedSessionCanBeStoppedBeforeItStarts(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, oneAtATime)
	g, ts2, queued := queuedBehind(t, w)
	ts1 := w.Slack.Messages(channel)[0].TS // the first question
	if _, err := w.Slack.Click(channel, queued.TS, asker, "slackbot_stop", stopValue(t, queued)); err != nil {
		t.Fatal(err)
	}
	w.Answered(channel, ts2, "Stopped by")
	g.open()
	w.Answered(channel, ts1, "Answer to first")
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls; the stopped question must never reach the model", n)
	}
}

func TestAFollowUpWaitsForTheSessionRunningInItsThread(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	g := newGate()
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(lastUserText(r), "first") {
			<-g.ch
			return llmtest.TextReport("First answer.")
		}
		return llmtest.TextReport("Second answer.")
	})
	ts := w.Slack.Mention(channel, asker, "first")
	w.Model.Wait(1)
	w.Slack.Reply(channel, ts, asker, "<@"+w.Slack.BotUserID()+"> second, please")
	// The follow-up must not start while the first session holds the thread.
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := len(w.Model.Requests()); n != 1 {
			t.Fatalf("%d model calls: the follow-up did not wait", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.open()
	thread := w.Answered(channel, ts, "Second answer")
	var order []string
	for _, m := range bottest.BotMessages(thread) {
		order = append(order, bottest.MessageText(m))
	}
	if !strings.Contains(strings.Join(order, "|"), "First answer") {
		t.Fatalf("the first answer is missing: %v", order)
	}
	reqs := w.Model.Requests()
	joined := ""
	for _, m := range reqs[len(reqs)-1].Messages {
		joined += string(m.Role) + ": " + m.Content + "\n"
	}
	if !strings.Contains(joined, "assistant: First answer.") {
		t.Errorf("the follow-up did not see the first answer:\n%s", joined)
	}
}

func TestASlashCommandWhereTheBotIsNotAMemberIsAnsweredByDM(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Slack.AddChannel("C0PRIVATE", "secret-plans", false)
	w.Model.Push(llmtest.TextReport("Here, privately."))
	w.Slack.Slash("C0PRIVATE", asker, "/ask", "what are the plans?")
	w.Eventually("an answer in the asker's DM", func() bool {
		for _, e := range w.Slack.Calls("chat.postMessage") {
			if strings.HasPrefix(e.Params.Get("channel"), "D") && e.Error == "" {
				for _, m := range w.Slack.BotMessages(e.Params.Get("channel")) {
					if strings.Contains(bottest.MessageText(m), "Here, privately") {
						return true
					}
				}
			}
		}
		return false
	})
}

func TestAMessageSlackRefusesIsSentInPartsThenAsPlainText(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Slack.Fail("chat.update", "invalid_blocks", 2)
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("*One*"), llmtest.Section("*Two*")}}}))
	ts := w.Slack.Mention(channel, asker, "two parts")
	thread := w.Answered(channel, ts, "Two")
	text := ""
	for _, m := range bottest.BotMessages(thread) {
		text += bottest.MessageText(m)
	}
	if !strings.Contains(text, "One") || !strings.Contains(text, "Two") {
		t.Fatalf("a part of the answer was lost: %s", text)
	}
}

func TestNoProgressUpdateLandsAfterTheAnswer(t *testing.T) {
	t.Parallel()
	// Refreshes as often as they come: a budget that never stretches them.
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.ProgressInterval = config.Duration(time.Millisecond)
		c.Slack.RateLimits = map[string]config.RateLimit{"chat.update": {PerMinute: 1e6, Burst: 1000}}
		c.Agents["assistant"].Tools = append(c.Agents["assistant"].Tools, agent.TaskStatusTool)
	}))
	turns := 0
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		turns++
		if turns < 4 {
			return llmtest.Call(agent.TaskStatusTool, `{"status":"in-progress","done":"","pending":"more","now":"step `+string(rune('0'+turns))+`","ready_for_final_report":false,"need_to_run_more_tools":true}`)
		}
		return llmtest.TextReport("Final words.")
	})
	ts := w.Slack.Mention(channel, asker, "work in steps")
	thread := w.Answered(channel, ts, "Final words")
	// Let any stray refresh arrive, then check the answer is still the
	// message's last version.
	time.Sleep(100 * time.Millisecond)
	for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
		if strings.Contains(string(m.Blocks), "slackbot_stop") {
			t.Fatalf("a progress message is what the thread shows last: %s", m.Blocks)
		}
	}
	_ = thread
}

func TestTheBotReconnectsAfterItsSocketsDrop(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Back online."))
	w.Slack.DropConnections()
	w.Eventually("the bot to reconnect", func() bool { return w.Slack.Connections() > 0 })
	ts := w.Slack.Mention(channel, asker, "are you back?")
	w.Answered(channel, ts, "Back online")
}

func TestEditsDeletionsAndUnknownEnvelopesAreAckedAndIgnored(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t)
	w.Model.Push(llmtest.TextReport("Only this one."))
	dm, first := w.Slack.DM(asker, "first")
	w.Answered(dm, first, "Only this one")
	raw := []string{
		`{"type":"events_api","envelope_id":"raw-edit","payload":{"type":"event_callback","event_id":"EvEDIT","team_id":"T0EMULATOR","event":{"type":"message","subtype":"message_changed","channel":"` + dm + `","channel_type":"im","ts":"9.1","message":{"type":"message","user":"` + asker + `","text":"first, edited","ts":"9.0"}}}}`,
		`{"type":"events_api","envelope_id":"raw-delete","payload":{"type":"event_callback","event_id":"EvDELETE","team_id":"T0EMULATOR","event":{"type":"message","subtype":"message_deleted","channel":"` + dm + `","channel_type":"im","ts":"9.2","deleted_ts":"9.0"}}}`,
		`{"type":"something_new","envelope_id":"raw-unknown","payload":{}}`,
	}
	for _, r := range raw {
		if err := w.Slack.DeliverRaw([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	w.Eventually("the three envelopes to be acked", func() bool {
		acked := 0
		for _, a := range w.Slack.Acks() {
			if strings.HasPrefix(a.EnvelopeID, "raw-") {
				acked++
			}
		}
		return acked == 3
	})
	// A session for any of them would have asked the model: one more
	// question shows whether the script was used up.
	w.Model.Push(llmtest.TextReport("Second answer."))
	_, ts := w.Slack.DM(asker, "second")
	w.Answered(dm, ts, "Second answer")
	if n := len(w.Model.Requests()); n != 2 {
		t.Fatalf("%d model calls: an edit, a deletion or an unknown envelope started a session", n)
	}
}

func TestALongThreadGivesTheModelItsNewestMessages(t *testing.T) {
	t.Parallel()
	// The chatter is not a follow-up to answer: only the closing mention is.
	off := false
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Slack.History.MaxMessages = 5
		c.Slack.ThreadFollowups = &off
	}))
	w.Model.Push(llmtest.TextReport("First."), llmtest.TextReport("Caught up."))
	ts := w.Slack.Mention(channel, asker, "start")
	w.Answered(channel, ts, "First")
	for i := range 230 { // more than one page of replies
		w.Slack.Reply(channel, ts, "U0BOB", "chatter "+strconv.Itoa(i))
	}
	w.Slack.Reply(channel, ts, asker, "<@"+w.Slack.BotUserID()+"> what was said last?")
	w.Answered(channel, ts, "Caught up")
	reqs := w.Model.Requests()
	var got []string
	for _, m := range reqs[len(reqs)-1].Messages {
		got = append(got, m.Content)
	}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, "chatter 229") || strings.Contains(joined, "chatter 100") {
		t.Fatalf("the model got the wrong part of the thread:\n%s", joined)
	}
}

func TestAPersonOverTheirDailyBudgetIsToldSoWithoutAModelCall(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) {
		c.Quotas = config.Quotas{User: config.Budget{DailyTokens: 100}, Message: config.DefaultQuotaMessage}
	}))
	w.Model.Push(llmtest.TextReport("A first answer.")) // costs 150 tokens: over the budget afterwards
	ts := w.Slack.Mention(channel, asker, "first question")
	w.Answered(channel, ts, "A first answer")
	w.Slack.Mention(channel, asker, "second question")
	w.Eventually("the quota message", func() bool {
		for _, e := range w.Slack.Ephemerals() {
			if e.User == asker && e.Text == config.DefaultQuotaMessage {
				return true
			}
		}
		return false
	})
	if n := len(w.Model.Requests()); n != 1 {
		t.Fatalf("%d model calls: the request over budget reached the model", n)
	}
	// Someone else, in the same channel, is not limited by Ada's budget.
	w.Slack.AddUser("U0BOB", "bob")
	w.Model.Push(llmtest.TextReport("Bob's answer."))
	ts3 := w.Slack.Mention(channel, "U0BOB", "my question")
	w.Answered(channel, ts3, "Bob's answer")
}

func TestTwoReplicasSharingAStoreHoldTheConcurrencyCapTogether(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, bottest.WithConfig(func(c *config.Config) { c.Slack.MaxConcurrentSessions = 1 }))
	w.Replica()
	var inFlight, peak atomic.Int64
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		n := inFlight.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond) // long enough for the other replica to try
		inFlight.Add(-1)
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	var threads []string
	for i := range 6 {
		threads = append(threads, w.Slack.Mention(channel, asker, "question "+strconv.Itoa(i)))
	}
	for i, ts := range threads {
		w.Answered(channel, ts, "Answer to question "+strconv.Itoa(i))
	}
	if peak.Load() != 1 {
		t.Fatalf("%d sessions ran at once across two replicas with a cap of 1", peak.Load())
	}
	if n := len(w.Model.Requests()); n != 6 {
		t.Fatalf("%d model calls for 6 mentions: one was answered twice or not at all", n)
	}
}
