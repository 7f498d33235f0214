package slack_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/internal/testdoc"
	"github.com/slackbot/slackbot/llm"
	"github.com/slackbot/slackbot/llm/anthropic"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/llm/openai"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// onWire answers the world's agent with model over wire ("openai" or
// "anthropic"), the provider saying whether model m1 sees pictures, in the
// runner and in the configuration the headend reads.
func onWire(t *testing.T, model *llmtest.Server, wire string, vision bool) []bottest.Option {
	t.Helper()
	return fakeProvider(t, model, wire, map[string]config.Model{"m1": {Vision: &vision}})
}

// fakeProvider makes provider "fake" speak wire ("openai" or "anthropic")
// to model with models, in the runner and in the configuration the headend
// reads.
func fakeProvider(t *testing.T, model *llmtest.Server, wire string, models map[string]config.Model) []bottest.Option {
	t.Helper()
	pc := config.Provider{Type: wire, BaseURL: model.URL() + "/v1/", APIKey: "sk-test-key", Models: models}
	var p llm.Provider
	var err error
	if wire == "anthropic" {
		pc.BaseURL = model.URL()
		p, err = anthropic.New("fake", pc)
	} else {
		p, err = openai.New("fake", pc)
	}
	if err != nil {
		t.Fatal(err)
	}
	return []bottest.Option{
		bottest.WithConfig(func(c *config.Config) {
			c.LLM.Providers = map[string]config.Provider{"fake": pc}
		}),
		bottest.WithRunner(func(r *agent.Runner) { r.Providers["fake"] = p }),
	}
}

// seeingAndBlind makes provider "fake" answer with model over the OpenAI
// wire: m1 sees pictures, m2 does not.
func seeingAndBlind(t *testing.T, model *llmtest.Server) []bottest.Option {
	t.Helper()
	sees, blind := true, false
	return fakeProvider(t, model, "openai", map[string]config.Model{"m1": {Vision: &sees}, "m2": {Vision: &blind}})
}

// pictureOf encodes a w×h grey PNG with a pattern.
func pictureOf(t testing.TB, w, h int) []byte {
	t.Helper()
	return testdoc.PNG(t, testdoc.Grey(w, h))
}

// lastUser is the last user message the model was sent.
func lastUser(r *llmtest.Recorded) llm.Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i]
		}
	}
	return llm.Message{}
}

// toolResultsOf are the tool messages of a request.
func toolResultsOf(r *llmtest.Recorded) []llm.Message {
	var out []llm.Message
	for _, m := range r.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func argsOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// elsewhere is a server on another host name than the emulator's
// (localhost, where the emulator is 127.0.0.1) that records what reaches it.
type elsewhere struct {
	*httptest.Server
	url string

	mu       sync.Mutex
	requests []http.Header
}

func newElsewhere(t *testing.T) *elsewhere {
	t.Helper()
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.requests = append(e.requests, r.Header.Clone())
		e.mu.Unlock()
		_, _ = w.Write([]byte("stolen"))
	}))
	t.Cleanup(e.Close)
	e.url = strings.Replace(e.Server.URL, "127.0.0.1", "localhost", 1)
	return e
}

func (e *elsewhere) seen() []http.Header {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]http.Header(nil), e.requests...)
}

// noteIn is the notification text of the bot's messages in thread that contain want.
func noteIn(thread []emulator.Message, want string) []string {
	var out []string
	for _, m := range bottest.BotMessages(thread) {
		if strings.Contains(bottest.MessageText(m), want) {
			out = append(out, m.Text)
		}
	}
	return out
}
