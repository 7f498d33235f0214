package emulator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// start runs an emulator with channel C1 (bot a member), C2 (bot not a
// member) and user U1, and a slack-go client pointed at it.
func start(t *testing.T, opts Options) (*Server, *slack.Client) {
	t.Helper()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	srv.AddChannel("C1", "general", true)
	srv.AddChannel("C2", "elsewhere", false)
	srv.AddUser("U1", "alice")
	api := slack.New(srv.BotToken(), slack.OptionAppLevelToken(srv.AppToken()), slack.OptionAPIURL(srv.APIURL()))
	return srv, api
}

func slackError(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestAuthTestAcceptsOnlyTheBotToken(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	id, err := api.AuthTest()
	if err != nil {
		t.Fatal(err)
	}
	if id.UserID != srv.BotUserID() || id.BotID != srv.BotID() || id.TeamID != "T0EMULATOR" {
		t.Errorf("auth.test = %+v", id)
	}
	for _, token := range []string{"xoxb-wrong", "xapp-test"} {
		bad := slack.New(token, slack.OptionAPIURL(srv.APIURL()))
		if _, err := bad.AuthTest(); err == nil {
			t.Errorf("token %s: auth.test succeeded", token)
		}
	}
	if got := slackError(func() error {
		_, err := slack.New("xoxb-wrong", slack.OptionAPIURL(srv.APIURL())).AuthTest()
		return err
	}()); got != "invalid_auth" {
		t.Errorf("bad token: %q, want invalid_auth", got)
	}
	if calls := srv.Calls("auth.test"); len(calls) != 4 || calls[0].Error != "" || calls[1].Error != "invalid_auth" || calls[2].Error != "not_allowed_token_type" {
		t.Errorf("calls = %+v", calls)
	}
}

func TestPostUpdateAndRepliesRoundTrip(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	root := srv.Mention("C1", "U1", "hello")
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("thinking…", false), slack.MsgOptionTS(root),
		slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*thinking*", false, false), nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessage("C1", ts, slack.MsgOptionText("the answer", false)); err != nil {
		t.Fatal(err)
	}
	msgs, hasMore, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root})
	if err != nil {
		t.Fatal(err)
	}
	if hasMore || len(msgs) != 2 {
		t.Fatalf("replies = %d messages, has_more %v", len(msgs), hasMore)
	}
	if msgs[0].User != "U1" || msgs[0].Text != "<@U0BOT> hello" || msgs[0].ReplyCount != 1 {
		t.Errorf("root = %+v", msgs[0].Msg)
	}
	if msgs[1].BotID != srv.BotID() || msgs[1].Text != "the answer" || msgs[1].ThreadTimestamp != root || msgs[1].Timestamp != ts {
		t.Errorf("reply = %+v", msgs[1].Msg)
	}
	thread := srv.Thread("C1", root)
	if len(thread) != 2 || len(thread[1].History) != 1 || thread[1].History[0].Text != "thinking…" || thread[1].Blocks == nil {
		t.Errorf("thread = %+v", thread)
	}

	// Pages of one, by cursor, oldest first.
	var seen []string
	cursor := ""
	for {
		page, more, next, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root, Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			seen = append(seen, m.Timestamp)
		}
		if !more {
			break
		}
		cursor = next
	}
	if fmt.Sprint(seen) != fmt.Sprint([]string{root, ts}) {
		t.Errorf("paged = %v", seen)
	}

	if _, _, _, err := api.UpdateMessage("C1", "1.000001", slack.MsgOptionText("x", false)); slackError(err) != "message_not_found" {
		t.Errorf("update of a missing ts: %v", err)
	}
	if _, _, _, err := api.UpdateMessage("C1", root, slack.MsgOptionText("x", false)); slackError(err) != "cant_update_message" {
		t.Errorf("update of a user's message: %v", err)
	}
}

func TestPostMessageRefusesWhatSlackRefuses(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	section := func(text string) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", text, false, false), nil, nil)
	}
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = section("x")
	}
	bigBlocks := make([]slack.Block, 5)
	for i := range bigBlocks {
		bigBlocks[i] = section(strings.Repeat("y", 2900))
	}
	tests := []struct {
		name    string
		channel string
		opts    []slack.MsgOption
		want    string
	}{
		{"51 blocks are invalid_blocks", "C1", []slack.MsgOption{slack.MsgOptionText("t", false), slack.MsgOptionBlocks(many...)}, "invalid_blocks"},
		{"a 151-character header is invalid_blocks", "C1", []slack.MsgOption{slack.MsgOptionText("t", false),
			slack.MsgOptionBlocks(slack.NewHeaderBlock(slack.NewTextBlockObject("plain_text", strings.Repeat("h", 151), false, false)))}, "invalid_blocks"},
		{"text over 40,000 characters is msg_too_long", "C1", []slack.MsgOption{slack.MsgOptionText(strings.Repeat("z", 40001), false)}, "msg_too_long"},
		{"14,500 characters of blocks are msg_blocks_too_long", "C1", []slack.MsgOption{slack.MsgOptionText("t", false), slack.MsgOptionBlocks(bigBlocks...)}, "msg_blocks_too_long"},
		{"a channel the bot is not in is not_in_channel", "C2", []slack.MsgOption{slack.MsgOptionText("t", false)}, "not_in_channel"},
		{"an unknown channel is channel_not_found", "C404", []slack.MsgOption{slack.MsgOptionText("t", false)}, "channel_not_found"},
		{"an empty message is no_text", "C1", []slack.MsgOption{slack.MsgOptionText("", false)}, "no_text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := api.PostMessage(tt.channel, tt.opts...)
			if got := slackError(err); got != tt.want {
				t.Errorf("error = %q, want %q", got, tt.want)
			}
		})
	}
	if n := len(srv.BotMessages("C1")); n != 0 {
		t.Errorf("%d refused messages were recorded", n)
	}
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("t", false), slack.MsgOptionBlocks(many...))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || len(se.ResponseMetadata.Messages) == 0 || !strings.Contains(se.ResponseMetadata.Messages[0], "51 blocks") {
		t.Errorf("invalid_blocks detail = %+v", se.ResponseMetadata)
	}
}

func TestRateLimitIsSeenBySlackGo(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	srv.RateLimit("chat.postMessage", 1, 1500*time.Millisecond)
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Fatalf("err = %v, want a RateLimitedError of 2s", err)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatalf("the call after the limit: %v", err)
	}
	srv.Fail("users.info", "internal_error", 1)
	if _, err := api.GetUserInfo("U1"); slackError(err) != "internal_error" {
		t.Errorf("injected failure: %v", err)
	}
	u, err := api.GetUserInfo("U1")
	if err != nil || u.Name != "alice" || u.Profile.DisplayName != "alice" {
		t.Errorf("users.info = %+v, %v", u, err)
	}
	calls := srv.Calls("chat.postMessage")
	if len(calls) != 2 || calls[0].Status != 429 || calls[0].Error != "ratelimited" || calls[1].Error != "" {
		t.Errorf("calls = %+v", calls)
	}
}

func TestEnforcedTiersAreTokenBucketsPerWorkspaceOrPerChannel(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{RateLimits: map[string]Limit{
		"chat.update":      {PerMinute: 1, Burst: 2},                   // a token a minute: none comes back during the test
		"chat.postMessage": {PerMinute: 1, Burst: 1, PerChannel: true}, // one in each channel
	}})
	srv.AddChannel("C3", "third", true)
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("first", false))
	if err != nil {
		t.Fatal(err)
	}
	var rl *slack.RateLimitedError
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("second", false)); !errors.As(err, &rl) || rl.RetryAfter < 50*time.Second {
		t.Fatalf("a second post in C1 with a burst of 1: %v, want a 429 asking to wait about a minute", err)
	}
	if _, _, err := api.PostMessage("C3", slack.MsgOptionText("elsewhere", false)); err != nil {
		t.Fatalf("a post in another channel shares C1's budget: %v", err)
	}
	for i := range 2 {
		if _, _, _, err := api.UpdateMessage("C1", ts, slack.MsgOptionText(fmt.Sprint("edit ", i), false)); err != nil {
			t.Fatalf("update %d of a burst of 2: %v", i+1, err)
		}
	}
	if _, _, _, err := api.UpdateMessage("C1", ts, slack.MsgOptionText("one too many", false)); !errors.As(err, &rl) {
		t.Fatalf("a third update in the workspace: %v, want a 429", err)
	}
	if got := srv.BotMessages("C1"); len(got) != 1 || got[0].Text != "edit 1" {
		t.Fatalf("a call answered 429 changed something: %+v", got)
	}
	limited := 0
	for _, c := range srv.Calls("") {
		if c.Status == 429 {
			limited++
		}
	}
	if limited != 2 {
		t.Fatalf("%d calls recorded as 429, want 2", limited)
	}
}

func TestSlackLimitsCoverTheTiers(t *testing.T) {
	t.Parallel()
	l := SlackLimits()
	if u := l["chat.update"]; u.PerMinute != 50 || u.Burst < 1 || u.PerChannel {
		t.Errorf("chat.update is tier 3 for the workspace: %+v", u)
	}
	if p := l["chat.postMessage"]; p.PerMinute != 60 || !p.PerChannel {
		t.Errorf("chat.postMessage is one a second per channel: %+v", p)
	}
	for m := range l {
		if _, ok := methods[m]; !ok {
			t.Errorf("a limit for %s, which the emulator does not serve", m)
		}
	}
}

func TestSmallerMethods(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	ctx := context.Background()
	ts := srv.Mention("C1", "U1", "hi")

	ch, err := api.GetConversationInfo(&slack.GetConversationInfoInput{ChannelID: "C2"})
	if err != nil || ch.Name != "elsewhere" || ch.IsMember {
		t.Errorf("conversations.info = %+v, %v", ch, err)
	}
	if err := api.AddReaction("eyes", slack.NewRefToMessage("C1", ts)); err != nil {
		t.Fatal(err)
	}
	if err := api.AddReaction("eyes", slack.NewRefToMessage("C1", ts)); slackError(err) != "already_reacted" {
		t.Errorf("second reaction: %v", err)
	}
	if got := srv.Reactions(); len(got) != 1 || got[0] != (Reaction{"C1", ts, "eyes"}) {
		t.Errorf("reactions = %+v", got)
	}
	if err := api.RemoveReaction("eyes", slack.NewRefToMessage("C1", ts)); err != nil || len(srv.Reactions()) != 0 {
		t.Errorf("remove: %v, left %+v", err, srv.Reactions())
	}
	if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: ts, Status: "is thinking…"}); err != nil {
		t.Fatal(err)
	}
	if st := srv.Statuses(); len(st) != 1 || st[0].Status != "is thinking…" || st[0].ThreadTS != ts {
		t.Errorf("statuses = %+v", st)
	}
	if _, err := api.PostEphemeral("C1", "U1", slack.MsgOptionText("only you", false)); err != nil {
		t.Fatal(err)
	}
	if e := srv.Ephemerals(); len(e) != 1 || e[0].User != "U1" || e[0].Text != "only you" {
		t.Errorf("ephemerals = %+v", e)
	}
	_, posted, err := api.PostMessage("C1", slack.MsgOptionText("bye", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.DeleteMessage("C1", posted); err != nil {
		t.Fatal(err)
	}
	if len(srv.BotMessages("C1")) != 0 {
		t.Errorf("deleted message still live")
	}
}
