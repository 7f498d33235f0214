package emulator

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// thread posts a question as U1 in channel and returns its ts.
func thread(t *testing.T, srv *Server, channel string) string {
	t.Helper()
	return srv.Reply(channel, "", "U1", "a question")
}

func TestAStreamKeepsItsTasksPlanAndFinalBlocks(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	ctx := context.Background()
	root := thread(t, srv, "C1")
	task := slack.NewTaskUpdateChunk("t1", "Search code")
	task.Status = slack.TaskCardStatusInProgress
	task.Details = `query: "limits"`
	_, ts, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"),
		slack.MsgOptionRecipientTeamID("T0EMULATOR"), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModePlan),
		slack.MsgOptionChunks(task, slack.NewPlanUpdateChunk("Checking")))
	if err != nil {
		t.Fatal(err)
	}
	done := slack.NewTaskUpdateChunk("t1", "Search code")
	done.Status, done.Output = slack.TaskCardStatusComplete, "Done"
	if _, _, err := api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionChunks(done)); err != nil {
		t.Fatal(err)
	}
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "The answer", false, false), nil, nil)}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts, slack.MsgOptionBlocks(blocks...)); err != nil {
		t.Fatal(err)
	}
	st := srv.Streams("C1")
	if len(st) != 1 {
		t.Fatalf("%d streams", len(st))
	}
	s := st[0]
	if s.Open || s.ThreadTS != root || s.RecipientUser != "U1" || s.TaskDisplayMode != "plan" || s.Plan != "Checking" || s.Appends != 1 {
		t.Errorf("stream = %+v", s)
	}
	if len(s.Tasks) != 1 || s.Tasks[0] != (Task{ID: "t1", Title: "Search code", Status: "complete", Details: `query: "limits"`, Output: "Done"}) {
		t.Errorf("tasks = %+v; an update keeps the fields it leaves out", s.Tasks)
	}
	if !strings.Contains(string(s.Blocks), "The answer") {
		t.Errorf("the stop's blocks are not kept: %s", s.Blocks)
	}
	if msgs := srv.Thread("C1", root); len(msgs) != 2 || !strings.Contains(string(msgs[1].Blocks), "The answer") {
		t.Errorf("the thread does not end with the streamed message's blocks: %+v", msgs)
	}
}

func TestStreamsKeepSlacksRules(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	srv.AddTeamUser("UEXT", "guest", "T0PARTNER", "")
	ctx := context.Background()
	root := thread(t, srv, "C1")
	dmChannel, dmRoot := srv.DM("U1", "hi")
	startIn := func(channel, ts string, opts ...slack.MsgOption) string {
		_, _, err := api.StartStreamContext(ctx, channel, append([]slack.MsgOption{slack.MsgOptionTS(ts)}, opts...)...)
		return slackError(err)
	}
	recipient := []slack.MsgOption{slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID("T0EMULATOR")}
	cases := []struct {
		name, got, want string
	}{
		{"a channel stream needs its recipient", startIn("C1", root), "missing_recipient_user_id"},
		{"a channel stream needs the recipient's team", startIn("C1", root, slack.MsgOptionRecipientUserID("U1")), "missing_recipient_team_id"},
		{"a Slack Connect asker cannot be streamed to", startIn("C1", root, slack.MsgOptionRecipientUserID("UEXT"), slack.MsgOptionRecipientTeamID("T0PARTNER")), "user_not_found"},
		{"a DM stream needs no recipient", startIn(dmChannel, dmRoot), ""},
		{"markdown_text is at most 12,000 characters a call", startIn("C1", root, append(recipient, slack.MsgOptionMarkdownText(strings.Repeat("x", 12001)))...), "msg_too_long"},
		{"a stream is in a thread", startIn("C1", "", recipient...), "invalid_thread_ts"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	_, ts, err := api.StartStreamContext(ctx, "C1", append([]slack.MsgOption{slack.MsgOptionTS(root)}, recipient...)...)
	if err != nil {
		t.Fatal(err)
	}
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = slack.NewDividerBlock()
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts, slack.MsgOptionBlocks(many...)); slackError(err) != "invalid_blocks" {
		t.Errorf("stop with 51 blocks: %v; want invalid_blocks", err)
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts, slack.MsgOptionMarkdownText("bye")); err != nil {
		t.Fatalf("a refused stop must leave the stream open: %v", err)
	}
	if _, _, err := api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionMarkdownText("more")); slackError(err) != "message_not_in_streaming_state" {
		t.Errorf("append after the stop: %v; want message_not_in_streaming_state", err)
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts); slackError(err) != "message_not_in_streaming_state" {
		t.Errorf("second stop: %v; want message_not_in_streaming_state", err)
	}
}

func TestStreamRefusalsCanBeInjected(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	root := thread(t, srv, "C1")
	srv.Fail("chat.startStream", "not_allowed", 1)
	_, _, err := api.StartStreamContext(context.Background(), "C1", slack.MsgOptionTS(root),
		slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID("T0EMULATOR"))
	if slackError(err) != "not_allowed" || len(srv.Streams("C1")) != 0 {
		t.Errorf("injected refusal: %v, %d streams", err, len(srv.Streams("C1")))
	}
}

func TestAgentSessionsAndSlacksStop(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, true)
	ctx := context.Background()
	root := thread(t, srv, "C1")
	b.nextEvent(t, "message")
	if _, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{ChannelID: "C1", ThreadTS: root,
		Status: "processing", Title: "A question", InitiatorUserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{ChannelID: "C1", ThreadTS: root, Title: "Budgets"}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{ChannelID: "C1", ThreadTS: root, Status: "thinking"}); slackError(err) != "invalid_status" {
		t.Errorf("unknown status: %v", err)
	}
	a, ok := srv.AgentSession("C1", root)
	if !ok || a.Status != "processing" || a.Title != "Budgets" || a.Initiator != "U1" || len(a.Titles) != 2 {
		t.Errorf("agent session = %+v", a)
	}
	_, ts, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID("T0EMULATOR"))
	if err != nil {
		t.Fatal(err)
	}
	b.nextEvent(t, "message") // the streamed message
	srv.StopAgentSession(0, "C1", root, "U1")
	_, ev := b.nextEvent(t, string(slackevents.AgentSessionStopped))
	stopped, ok := ev.InnerEvent.Data.(*slackevents.AgentSessionStoppedEvent)
	if !ok || stopped.User != "U1" || stopped.ThreadTimestamp != root || len(stopped.StreamingMessageTimestamps) != 1 || stopped.StreamingMessageTimestamps[0] != ts {
		t.Fatalf("agent_session_stopped = %#v", ev.InnerEvent.Data)
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts); slackError(err) != "message_not_in_streaming_state" {
		t.Errorf("stop after Slack's Stop halted the stream: %v", err)
	}
}
