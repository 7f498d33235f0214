package slack_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/state"
	"github.com/slackbot/slackbot/state/redistest"
	"github.com/slackbot/slackbot/telemetry"
	"github.com/slackbot/slackbot/telemetry/telemetrytest"
)

// streamed shows sessions as streamed messages (slack.display: stream).
var streamed = bottest.WithConfig(func(c *config.Config) { c.Slack.Display = config.DisplayStream })

// streamOf waits for the stream in the thread ts of ch to satisfy cond
// and returns it.
func streamOf(w *bottest.World, ch, ts, what string, cond func(emulator.Stream) bool) emulator.Stream {
	w.T.Helper()
	var got emulator.Stream
	w.Eventually(what, func() bool {
		for _, s := range w.Slack.Streams(ch) {
			if s.ThreadTS == ts && cond(s) {
				got = s
				return true
			}
		}
		return false
	})
	return got
}

// ended reports whether a stream was ended by the bot.
func ended(s emulator.Stream) bool { return !s.Open }

// holding counts the bot's messages in a thread whose text or blocks hold
// want.
func holding(w *bottest.World, ch, ts, want string) int {
	n := 0
	for _, m := range bottest.BotMessages(w.Slack.Thread(ch, ts)) {
		if strings.Contains(bottest.MessageText(m), want) {
			n++
		}
	}
	return n
}

// threeToolsAndAResearcher answers the researcher at once, and the
// assistant first with three MCP calls (the third without its required
// argument, so it fails) and a sub-agent call in one turn, then with its
// answer.
func threeToolsAndAResearcher(r *llmtest.Recorded) llmtest.Reply {
	if strings.Contains(r.System, researcherPrompt) {
		b, _ := json.Marshal(map[string]any{"status": "success", "report_format": config.FormatSubAgent, "report_content": "Found: 42."})
		return llmtest.Call(agent.FinalReportTool, string(b))
	}
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool {
			return llmtest.SlackReport([]any{map[string]any{"blocks": []any{llmtest.Section("The answer is *42*.")}}})
		}
	}
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: "everything__echo", Arguments: `{"message":"ping from slack"}`},
		{Name: "everything__get-sum", Arguments: `{"a":40,"b":2}`},
		{Name: "everything__echo", Arguments: `{}`},
		{Name: agent.SubAgentPrefix + "researcher", Arguments: `{"prompt":"find the answer"}`},
	}}
}

func TestAChannelMentionStreamsItsWorkAsTasksAndEndsWithTheAnswer(t *testing.T) {
	t.Parallel()
	_, orch := everything(t, "")
	w := bottest.Start(t, streamed, withResearcher, bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }))
	w.Model.Respond(threeToolsAndAResearcher)
	ts := w.Slack.Mention(channel, asker, "what is the answer?")
	s := streamOf(w, channel, ts, "the stream to end", ended)

	if s.RecipientUser != asker || s.RecipientTeam != "T0EMULATOR" || s.TaskDisplayMode != "timeline" {
		t.Errorf("stream to %q of %q, mode %q; want the asker, their team, a timeline", s.RecipientUser, s.RecipientTeam, s.TaskDisplayMode)
	}
	type want struct{ title, status string }
	wants := []want{
		{"Thinking", "complete"}, {"Echo", "complete"}, {"Get sum", "complete"}, {"Echo", "error"},
		{"researcher", "complete"}, {"Thinking (step 2)", "complete"},
	}
	if len(s.Tasks) != len(wants) {
		t.Fatalf("tasks %+v; want %d", s.Tasks, len(wants))
	}
	for i, wt := range wants {
		if g := s.Tasks[i]; g.Title != wt.title || g.Status != wt.status {
			t.Errorf("task %d = %q %s; want %q %s", i, g.Title, g.Status, wt.title, wt.status)
		}
	}
	if d := s.Tasks[1].Details; d != `message: "ping from slack"` {
		t.Errorf("the echo's details = %q; want what it was asked", d)
	}
	if o := s.Tasks[3].Output; o != "Failed: invalid arguments" {
		t.Errorf("the failing call's output = %q", o)
	}
	blocks := string(s.Blocks)
	if !strings.Contains(blocks, "The answer is *42*.") || !strings.Contains(blocks, "feedback_buttons") {
		t.Errorf("the stop's blocks %s; want the answer and the feedback buttons", blocks)
	}
	if n := len(bottest.BotMessages(w.Slack.Thread(channel, ts))); n != 1 {
		t.Errorf("%d bot messages in the thread; want the streamed message alone", n)
	}
	if n := len(w.Slack.Calls("chat.update")); n != 0 {
		t.Errorf("%d chat.update calls: a streamed session has no progress message", n)
	}
	w.Eventually("the agent session to close", func() bool {
		a, ok := w.Slack.AgentSession(channel, ts)
		return ok && a.Status == "closed"
	})
	a, _ := w.Slack.AgentSession(channel, ts)
	if strings.Join(a.Statuses, ",") != "processing,active,closed" || a.Initiator != asker || a.Title != "what is the answer?" {
		t.Errorf("agent session %+v; want processing, active, closed, started by the asker, titled with the question", a)
	}
	// The feedback buttons on the streamed message work as on any answer.
	positive := regexp.MustCompile(`"value":"(positive:[^"]+)"`).FindStringSubmatch(blocks)
	if positive == nil {
		t.Fatalf("no positive feedback button in %s", blocks)
	}
	if _, err := w.Slack.Click(channel, s.TS, asker, "slackbot_feedback", positive[1]); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the feedback to be recorded", func() bool { return len(w.Feedback()) == 1 })
}

func TestADirectMessageStreamsWithoutRecipientFields(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Hello in private.") })
	dm, ts := w.Slack.DM(asker, "hi")
	s := streamOf(w, dm, ts, "the DM's stream to end", ended)
	if s.RecipientUser != "" || s.RecipientTeam != "" || !strings.Contains(string(s.Blocks), "Hello in private.") {
		t.Errorf("DM stream %+v; want no recipient and the answer in its blocks", s)
	}
}

func TestALongAnswerContinuesBelowTheStreamInOrder(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply {
		return llmtest.SlackReport([]any{
			map[string]any{"blocks": []any{llmtest.Section("Part one.")}},
			map[string]any{"blocks": []any{llmtest.Section("Part two.")}},
			map[string]any{"blocks": []any{llmtest.Section("Part three.")}},
		})
	})
	ts := w.Slack.Mention(channel, asker, "tell me everything")
	s := streamOf(w, channel, ts, "the stream to end", ended)
	thread := w.Answered(channel, ts, "Part three.")
	bots := bottest.BotMessages(thread)
	if len(bots) != 3 || bots[0].TS != s.TS || !strings.Contains(string(s.Blocks), "Part one.") ||
		!strings.Contains(bottest.MessageText(bots[1]), "Part two.") || !strings.Contains(bottest.MessageText(bots[2]), "Part three.") {
		t.Fatalf("thread %+v; want the stream ending with part one, then parts two and three below it", bots)
	}
	if strings.Contains(bottest.MessageText(bots[1]), "feedback_buttons") || !strings.Contains(bottest.MessageText(bots[2]), "feedback_buttons") {
		t.Error("the feedback buttons belong under the answer's last part")
	}
}

// Every refusal Slack may give a stream falls back to a way that delivers
// the answer, once.
func TestRefusedStreamsFallBackWithTheAnswerDeliveredOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, method, code string
		progress           bool // the session shows a progress message instead
	}{
		{"start not allowed", "chat.startStream", "not_allowed", true},
		{"start without the recipient's team", "chat.startStream", "missing_recipient_team_id", true},
		{"start for a Slack Connect asker", "chat.startStream", "user_not_found", true},
		{"stop of a stream Slack ended", "chat.stopStream", "message_not_in_streaming_state", false},
		{"stop refused for its blocks", "chat.stopStream", "invalid_blocks", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := bottest.Start(t, streamed)
			w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
			w.Slack.Fail(c.method, c.code, 1)
			ts := w.Slack.Mention(channel, asker, "first")
			w.Answered(channel, ts, "Answer to first")
			w.Eventually("the thread to settle", func() bool { return !live(w, ts) })
			if n := holding(w, channel, ts, "Answer to first"); n != 1 {
				t.Errorf("the answer shows %d times; want once", n)
			}
			streams := w.Slack.Streams(channel)
			if c.progress {
				if len(streams) != 0 || len(w.Slack.Calls("chat.update"))+len(w.Slack.Calls("chat.postMessage")) == 0 {
					t.Errorf("%d streams; want the progress message instead", len(streams))
				}
				// The refusal holds for a while: the next session does not ask.
				ts2 := w.Slack.Mention(channel, asker, "second")
				w.Answered(channel, ts2, "Answer to second")
				if n := len(w.Slack.Calls("chat.startStream")); n != 1 {
					t.Errorf("%d chat.startStream calls; a refusal must not be asked again at once", n)
				}
				return
			}
			if len(streams) != 1 || strings.Contains(string(streams[0].Blocks), "Answer to first") {
				t.Fatalf("streams %+v; want one, without the answer, which went below", streams)
			}
			if c.code == "message_not_in_streaming_state" {
				return // Slack says it ended it
			}
			// A stream Slack still holds open is ended, pointing below, its
			// tasks settled.
			st := streamOf(w, channel, ts, "the stream to be settled", ended)
			if !strings.Contains(st.Markdown, "Answered below") {
				t.Errorf("the settled stream says %q; want it to point at the answer below", st.Markdown)
			}
			for _, task := range st.Tasks {
				if task.Status != "complete" {
					t.Errorf("task %+v left %s", task, task.Status)
				}
			}
		})
	}
}

// Slack's Stop on the agent session, delivered to the replica that does
// not run the session, stops it there as the Stop button does.
func TestSlacksStopDeliveredToTheOtherReplicaEndsTheStreamStoppedByTheAsker(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	w := bottest.Start(t, bottest.OnStore(dialRedis(t, srv, "agentstop:")), streamed)
	w.Replica(bottest.OnStore(dialRedis(t, srv, "agentstop:")))
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.Slack.Mention(channel, asker, "take your time")
	streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })
	w.Model.Wait(1)
	other := otherConn(w, mentionConn(w, ts))
	w.Slack.StopAgentSession(other, channel, ts, asker)
	w.Answered(channel, ts, "Stopped by")
	// Blocks are JSON, where < and > are escaped.
	if n := holding(w, channel, ts, `Stopped by \u003c@`+asker+`\u003e`); n != 1 {
		t.Errorf("the stop's note naming the asker shows %d times; want once", n)
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("%d model calls for one question", n)
	}
	for _, e := range w.Slack.Envelopes() {
		if strings.Contains(string(e.Payload), "agent_session_stopped") && e.Conn != other {
			t.Errorf("agent_session_stopped went to connection %d, not %d", e.Conn, other)
		}
	}
}

// In auto, a session that finds no chat.startStream token at once shows
// the progress message rather than wait for one.
func TestAutoShowsAProgressMessageWhenNoStreamCanStartAtOnce(t *testing.T) {
	t.Parallel()
	metrics := telemetry.NewMetrics()
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) { o.Metrics = metrics }), bottest.WithConfig(func(c *config.Config) {
		c.Slack.Display = config.DisplayAuto
		c.Slack.RateLimits = map[string]config.RateLimit{"chat.startStream": {PerMinute: 1, Burst: 1, Per: config.PerWorkspace}}
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply { return llmtest.TextReport("Answer to " + lastUserText(r)) })
	first := w.Slack.Mention(channel, asker, "first")
	streamOf(w, channel, first, "the first question's stream to end", ended)
	second := w.Slack.Mention(channel, asker, "second")
	w.Answered(channel, second, "Answer to second")
	w.Eventually("the second thread to settle", func() bool { return !live(w, second) })
	if n := len(w.Slack.Calls("chat.startStream")); n != 1 {
		t.Errorf("%d chat.startStream calls; want the first alone", n)
	}
	if n := holding(w, channel, second, "Answer to second"); n != 1 || len(w.Slack.Calls("chat.update")) == 0 {
		t.Errorf("the second answer shows %d times, through %d chat.update calls; want once, in place of its progress message",
			n, len(w.Slack.Calls("chat.update")))
	}
	if n := w.Logs.FilterMessage("a session shows a progress message instead of a stream").Len(); n != 1 {
		t.Errorf("the fallback was logged %d times; want once", n)
	}
	f := telemetrytest.Scrape(t, telemetrytest.Serve(t, metrics)+"/metrics")
	for outcome, want := range map[string]float64{"answered": 1, "fallback_budget": 1} {
		if got, _ := f.Value("slackbot_slack_streams_total", "outcome", outcome); got != want {
			t.Errorf("slackbot_slack_streams_total{outcome=%q} = %v; want %v", outcome, got, want)
		}
	}
}

// Slack's Stop pressed by someone other than the asker stops nothing: they
// are told so, and the answer still arrives, once.
func TestSlacksStopBySomeoneElseIsRefusedAndTheAnswerStillArrives(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	ts := w.Slack.Mention(channel, asker, "mine")
	streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })
	w.Model.Wait(1)
	w.Slack.StopAgentSession(0, channel, ts, "U0EVE")
	w.Eventually("the refusal to someone else", func() bool {
		for _, e := range w.Slack.Ephemerals() {
			if e.User == "U0EVE" && strings.Contains(e.Text, "Only the person who asked") {
				return true
			}
		}
		return false
	})
	g.open()
	w.Answered(channel, ts, "Answer to mine")
	if n := holding(w, channel, ts, "Answer to mine"); n != 1 || holding(w, channel, ts, "Stopped by") != 0 {
		t.Errorf("the answer shows %d times (stopped: %d); want once, not stopped", n, holding(w, channel, ts, "Stopped by"))
	}
}

// A session that fails ends its stream with its note, every task settled.
func TestAFailedSessionEndsItsStreamWithItsNoteAndNoTaskInProgress(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{ErrorType: "invalid_api_key"} })
	ts := w.Slack.Mention(channel, asker, "doomed")
	s := streamOf(w, channel, ts, "the stream to end", ended)
	if len(s.Blocks) == 0 || holding(w, channel, ts, "") != 1 {
		t.Errorf("stream %+v: want it ended with the failure's note, alone in the thread", s)
	}
	noTaskInProgress(t, s)
}

// The shutdown ends a streamed session's stream with its note, every task
// settled: no stream is left open.
func TestShutdownEndsAStreamWithTheInterruptedNote(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed, bottest.WithConfig(func(c *config.Config) {
		c.Slack.ShutdownGrace = config.Duration(100 * time.Millisecond)
	}))
	w.Model.Respond(func(*llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "slow", Delay: time.Minute} })
	ts := w.Slack.Mention(channel, asker, "a long question")
	streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })
	w.Model.Wait(1)
	w.Shutdown()
	s := streamOf(w, channel, ts, "the stream to end", ended)
	if !strings.Contains(string(s.Blocks), "Interrupted") || holding(w, channel, ts, "Interrupted") != 1 {
		t.Errorf("stream %+v; want it ended with the interrupted note, shown once", s)
	}
	noTaskInProgress(t, s)
}

// A session waiting for its turn shows it as a pending task, completed
// once it starts.
func TestAQueuedStreamShowsAPendingTaskUntilItsTurn(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed, oneAtATime)
	g, ts, _ := queuedBehindStream(t, w)
	g.open()
	s := streamOf(w, channel, ts, "the queued stream to end", ended)
	if len(s.Tasks) == 0 || s.Tasks[0].Title != "Waiting for a turn" || s.Tasks[0].Status != "complete" {
		t.Errorf("tasks %+v; want the wait first, complete", s.Tasks)
	}
	if !strings.Contains(string(s.Blocks), "Answer to second") {
		t.Errorf("the queued session's answer is not in its stream: %s", s.Blocks)
	}
}

// queuedBehindStream is queuedBehind for streamed sessions: the second
// question's stream shows its wait as a pending task.
func queuedBehindStream(t *testing.T, w *bottest.World) (*gate, string, emulator.Stream) {
	t.Helper()
	g, ts := secondBehindFirst(t, w)
	s := streamOf(w, channel, ts, "the second question to show it waits", func(s emulator.Stream) bool {
		return len(s.Tasks) > 0 && s.Tasks[0].Status == "pending"
	})
	return g, ts, s
}

// A stream left open by a replica that died is ended by the next replica
// to start, with the abandoned note, and its record forgotten.
func TestAReplicaStartingEndsTheOpenStreamOfAReplicaThatDied(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store), streamed, leaseTTL(time.Hour)) // no periodic sweep within the test
	root := w.Slack.Reply(channel, "", asker, "a question nobody will answer")
	api := slackapi.New(w.Slack.BotToken(), slackapi.OptionAPIURL(w.Slack.APIURL()))
	_, ts, err := api.StartStream(channel, slackapi.MsgOptionTS(root), slackapi.MsgOptionRecipientUserID(asker), slackapi.MsgOptionRecipientTeamID("T0EMULATOR"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutProgress(context.Background(), state.Progress{Session: "stream|dead-session", Channel: channel, TS: ts, Owner: "slackbot-dead"}); err != nil {
		t.Fatal(err)
	}
	w.Replica() // its start-up sweep finds the dead replica's stream
	s := streamOf(w, channel, root, "the dead replica's stream to end", ended)
	if !strings.Contains(string(s.Blocks), "the bot stopped") {
		t.Errorf("the stream ended with %s; want the abandoned note", s.Blocks)
	}
	noProgressRecords(w, store)
}

// A streamed session's record lives while it runs and goes with its
// answer.
func TestALiveStreamIsRecordedWhileItRunsAndForgottenWithItsAnswer(t *testing.T) {
	t.Parallel()
	store := state.NewMemory()
	w := bottest.Start(t, bottest.OnStore(store), streamed)
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	ts := w.Slack.Mention(channel, asker, "recorded")
	s := streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })
	w.Eventually("the stream's record, naming the task running", func() bool {
		list, err := store.Progresses(context.Background())
		return err == nil && len(list) == 1 && list[0].TS == s.TS && strings.HasPrefix(list[0].Session, "stream|") &&
			len(list[0].Tasks) == 1 && list[0].Tasks[0].Title == "Thinking"
	})
	g.open()
	streamOf(w, channel, ts, "the stream to end", ended)
	noProgressRecords(w, store)
}

// The model's own progress line is the plan's title, and the agent
// session's title follows it.
func TestTheModelsProgressLineTitlesThePlanAndTheAgentSession(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed, bottest.WithConfig(func(c *config.Config) {
		c.Slack.TaskDisplay = config.TaskDisplayPlan
		c.Agents[bottest.AgentName].Tools = append(c.Agents[bottest.AgentName].Tools, agent.TaskStatusTool)
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		for _, m := range r.Messages {
			if m.Role == llm.RoleTool {
				return llmtest.TextReport("Budgets checked.")
			}
		}
		return llmtest.Call(agent.TaskStatusTool, `{"status":"in-progress","done":"","pending":"the report","now":"Checking the budgets","ready_for_final_report":false,"need_to_run_more_tools":false}`)
	})
	ts := w.Slack.Mention(channel, asker, "check the budgets")
	s := streamOf(w, channel, ts, "the stream to end", ended)
	if s.TaskDisplayMode != "plan" || s.Plan != "Checking the budgets" {
		t.Errorf("stream mode %q, plan %q; want a plan titled with the model's progress line", s.TaskDisplayMode, s.Plan)
	}
	for _, task := range s.Tasks {
		if strings.Contains(task.Title, "status") {
			t.Errorf("the progress line's own call shows as task %q", task.Title)
		}
	}
	w.Eventually("the agent session to be renamed", func() bool {
		a, ok := w.Slack.AgentSession(channel, ts)
		return ok && a.Title == "Checking the budgets"
	})
}

// A prompt-injected answer delivered by chat.stopStream passes the same
// voice as a posted one: no broadcast, no stranger pinged, no disguised
// link, no picture fetched from another host, no Stop button of the
// model's making.
func TestAStreamedAnswerSpeaksInTheSameVoiceAsAPostedOne(t *testing.T) {
	t.Parallel()
	w := bottest.Start(t, streamed)
	w.Slack.AddUser(onlooker, "eve")
	w.Slack.AddUser(bob, "bob")
	w.Model.Push(llmtest.SlackReport([]any{map[string]any{"blocks": attackerBlocks()}}))
	ts := w.Slack.Mention(channel, asker, "what's up?")
	s := streamOf(w, channel, ts, "the stream to end", ended)
	got := posted(w, ts) + s.Markdown + string(s.Blocks)
	for _, c := range s.Chunks {
		got += string(c)
	}
	lacks(t, got, "<!channel>", "<!here>", "<!everyone>", "<!subteam", "<@"+onlooker+">", "<@"+bob+">",
		"|okta", "|https://okta", "image_url", `"url":"https://evil.example/phish"`, `"action_id":"slackbot_stop"`)
	holds(t, got, "<@"+asker+">", "<https://evil.example/login>")
}

// Slack's Stop pressed by someone who neither asked nor is an admin, and
// delivered to the replica not running the session, is recorded there (it
// cannot tell who asked) but not honoured by the replica running it: the
// session answers as if nobody had pressed it.
func TestSlacksStopBySomeoneElseOnTheOtherReplicaIsNotHonoured(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b := &stopSightings{Store: dialRedis(t, srv, "strangerstop:")}, &stopSightings{Store: dialRedis(t, srv, "strangerstop:")}
	w := bottest.Start(t, bottest.OnStore(a), streamed)
	w.Replica(bottest.OnStore(b))
	g := newGate()
	t.Cleanup(g.open)
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		<-g.ch
		return llmtest.TextReport("Answer to " + lastUserText(r))
	})
	ts := w.Slack.Mention(channel, asker, "mine")
	streamOf(w, channel, ts, "the stream to start", func(emulator.Stream) bool { return true })
	w.Model.Wait(1)
	w.Slack.StopAgentSession(otherConn(w, mentionConn(w, ts)), channel, ts, "U0EVE")
	w.Eventually("the running replica to find the stranger's stop", func() bool { return a.seen()+b.seen() > 0 })
	g.open()
	w.Answered(channel, ts, "Answer to mine")
	if n := holding(w, channel, ts, "Stopped by"); n != 0 {
		t.Errorf("a stranger's stop was honoured (%d notes)", n)
	}
}

// stopSightings is a state store that counts the times a session's stop
// was found recorded.
type stopSightings struct {
	state.Store
	mu sync.Mutex
	n  int
}

func (s *stopSightings) Marked(ctx context.Context, key string) (bool, error) {
	ok, err := s.Store.Marked(ctx, key)
	// The stop itself, "stop:<session>", not who pressed it ("…:<user>").
	if ok && strings.HasPrefix(key, "stop:stream:") && !strings.Contains(key[strings.LastIndex(key, "/"):], ":") {
		s.mu.Lock()
		s.n++
		s.mu.Unlock()
	}
	return ok, err
}

func (s *stopSightings) seen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
