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
	"github.com/slackbot/slackbot/slack/emulator"
)

func TestAMentionIsAnsweredInItsThreadAndTheProgressGivesWayToTheAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Push(slackReport([]any{map[string]any{"blocks": []any{
		map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": "Release notes"}},
		section("The *fast path* is now the default."),
	}}}))
	ts := w.srv.Mention(channel, asker, "what changed in the release?")
	thread := w.answered(channel, ts, "fast path")

	if got := lastUserText(w.model.Requests()[0]); got != "what changed in the release?" {
		t.Errorf("the model was asked %q: the mention must be stripped", got)
	}
	bot := botMessages(thread)
	if len(bot) != 1 {
		t.Fatalf("%d bot messages in the thread, want the answer alone (the progress message replaced): %+v", len(bot), bot)
	}
	if len(bot[0].History) == 0 || !strings.Contains(string(bot[0].History[0].Blocks), "Stop") {
		t.Errorf("the answer did not replace a progress message with a Stop button: history %+v", bot[0].History)
	}
	if !strings.Contains(string(bot[0].Blocks), `"header"`) {
		t.Errorf("the answer is not the Block Kit the model wrote: %s", bot[0].Blocks)
	}
	w.waitFor("every envelope to be acked", func() bool {
		for _, a := range w.srv.Envelopes() {
			if !a.Acked {
				return false
			}
		}
		return true
	})
}

func TestADirectMessageIsAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Push(textReport("Hello **Ada**."))
	dm, ts := w.srv.DM(asker, "hi there")
	w.answered(dm, ts, "Ada")
	if got := lastUserText(w.model.Requests()[0]); got != "hi there" {
		t.Errorf("the model was asked %q", got)
	}
}

func TestTheSlashCommandIsAckedAtOnceAndAnsweredInTheChannel(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Push(textReport("Forty-two."))
	env := w.srv.Slash(channel, asker, "/ask", "the answer to everything?")
	var root string
	w.waitFor("the question posted in the channel", func() bool {
		for _, m := range w.srv.Messages(channel) {
			if m.BotID != "" && m.ThreadTS == "" || m.BotID != "" && m.ThreadTS == m.TS {
				if strings.Contains(messageText(m), "the answer to everything?") {
					root = m.TS
					return true
				}
			}
		}
		return false
	})
	w.answered(channel, root, "Forty-two")
	var ack *emulator.Ack
	for _, a := range w.srv.Acks() {
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
	w := newWorld(t)
	w.model.Push(textReport("Paris is the capital of France."), textReport("About 2.1 million people."))
	ts := w.srv.Mention(channel, asker, "capital of France?")
	w.answered(channel, ts, "Paris")
	w.srv.Reply(channel, ts, asker, "and how many live there?")
	w.answered(channel, ts, "2.1 million")
	reqs := w.model.Requests()
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
	w := newWorld(t)
	w.model.Push(textReport("Once."), textReport("Twice?!"))
	ts := w.srv.Mention(channel, asker, "say it once")
	w.answered(channel, ts, "Once")
	for _, e := range w.srv.Envelopes() {
		if e.Type == "events_api" && strings.Contains(string(e.Payload), "app_mention") {
			if _, err := w.srv.Redeliver(e.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for w.logs.FilterMessage("duplicate event ignored").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the redelivered mention was not recognised as a duplicate")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A later question is answered with the second scripted reply: the
	// duplicate did not take it.
	ts2 := w.srv.Mention(channel, asker, "and again")
	w.answered(channel, ts2, "Twice")
	if n := len(w.model.Requests()); n != 2 {
		t.Fatalf("%d model calls: the duplicate was answered", n)
	}
}

func TestAnAnswerSurvivesADisconnectMidSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	g := newGate()
	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return textReport("Still here.")
	})
	ts := w.srv.Mention(channel, asker, "are you there?")
	w.model.Wait(1)
	w.srv.Disconnect("refresh_requested")
	w.waitFor("the bot to reconnect", func() bool { return w.srv.Connections() > 0 })
	g.open()
	w.answered(channel, ts, "Still here")
	ts2 := w.srv.Mention(channel, asker, "and now?")
	w.answered(channel, ts2, "Still here")
}

func TestRateLimitedUpdatesStillDeliverTheAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.srv.RateLimit("chat.update", 3, time.Second)
	w.model.Push(textReport("Delivered despite the limit."))
	ts := w.srv.Mention(channel, asker, "hello")
	w.answered(channel, ts, "Delivered despite the limit")
	limited := 0
	for _, c := range w.srv.Calls("chat.update") {
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
	w := newWorld(t)
	var b strings.Builder
	for i := range 120 {
		b.WriteString("## Part ")
		b.WriteString(strings.Repeat("x", 1))
		b.WriteString("\n\nParagraph number " + strings.Repeat("long text ", 40) + "\n\n")
		_ = i
	}
	b.WriteString("THE END")
	w.model.Push(textReport(b.String()))
	ts := w.srv.Mention(channel, asker, "write a lot")
	thread := w.answered(channel, ts, "THE END")
	if n := len(botMessages(thread)); n < 2 {
		t.Fatalf("%d messages for a long answer", n)
	}
}

func TestAModelThatFailsEndsInAShortHumanMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Push(llmtest.Reply{Status: 401, ErrorType: "invalid_api_key"})
	ts := w.srv.Mention(channel, asker, "hello?")
	thread := w.answered(channel, ts, "credentials")
	text := messageText(botMessages(thread)[0])
	for _, leak := range []string{"127.0.0.1", "sk-test-key", "goroutine", "http://"} {
		if strings.Contains(text, leak) {
			t.Errorf("the failure message shows %q: %s", leak, text)
		}
	}
}

func TestStopCancelsTheSessionForTheAskerOnly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.srv.Mention(channel, asker, "take your time")
	progress := w.progressMessage(ts)
	w.model.Wait(1)
	value := stopValue(t, progress)
	if _, err := w.srv.Click(channel, progress.TS, "U0EVE", "slackbot_stop", value); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the refusal to someone else", func() bool {
		for _, e := range w.srv.Ephemerals() {
			if e.User == "U0EVE" && strings.Contains(e.Text, "Only the person who asked") {
				return true
			}
		}
		return false
	})
	if _, err := w.srv.Click(channel, progress.TS, asker, "slackbot_stop", value); err != nil {
		t.Fatal(err)
	}
	w.answered(channel, ts, "Stopped by")
}

func TestShutdownMidSessionLeavesAnInterruptedNote(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) {
		c.Slack.ShutdownGrace = config.Duration(100 * time.Millisecond)
	})
	w.model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.srv.Mention(channel, asker, "a long question")
	w.model.Wait(1)
	w.shutdown()
	thread := w.srv.Thread(channel, ts)
	found := false
	for _, m := range botMessages(thread) {
		if strings.Contains(messageText(m), "Interrupted") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no interrupted note in the thread: %+v", thread)
	}
}

func TestRequestsFromOutsideTheAllowListOrInDeniedChannelsAreRefusedPolitely(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) {
		c.Slack.Allow.Users = []string{asker}
		c.Slack.Routing.Deny = []string{"random"}
	})
	w.srv.AddChannel("C0RANDOM", "random", true)
	w.srv.Mention(channel, "U0MALLORY", "let me in")
	w.srv.Mention("C0RANDOM", asker, "hello in random")
	_, _ = w.srv.DM("U0MALLORY", "a DM from outside")
	w.waitFor("three refusals", func() bool {
		n := 0
		for _, e := range w.srv.Ephemerals() {
			if e.Text == config.DefaultRejectionMessage {
				n++
			}
		}
		return n == 3
	})
	if n := len(w.model.Requests()); n != 0 {
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
	w := newWorld(t, func(_ *config.Config, r *agent.Runner) { r.Tools = orch })
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "Echo: ping from slack") {
				return slackReport([]any{map[string]any{"blocks": []any{section("The server said: *" + m.Content + "*")}}})
			}
		}
		return call("everything__echo", `{"message":"ping from slack"}`)
	})
	ts := w.srv.Mention(channel, asker, "echo something")
	w.answered(channel, ts, "The server said: *Echo: ping from slack*")
}

func TestSessionsBeyondTheLimitWaitWithAVisibleQueuedStatus(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) { c.Slack.MaxConcurrentSessions = 1 })
	g := newGate()
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(lastUserText(r), "first") {
			<-g.ch
		}
		return textReport("Answer to " + lastUserText(r))
	})
	ts1 := w.srv.Mention(channel, asker, "first")
	w.model.Wait(1)
	ts2 := w.srv.Mention(channel, asker, "second")
	w.waitFor("the second question to show it is queued", func() bool {
		for _, m := range botMessages(w.srv.Thread(channel, ts2)) {
			if strings.Contains(messageText(m), "Queued") {
				return true
			}
		}
		return false
	})
	if n := len(w.model.Requests()); n != 1 {
		t.Fatalf("%d model calls while one session may run", n)
	}
	g.open()
	w.answered(channel, ts1, "Answer to first")
	w.answered(channel, ts2, "Answer to second")
}

func TestAQueuedSessionCanBeStoppedBeforeItStarts(t *testing.T) {
	t.Parallel()
	w := newWorld(t, oneAtATime)
	g, ts2, queued := queuedBehind(t, w)
	ts1 := w.srv.Messages(channel)[0].TS // the first question
	if _, err := w.srv.Click(channel, queued.TS, asker, "slackbot_stop", stopValue(t, queued)); err != nil {
		t.Fatal(err)
	}
	w.answered(channel, ts2, "Stopped by")
	g.open()
	w.answered(channel, ts1, "Answer to first")
	if n := len(w.model.Requests()); n != 1 {
		t.Errorf("%d model calls; the stopped question must never reach the model", n)
	}
}

func TestAFollowUpWaitsForTheSessionRunningInItsThread(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	g := newGate()
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(lastUserText(r), "first") {
			<-g.ch
			return textReport("First answer.")
		}
		return textReport("Second answer.")
	})
	ts := w.srv.Mention(channel, asker, "first")
	w.model.Wait(1)
	w.srv.Reply(channel, ts, asker, "<@"+w.srv.BotUserID()+"> second, please")
	// The follow-up must not start while the first session holds the thread.
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := len(w.model.Requests()); n != 1 {
			t.Fatalf("%d model calls: the follow-up did not wait", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.open()
	thread := w.answered(channel, ts, "Second answer")
	var order []string
	for _, m := range botMessages(thread) {
		order = append(order, messageText(m))
	}
	if !strings.Contains(strings.Join(order, "|"), "First answer") {
		t.Fatalf("the first answer is missing: %v", order)
	}
	reqs := w.model.Requests()
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
	w := newWorld(t)
	w.srv.AddChannel("C0PRIVATE", "secret-plans", false)
	w.model.Push(textReport("Here, privately."))
	w.srv.Slash("C0PRIVATE", asker, "/ask", "what are the plans?")
	w.waitFor("an answer in the asker's DM", func() bool {
		for _, e := range w.srv.Calls("chat.postMessage") {
			if strings.HasPrefix(e.Params.Get("channel"), "D") && e.Error == "" {
				for _, m := range w.srv.BotMessages(e.Params.Get("channel")) {
					if strings.Contains(messageText(m), "Here, privately") {
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
	w := newWorld(t)
	w.srv.Fail("chat.update", "invalid_blocks", 2)
	w.model.Push(slackReport([]any{map[string]any{"blocks": []any{section("*One*"), section("*Two*")}}}))
	ts := w.srv.Mention(channel, asker, "two parts")
	thread := w.answered(channel, ts, "Two")
	text := ""
	for _, m := range botMessages(thread) {
		text += messageText(m)
	}
	if !strings.Contains(text, "One") || !strings.Contains(text, "Two") {
		t.Fatalf("a part of the answer was lost: %s", text)
	}
}

func TestNoProgressUpdateLandsAfterTheAnswer(t *testing.T) {
	t.Parallel()
	// Refreshes as often as they come: a budget that never stretches them.
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) {
		c.Slack.ProgressInterval = config.Duration(time.Millisecond)
		c.Slack.RateLimits = map[string]config.RateLimit{"chat.update": {PerMinute: 1e6, Burst: 1000}}
	})
	turns := 0
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		turns++
		if turns < 4 {
			return call(agent.TaskStatusTool, `{"status":"in-progress","done":"","pending":"more","now":"step `+string(rune('0'+turns))+`","ready_for_final_report":false,"need_to_run_more_tools":true}`)
		}
		return textReport("Final words.")
	})
	w.cfg.Agents["assistant"].Tools = append(w.cfg.Agents["assistant"].Tools, agent.TaskStatusTool)
	ts := w.srv.Mention(channel, asker, "work in steps")
	thread := w.answered(channel, ts, "Final words")
	// Let any stray refresh arrive, then check the answer is still the
	// message's last version.
	time.Sleep(100 * time.Millisecond)
	for _, m := range botMessages(w.srv.Thread(channel, ts)) {
		if strings.Contains(string(m.Blocks), "slackbot_stop") {
			t.Fatalf("a progress message is what the thread shows last: %s", m.Blocks)
		}
	}
	_ = thread
}

func TestTheBotReconnectsAfterItsSocketsDrop(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Push(textReport("Back online."))
	w.srv.DropConnections()
	w.waitFor("the bot to reconnect", func() bool { return w.srv.Connections() > 0 })
	ts := w.srv.Mention(channel, asker, "are you back?")
	w.answered(channel, ts, "Back online")
}

func TestEditsDeletionsAndUnknownEnvelopesAreAckedAndIgnored(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Push(textReport("Only this one."))
	dm, first := w.srv.DM(asker, "first")
	w.answered(dm, first, "Only this one")
	raw := []string{
		`{"type":"events_api","envelope_id":"raw-edit","payload":{"type":"event_callback","event_id":"EvEDIT","team_id":"T0EMULATOR","event":{"type":"message","subtype":"message_changed","channel":"` + dm + `","channel_type":"im","ts":"9.1","message":{"type":"message","user":"` + asker + `","text":"first, edited","ts":"9.0"}}}}`,
		`{"type":"events_api","envelope_id":"raw-delete","payload":{"type":"event_callback","event_id":"EvDELETE","team_id":"T0EMULATOR","event":{"type":"message","subtype":"message_deleted","channel":"` + dm + `","channel_type":"im","ts":"9.2","deleted_ts":"9.0"}}}`,
		`{"type":"something_new","envelope_id":"raw-unknown","payload":{}}`,
	}
	for _, r := range raw {
		if err := w.srv.DeliverRaw([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	w.waitFor("the three envelopes to be acked", func() bool {
		acked := 0
		for _, a := range w.srv.Acks() {
			if strings.HasPrefix(a.EnvelopeID, "raw-") {
				acked++
			}
		}
		return acked == 3
	})
	// A session for any of them would have asked the model: one more
	// question shows whether the script was used up.
	w.model.Push(textReport("Second answer."))
	_, ts := w.srv.DM(asker, "second")
	w.answered(dm, ts, "Second answer")
	if n := len(w.model.Requests()); n != 2 {
		t.Fatalf("%d model calls: an edit, a deletion or an unknown envelope started a session", n)
	}
}

func TestALongThreadGivesTheModelItsNewestMessages(t *testing.T) {
	t.Parallel()
	// The chatter is not a follow-up to answer: only the closing mention is.
	off := false
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) {
		c.Slack.History.MaxMessages = 5
		c.Slack.ThreadFollowups = &off
	})
	w.model.Push(textReport("First."), textReport("Caught up."))
	ts := w.srv.Mention(channel, asker, "start")
	w.answered(channel, ts, "First")
	for i := range 230 { // more than one page of replies
		w.srv.Reply(channel, ts, "U0BOB", "chatter "+strconv.Itoa(i))
	}
	w.srv.Reply(channel, ts, asker, "<@"+w.srv.BotUserID()+"> what was said last?")
	w.answered(channel, ts, "Caught up")
	reqs := w.model.Requests()
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
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) {
		c.Quotas = config.Quotas{User: config.Budget{DailyTokens: 100}, Message: config.DefaultQuotaMessage}
	})
	w.model.Push(textReport("A first answer.")) // costs 150 tokens: over the budget afterwards
	ts := w.srv.Mention(channel, asker, "first question")
	w.answered(channel, ts, "A first answer")
	w.srv.Mention(channel, asker, "second question")
	w.waitFor("the quota message", func() bool {
		for _, e := range w.srv.Ephemerals() {
			if e.User == asker && e.Text == config.DefaultQuotaMessage {
				return true
			}
		}
		return false
	})
	if n := len(w.model.Requests()); n != 1 {
		t.Fatalf("%d model calls: the request over budget reached the model", n)
	}
	// Someone else, in the same channel, is not limited by Ada's budget.
	w.srv.AddUser("U0BOB", "bob")
	w.model.Push(textReport("Bob's answer."))
	ts3 := w.srv.Mention(channel, "U0BOB", "my question")
	w.answered(channel, ts3, "Bob's answer")
}

func TestTwoReplicasSharingAStoreHoldTheConcurrencyCapTogether(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *config.Config, _ *agent.Runner) { c.Slack.MaxConcurrentSessions = 1 })
	w.replica()
	var inFlight, peak atomic.Int64
	w.model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		n := inFlight.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond) // long enough for the other replica to try
		inFlight.Add(-1)
		return textReport("Answer to " + lastUserText(r))
	})
	var threads []string
	for i := range 6 {
		threads = append(threads, w.srv.Mention(channel, asker, "question "+strconv.Itoa(i)))
	}
	for i, ts := range threads {
		w.answered(channel, ts, "Answer to question "+strconv.Itoa(i))
	}
	if peak.Load() != 1 {
		t.Fatalf("%d sessions ran at once across two replicas with a cap of 1", peak.Load())
	}
	if n := len(w.model.Requests()); n != 6 {
		t.Fatalf("%d model calls for 6 mentions: one was answered twice or not at all", n)
	}
}
