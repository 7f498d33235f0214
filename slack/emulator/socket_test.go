package emulator

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/slackbot/slackbot/internal/wait"
)

// bot is a real slack-go Socket Mode client run against the emulator. It
// passes every request on to the test and acks it first when autoAck is set.
type bot struct {
	smc      *socketmode.Client
	requests chan socketmode.Event
	mu       sync.Mutex
	hellos   int
}

func runBot(t *testing.T, srv *Server, api *slack.Client, autoAck bool) *bot {
	t.Helper()
	b := &bot{smc: socketmode.New(api), requests: make(chan socketmode.Event, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = b.smc.RunContext(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-b.smc.Events:
				switch evt.Type {
				case socketmode.EventTypeHello:
					b.mu.Lock()
					b.hellos++
					b.mu.Unlock()
				case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
					if autoAck {
						_ = b.smc.Ack(*evt.Request)
					}
					b.requests <- evt
				}
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return b
}

func (b *bot) helloCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hellos
}

// next returns the next request, failing the test after a generous deadline
// (a deadline for a hung test, not a wait for something to happen).
func (b *bot) next(t *testing.T) socketmode.Event {
	t.Helper()
	select {
	case evt := <-b.requests:
		return evt
	case <-time.After(10 * time.Second):
		t.Fatal("no request arrived")
		return socketmode.Event{}
	}
}

// nextEvent returns the next Events API request whose inner event has typ.
func (b *bot) nextEvent(t *testing.T, typ string) (socketmode.Event, slackevents.EventsAPIEvent) {
	t.Helper()
	for {
		evt := b.next(t)
		if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok && ev.InnerEvent.Type == typ {
			return evt, ev
		}
	}
}

func eventID(t *testing.T, evt socketmode.Event) string {
	t.Helper()
	var p struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(evt.Request.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.EventID
}

func TestMentionArrivesAndTheAckIsRecorded(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, false)
	wait.Eventually(t, "a connection", func() bool { return srv.Connections() == 1 }, wait.On(srv.Changed))

	ts := srv.Mention("C1", "U1", "what is up")
	evt, ev := b.nextEvent(t, "app_mention")
	m, ok := ev.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok || m.Text != "<@U0BOT> what is up" || m.TimeStamp != ts || m.Channel != "C1" || m.User != "U1" {
		t.Fatalf("app_mention = %+v", ev.InnerEvent.Data)
	}
	if b.helloCount() != 1 {
		t.Errorf("hellos = %d", b.helloCount())
	}
	if err := b.smc.Ack(*evt.Request); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, "the ack", func() bool {
		for _, a := range srv.Acks() {
			if a.EnvelopeID == evt.Request.EnvelopeID {
				return true
			}
		}
		return false
	}, wait.On(srv.Changed))
	// The plain message event of the same post comes too, as on Slack.
	_, msg := b.nextEvent(t, "message")
	if me := msg.InnerEvent.Data.(*slackevents.MessageEvent); me.TimeStamp != ts || me.ChannelType != "channel" {
		t.Errorf("message = %+v", me)
	}
}

func TestUnackedEventIsRedeliveredWithTheSameEventID(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{AckTimeout: 50 * time.Millisecond})
	b := runBot(t, srv, api, false)
	// In a channel the bot is not in, only app_mention is delivered.
	srv.Mention("C2", "U1", "anyone?")
	first, _ := b.nextEvent(t, "app_mention")
	second, _ := b.nextEvent(t, "app_mention")
	if first.Request.RetryAttempt != 0 || second.Request.RetryAttempt != 1 || second.Request.RetryReason != "timeout" {
		t.Errorf("attempts %d then %d (%q)", first.Request.RetryAttempt, second.Request.RetryAttempt, second.Request.RetryReason)
	}
	if eventID(t, first) != eventID(t, second) || first.Request.EnvelopeID == second.Request.EnvelopeID {
		t.Errorf("event ids %s / %s, envelopes %s / %s", eventID(t, first), eventID(t, second), first.Request.EnvelopeID, second.Request.EnvelopeID)
	}
	if err := b.smc.Ack(*second.Request); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, "nothing pending", func() bool { return srv.EnvelopesPending() == 0 }, wait.On(srv.Changed))
}

func TestRedeliveryGoesToAnotherConnection(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{AckTimeout: 50 * time.Millisecond})
	runBot(t, srv, api, false)
	runBot(t, srv, api, false)
	wait.Eventually(t, "two connections", func() bool { return srv.Connections() == 2 }, wait.On(srv.Changed))
	srv.Mention("C2", "U1", "hi")
	wait.Eventually(t, "a retry", func() bool {
		for _, e := range srv.Envelopes() {
			if e.Attempt == 1 && e.Conn != 0 {
				return true
			}
		}
		return false
	}, wait.On(srv.Changed))
	conns := map[int]int{}
	for _, e := range srv.Envelopes() {
		if e.Attempt <= 1 {
			conns[e.Attempt] = e.Conn
		}
	}
	if conns[0] == conns[1] {
		t.Errorf("attempts 0 and 1 both went to connection %d", conns[0])
	}
}

func TestDisconnectAndDropAreSurvivedByReconnecting(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{DisconnectGrace: 50 * time.Millisecond})
	b := runBot(t, srv, api, true)
	wait.Eventually(t, "a connection", func() bool { return srv.Connections() == 1 }, wait.On(srv.Changed))

	srv.Disconnect("refresh_requested")
	wait.Eventually(t, "a second socket", func() bool { return len(srv.Calls("apps.connections.open")) == 2 }, wait.On(srv.Changed))
	ts := srv.Mention("C2", "U1", "after refresh")
	if _, ev := b.nextEvent(t, "app_mention"); ev.InnerEvent.Data.(*slackevents.AppMentionEvent).TimeStamp != ts {
		t.Errorf("wrong event after disconnect")
	}
	// An ack still in the client's send queue would die with the socket and
	// the event would come again after AckTimeout: let it land first.
	wait.Eventually(t, "the ack", func() bool { return srv.EnvelopesPending() == 0 }, wait.On(srv.Changed))

	srv.DropConnections()
	wait.Eventually(t, "a third socket", func() bool { return len(srv.Calls("apps.connections.open")) == 3 }, wait.On(srv.Changed))
	ts = srv.Mention("C2", "U1", "after a network loss")
	if _, ev := b.nextEvent(t, "app_mention"); ev.InnerEvent.Data.(*slackevents.AppMentionEvent).TimeStamp != ts {
		t.Errorf("wrong event after drop")
	}
	wait.Eventually(t, "all acked", func() bool { return srv.EnvelopesPending() == 0 }, wait.On(srv.Changed))
}

func TestTheBotsOwnPostsComeBackWithBotID(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, true)
	channel, dmTS := srv.DM("U1", "hello bot")
	_, ev := b.nextEvent(t, "message")
	if me := ev.InnerEvent.Data.(*slackevents.MessageEvent); me.ChannelType != "im" || me.TimeStamp != dmTS || me.BotID != "" {
		t.Fatalf("DM event = %+v", me)
	}
	_, ts, err := api.PostMessage(channel, slack.MsgOptionText("hello human", false), slack.MsgOptionTS(dmTS))
	if err != nil {
		t.Fatal(err)
	}
	_, ev = b.nextEvent(t, "message")
	me := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if me.BotID != srv.BotID() || me.TimeStamp != ts || me.ThreadTimeStamp != dmTS || me.Text != "hello human" {
		t.Errorf("own post event = %+v", me)
	}
}

func TestSlashCommandResponseURL(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, true)
	id := srv.Slash("C1", "U1", "/ask", "why is the sky blue")
	evt := b.next(t)
	cmd, ok := evt.Data.(slack.SlashCommand)
	if !ok || evt.Request.EnvelopeID != id || cmd.Command != "/ask" || cmd.Text != "why is the sky blue" || cmd.ResponseURL == "" {
		t.Fatalf("slash = %+v", evt.Data)
	}
	for i := range 5 {
		if _, _, err := api.PostMessage("C1", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeInChannel), slack.MsgOptionText("answer", false)); err != nil {
			t.Fatalf("post %d: %v", i+1, err)
		}
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeInChannel), slack.MsgOptionText("answer", false)); err == nil {
		t.Error("a sixth post to the response_url was accepted")
	}
	posts := srv.ResponseURLPosts()
	if len(posts) != 6 || posts[0].Kind != "slash_commands" || posts[0].Error != "" || posts[5].Error != "used_url" {
		t.Errorf("posts = %+v", posts)
	}
	if n := len(srv.BotMessages("C1")); n != 5 {
		t.Errorf("%d in_channel answers became messages, want 5", n)
	}
}

func TestClickDeliversBlockActions(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, true)
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("rate me", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("feedback", slack.NewButtonBlockElement("good", "up", slack.NewTextBlockObject("plain_text", "Good", false, false)))))
	if err != nil {
		t.Fatal(err)
	}
	b.nextEvent(t, "message") // the bot's own post
	if _, err := srv.Click("C1", ts, "U1", "missing", ""); err != ErrNoSuchAction {
		t.Errorf("click on a missing action: %v", err)
	}
	if _, err := srv.Click("C1", ts, "U1", "good", ""); err != nil {
		t.Fatal(err)
	}
	evt := b.next(t)
	cb, ok := evt.Data.(slack.InteractionCallback)
	if !ok || cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("interaction = %+v", evt.Data)
	}
	a := cb.ActionCallback.BlockActions[0]
	if a.ActionID != "good" || a.Value != "up" || a.BlockID != "feedback" || cb.Container.MessageTs != ts || cb.Message.Timestamp != ts {
		t.Errorf("action = %+v, container = %+v", a, cb.Container)
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("thanks", false)); err != nil {
		t.Fatal(err)
	}
	if m := srv.BotMessages("C1"); len(m) != 1 || m[0].Text != "thanks" || len(m[0].History) != 1 {
		t.Errorf("after replace_original: %+v", m)
	}
}

func TestClickOnFeedbackButtonsSendsTheButtonClicked(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, true)
	plain := func(s string) *slack.TextBlockObject { return slack.NewTextBlockObject("plain_text", s, false, false) }
	_, ts, err := api.PostMessage("C1", slack.MsgOptionText("the answer", false), slack.MsgOptionBlocks(
		slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "The answer", false, false), nil, nil),
		slack.NewContextActionsBlock("fb", slack.NewFeedbackButtonsBlockElement("rate",
			slack.NewFeedbackButton(plain("👍"), "positive:S1"), slack.NewFeedbackButton(plain("👎"), "negative:S1")))))
	if err != nil {
		t.Fatalf("the emulator refused feedback buttons: %v", err)
	}
	b.nextEvent(t, "message") // the bot's own post
	if _, err := srv.Click("C1", ts, "U1", "rate", ""); err == nil {
		t.Error("a click on feedback buttons without saying which button was delivered")
	}
	if _, err := srv.Click("C1", ts, "U1", "rate", "maybe"); err == nil {
		t.Error("a click on a feedback button that is not there was delivered")
	}
	if _, err := srv.Click("C1", ts, "U1", "rate", "negative:S1"); err != nil {
		t.Fatal(err)
	}
	cb, ok := b.next(t).Data.(slack.InteractionCallback)
	if !ok || cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("interaction = %+v", cb)
	}
	a := cb.ActionCallback.BlockActions[0]
	if a.Type != "feedback_buttons" || a.ActionID != "rate" || a.BlockID != "fb" || a.Value != "negative:S1" || a.Text.Text != "👎" ||
		cb.User.ID != "U1" || cb.Channel.ID != "C1" || cb.Container.MessageTs != ts {
		t.Errorf("action = %+v, user %s, channel %s, container %+v", a, cb.User.ID, cb.Channel.ID, cb.Container)
	}
	// A malformed one is refused as Slack refuses it.
	_, _, err = api.PostMessage("C1", slack.MsgOptionText("x", false), slack.MsgOptionBlocks(
		slack.NewContextActionsBlock("", slack.NewFeedbackButtonsBlockElement("rate", slack.NewFeedbackButton(plain("👍"), "up"), nil))))
	if err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
		t.Errorf("feedback buttons without a negative button: %v, want invalid_blocks", err)
	}
}

func TestRedeliverMakesADuplicate(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{})
	b := runBot(t, srv, api, true)
	srv.Mention("C2", "U1", "once")
	first, _ := b.nextEvent(t, "app_mention")
	if _, err := srv.Redeliver(first.Request.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	dup, _ := b.nextEvent(t, "app_mention")
	if eventID(t, dup) != eventID(t, first) || dup.Request.RetryAttempt != 1 {
		t.Errorf("duplicate attempt %d, event %s vs %s", dup.Request.RetryAttempt, eventID(t, dup), eventID(t, first))
	}
	if err := srv.DeliverRaw([]byte(`{"type":"events_api","envelope_id":"raw-1","payload":{"type":"event_callback","event_id":"EvRaw","event":{"type":"reaction_added","user":"U1"}}}`)); err != nil {
		t.Fatal(err)
	}
	raw := b.next(t)
	if raw.Request.EnvelopeID != "raw-1" {
		t.Errorf("raw envelope = %s", raw.Request.EnvelopeID)
	}
	wait.Eventually(t, "all acked", func() bool { return srv.EnvelopesPending() == 0 }, wait.On(srv.Changed))
}

func TestPingsKeepTheClientConnected(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{PingInterval: 10 * time.Millisecond})
	smc := socketmode.New(api, socketmode.OptionPingInterval(100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = smc.RunContext(ctx) }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-smc.Events:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	// Fifty pongs span five of the client's ping deadlines.
	wait.Eventually(t, "fifty pongs", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.pongs >= 50
	}, wait.On(srv.Changed))
	if n := len(srv.Calls("apps.connections.open")); n != 1 {
		t.Errorf("the client connected %d times; pings should have kept its first socket", n)
	}
}

func TestSlashCommandsAreNotRetried(t *testing.T) {
	t.Parallel()
	srv, api := start(t, Options{AckTimeout: 20 * time.Millisecond})
	b := runBot(t, srv, api, false)
	id := srv.Slash("C1", "U1", "/ask", "slow")
	if evt := b.next(t); evt.Request.EnvelopeID != id {
		t.Fatalf("envelope %s, want %s", evt.Request.EnvelopeID, id)
	}
	wait.Eventually(t, "the command to expire", func() bool {
		for _, e := range srv.Envelopes() {
			if e.ID == id && e.Expired {
				return true
			}
		}
		return false
	}, wait.On(srv.Changed))
	if n := len(srv.Envelopes()); n != 1 || srv.EnvelopesPending() != 0 {
		t.Errorf("%d envelopes, %d pending; a slash command is delivered once", n, srv.EnvelopesPending())
	}
}

func TestASocketTicketIsUsedOnce(t *testing.T) {
	t.Parallel()
	_, api := start(t, Options{})
	_, url, err := socketmode.New(api).Open()
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var hello struct {
		Type           string `json:"type"`
		NumConnections int    `json:"num_connections"`
		ConnectionInfo struct {
			AppID string `json:"app_id"`
		} `json:"connection_info"`
	}
	if err := c.ReadJSON(&hello); err != nil || hello.Type != "hello" || hello.NumConnections != 1 || hello.ConnectionInfo.AppID != "A0EMULATOR" {
		t.Errorf("hello = %+v, %v", hello, err)
	}
	if _, resp, err := websocket.DefaultDialer.Dial(url, nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("second dial with the same ticket: %v", err)
	}
}
