package slack_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// cuttableAPI is a Web API behind a proxy that can be cut, as a replica
// that died can no longer reach Slack.
type cuttableAPI struct {
	*httptest.Server
	cut atomic.Bool
}

// newCuttableAPI proxies to the Web API at apiURL (".../api/").
func newCuttableAPI(t *testing.T, apiURL string) *cuttableAPI {
	t.Helper()
	target, err := url.Parse(strings.TrimSuffix(apiURL, "api/"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	c := &cuttableAPI{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.cut.Load() {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// TestTheProgressMessageOfASessionThatDiedIsSettledWhenTheNextSessionInItsThreadStarts
// runs a session on a replica that loses Slack mid-session and then stops,
// so its progress message is left saying it is working, Stop button and
// all. The next session in that thread, on another replica, settles it.
func TestTheProgressMessageOfASessionThatDiedIsSettledWhenTheNextSessionInItsThreadStarts(t *testing.T) {
	t.Parallel()
	var api *cuttableAPI
	w := bottest.Start(t, bottest.WithBot(func(o *slack.Options) {
		// The first replica reaches the Web API through the proxy; the
		// one started later goes straight to the emulator.
		api = newCuttableAPI(t, o.Config.Slack.APIURL)
		cfg := *o.Config
		cfg.Slack.APIURL = api.URL + "/api/"
		o.Config = &cfg
	}), bottest.WithConfig(func(c *config.Config) {
		// Bounds the wait should the dead replica keep its thread's lease.
		c.State.LeaseTTL = config.Duration(3 * time.Second)
	}))
	w.Model.Respond(func(r *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(lastUserText(r), "take your time") {
			return llmtest.Reply{Text: "slow", Delay: time.Minute}
		}
		return llmtest.TextReport("Still here.")
	})
	ts := w.Slack.Mention(channel, asker, "take your time")
	progress := w.ProgressMessage(channel, ts)
	w.Model.Wait(1)

	// The replica loses Slack and stops: nothing it says reaches the thread.
	api.cut.Store(true)
	w.Shutdown()
	w.Eventually("the dead replica's socket to close", func() bool { return w.Slack.Connections() == 0 })
	working := func() (emulator.Message, bool) {
		for _, m := range w.Slack.Thread(channel, ts) {
			if m.TS == progress.TS {
				return m, strings.Contains(string(m.Blocks), "slackbot_stop")
			}
		}
		t.Fatalf("the progress message %s is gone", progress.TS)
		return emulator.Message{}, false
	}
	if _, ok := working(); !ok {
		t.Fatal("the progress message was settled by a replica that could not reach Slack: the test proves nothing")
	}

	w.Replica()
	w.Slack.Reply(channel, ts, asker, "<@"+w.Slack.BotUserID()+"> are you still there?")
	w.Answered(channel, ts, "Still here")
	m, stillWorking := working()
	if stillWorking || !strings.Contains(bottest.MessageText(m), "No answer: the bot stopped while working on this") {
		t.Fatalf("the dead session's progress message was not settled when the next session started:\n%s", bottest.MessageText(m))
	}
}
