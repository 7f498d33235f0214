package emulator

import (
	"context"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/slackbot/slackbot/internal/wait"
)

func TestSuggestedPromptsKeepSlacksRules(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	ctx := context.Background()
	dm, _ := srv.OpenAgentView("U1")
	set := func(channel, threadTS string, n int) error {
		p := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: channel, ThreadTS: threadTS, Title: "Try"}
		for i := range n {
			p.AddPrompt(string(rune('a'+i)), "question "+string(rune('a'+i)))
		}
		return api.SetAssistantThreadsSuggestedPromptsContext(ctx, p)
	}
	if err := set(dm, "", 4); err != nil {
		t.Fatalf("four prompts: %v", err)
	}
	got, ok := srv.SuggestedPrompts(dm, "")
	if !ok || got.Title != "Try" || len(got.Prompts) != 4 || got.Prompts[3] != (Prompt{Title: "d", Message: "question d"}) {
		t.Errorf("prompts kept = %+v", got)
	}
	tests := []struct {
		name, channel, threadTS string
		n                       int
		want                    string
	}{
		{"five prompts are refused", dm, "", 5, "invalid_arguments"},
		{"no prompt is refused", dm, "", 0, "invalid_arguments"},
		{"an unknown channel is refused", "C404", "", 1, "channel_not_found"},
		{"a channel the bot is not in is refused", "C2", "", 1, "channel_not_found"},
		{"an unknown thread is refused", dm, "1.000001", 1, "invalid_thread_ts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := set(tt.channel, tt.threadTS, tt.n); slackError(err) != tt.want {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
	if got, _ := srv.SuggestedPrompts(dm, ""); len(got.Prompts) != 4 {
		t.Errorf("a refused call changed the prompts: %+v", got)
	}
	if err := api.SetAssistantThreadsSuggestedPromptsContext(ctx, slack.AssistantThreadsSetSuggestedPromptsParameters{
		ChannelID: dm, Prompts: []slack.AssistantThreadsPrompt{{Title: "", Message: "m"}}}); slackError(err) != "invalid_arguments" {
		t.Errorf("a prompt without a title: %v", err)
	}
}

func TestTheAgentViewsEventsArriveInSlackGosShapes(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, true)
	wait.Eventually(t, "a connection", func() bool { return srv.Connections() == 1 }, wait.On(srv.Changed))

	dm, _ := srv.OpenAgentView("U1")
	_, ev := b.nextEvent(t, string(slackevents.AppHomeOpened))
	if o, ok := ev.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent); !ok || o.User != "U1" || o.Channel != dm || o.Tab != "messages" {
		t.Errorf("app_home_opened = %#v", ev.InnerEvent.Data)
	}

	ch, ts := srv.StartAssistantThread("U1", "C1")
	_, ev = b.nextEvent(t, string(slackevents.AssistantThreadStarted))
	st, ok := ev.InnerEvent.Data.(*slackevents.AssistantThreadStartedEvent)
	if !ok || st.AssistantThread.UserID != "U1" || st.AssistantThread.ChannelID != ch || st.AssistantThread.ThreadTimeStamp != ts ||
		st.AssistantThread.Context.ChannelID != "C1" {
		t.Errorf("assistant_thread_started = %#v", ev.InnerEvent.Data)
	}
	if err := api.SetAssistantThreadsSuggestedPromptsContext(context.Background(), slack.AssistantThreadsSetSuggestedPromptsParameters{
		ChannelID: ch, ThreadTS: ts, Prompts: []slack.AssistantThreadsPrompt{{Title: "t", Message: "m"}}}); err != nil {
		t.Errorf("the new thread takes no prompts: %v", err)
	}

	srv.ViewChannel("U1", "C1")
	_, ev = b.nextEvent(t, string(slackevents.AppContextChanged))
	cc, ok := ev.InnerEvent.Data.(*slackevents.AppContextChangedEvent)
	if !ok || cc.User != "U1" || cc.Channel != dm || len(cc.Context.Entities) != 1 ||
		cc.Context.Entities[0].Type != slackevents.AppContextEntityChannel || cc.Context.Entities[0].Value != "C1" {
		t.Errorf("app_context_changed = %#v", ev.InnerEvent.Data)
	}
	if len(srv.Messages(dm)) != 1 {
		t.Errorf("the new thread's root is not in the DM: %+v", srv.Messages(dm))
	}
}
