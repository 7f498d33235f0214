package slack_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/slackbot/slackbot/agent"
	"github.com/slackbot/slackbot/config"
	"github.com/slackbot/slackbot/llm/llmtest"
	"github.com/slackbot/slackbot/slack"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
	"github.com/slackbot/slackbot/tools"
	"github.com/slackbot/slackbot/tools/mcp"
)

// bookingSchema asks for a party size (an integer from 1 to 8, default 2),
// a name (required, no default), a table (one of three, with titles,
// default "window"), a yes/no with a default and a multiple choice.
const bookingSchema = `{
  "type": "object",
  "properties": {
    "name":   {"type": "string", "title": "Name on the booking", "minLength": 2},
    "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 8, "default": 2},
    "table":  {"type": "string", "title": "Table", "oneOf": [
                {"const": "window", "title": "By the window"},
                {"const": "bar", "title": "At the bar"},
                {"const": "garden", "title": "In the garden"}], "default": "window"},
    "deposit": {"type": "number", "title": "Deposit", "default": 12.5},
    "vegan":  {"type": "boolean", "title": "Vegan menu", "default": false},
    "extras": {"type": "array", "title": "Extras", "items": {"type": "string", "enum": ["cake", "flowers"]}, "default": ["cake"]}
  },
  "required": ["name"]
}`

// asking is an MCP server whose tool book asks the person behind the call
// for the booking's details, and records each answer it gets.
type asking struct {
	mu      sync.Mutex
	answers []*mcpgo.ElicitationResult
	message string
	schema  string
}

func (a *asking) got() []*mcpgo.ElicitationResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.answers)
}

// startAsking serves the asking server over streamable HTTP on loopback and
// returns a warmed-up orchestrator whose registry declares elicitation.
func startAsking(t *testing.T, message, schema string) (*asking, *tools.Orchestrator) {
	t.Helper()
	a := &asking{message: message, schema: schema}
	s := mcpserver.NewMCPServer("asking", "1.0.0", mcpserver.WithToolCapabilities(true), mcpserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("book", mcpgo.WithDescription("Book a table.")),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			var req mcpgo.ElicitationRequest
			req.Params.Message = a.message
			req.Params.RequestedSchema = json.RawMessage(a.schema)
			res, err := s.RequestElicitation(ctx, req)
			if err != nil {
				return mcpgo.NewToolResultError("the elicitation failed: " + err.Error()), nil
			}
			a.mu.Lock()
			a.answers = append(a.answers, res)
			a.mu.Unlock()
			b, _ := json.Marshal(res.Content)
			return mcpgo.NewToolResultText("booking " + string(res.Action) + " " + string(b)), nil
		})
	orch := servedMCP(t, "asking", s, mcp.Options{Elicitation: true})
	return a, orch
}

// bookingWorld starts a bot whose model calls asking__book and then
// answers with the tool's result.
func bookingWorld(t *testing.T, orch *tools.Orchestrator, opts ...bottest.Option) *bottest.World {
	t.Helper()
	opts = append([]bottest.Option{
		bottest.WithRunner(func(r *agent.Runner) { r.Tools = orch }),
		bottest.WithConfig(func(c *config.Config) { c.Agents["assistant"].Tools = []string{"asking__*"} }),
	}, opts...)
	w := bottest.Start(t, opts...)
	w.Model.Push(llmtest.Call("asking__book", `{}`), llmtest.TextReport("Done with the booking."))
	return w
}

// question waits for the bot's question in the thread of ts.
func question(w *bottest.World, ts string) emulator.Message {
	w.T.Helper()
	var q emulator.Message
	w.Eventually("the tool's question in the thread", func() bool {
		for _, m := range bottest.BotMessages(w.Slack.Thread(channel, ts)) {
			if strings.Contains(string(m.Blocks), "slackbot_elicit_open") {
				q = m
				return true
			}
		}
		return false
	})
	return q
}

// openForm clicks Answer on the question as the asker and returns the
// modal it opened.
func openForm(w *bottest.World, q emulator.Message) emulator.View {
	w.T.Helper()
	if _, err := w.Slack.Click(channel, q.TS, asker, "slackbot_elicit_open", ""); err != nil {
		w.T.Fatal(err)
	}
	var v emulator.View
	w.Eventually("the form to open", func() bool {
		views := w.Slack.Views()
		if len(views) == 1 {
			v = views[0]
		}
		return len(views) == 1
	})
	return v
}

// submit submits the form and waits for the bot's acknowledgement.
func submit(w *bottest.World, v emulator.View, user string, values map[string][]string) (string, map[string]string) {
	w.T.Helper()
	env, err := w.Slack.SubmitView(v.ID, user, values)
	if err != nil {
		w.T.Fatal(err)
	}
	var action string
	var errs map[string]string
	w.Eventually("the submission to be acknowledged", func() bool {
		var ok bool
		action, errs, ok = w.Slack.ViewResponse(env)
		return ok
	})
	return action, errs
}

// questionSettled waits until the question's message shows outcome in place of
// its buttons.
func questionSettled(w *bottest.World, q emulator.Message, outcome string) {
	w.T.Helper()
	w.Eventually("the question to show "+outcome, func() bool {
		for _, m := range w.Slack.Thread(channel, q.ThreadTS) {
			if m.TS == q.TS {
				b := string(m.Blocks)
				return strings.Contains(b, outcome) && !strings.Contains(b, "slackbot_elicit_open")
			}
		}
		return false
	})
}

func TestAFormSubmittedAsShownAnswersWithTheDefaultsTyped(t *testing.T) {
	t.Parallel()
	srv, orch := startAsking(t, "Which table would you like?", bookingSchema)
	w := bookingWorld(t, orch)
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	v := openForm(w, q)
	if !strings.Contains(string(v.JSON), `"initial_value":"2"`) || !strings.Contains(string(v.JSON), "By the window") ||
		!strings.Contains(string(v.JSON), `"initial_option":{"text":{"type":"plain_text","text":"By the window"`) {
		t.Fatalf("the form does not show the defaults and titles: %s", v.JSON)
	}
	// Only the required name is typed in; everything else as shown.
	if action, errs := submit(w, v, asker, map[string][]string{"field:name": {"Ada"}}); action != "" || errs != nil {
		t.Fatalf("a valid form was answered %q %v", action, errs)
	}
	w.Answered(channel, ts, "Done with the booking.")
	got := srv.got()
	if len(got) != 1 || got[0].Action != mcpgo.ElicitationResponseActionAccept {
		t.Fatalf("the server got %+v", got)
	}
	b, _ := json.Marshal(got[0].Content)
	const want = `{"deposit":12.5,"extras":["cake"],"guests":2,"name":"Ada","table":"window","vegan":false}`
	if string(b) != want {
		t.Fatalf("the server got %s, want %s", b, want)
	}
	questionSettled(w, q, "Answered")
	if len(w.Slack.Views()) != 0 {
		t.Fatal("the modal stayed open after a valid submission")
	}
}

func TestAValueOutsideTheSchemaIsShownInTheFormAndCanBeCorrected(t *testing.T) {
	t.Parallel()
	srv, orch := startAsking(t, "How many guests?", bookingSchema)
	w := bookingWorld(t, orch)
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	v := openForm(w, q)
	action, errs := submit(w, v, asker, map[string][]string{"field:name": {"Ada"}, "field:guests": {"12"}})
	if action != "errors" || errs["field:guests"] != "Enter 8 or less." {
		t.Fatalf("an out-of-range guest count was answered %q %v", action, errs)
	}
	if len(srv.got()) != 0 {
		t.Fatal("the server got an answer from an invalid form")
	}
	if open := w.Slack.Views(); len(open) != 1 || open[0].Errors["field:guests"] == "" {
		t.Fatalf("the form does not show its error: %+v", open)
	}
	if action, errs := submit(w, v, asker, map[string][]string{"field:name": {"Ada"}, "field:guests": {"6"}}); action != "" || errs != nil {
		t.Fatalf("the corrected form was answered %q %v", action, errs)
	}
	w.Answered(channel, ts, "Done with the booking.")
	if got := srv.got(); len(got) != 1 || got[0].Content.(map[string]any)["guests"] != float64(6) {
		t.Fatalf("the server got %+v", got)
	}
}

func TestDeclineAndCancelAnswerSo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		button, outcome string
		want            mcpgo.ElicitationResponseAction
	}{
		{"slackbot_elicit_decline", "Declined", mcpgo.ElicitationResponseActionDecline},
		{"slackbot_elicit_cancel", "Cancelled", mcpgo.ElicitationResponseActionCancel},
	} {
		t.Run(tt.outcome, func(t *testing.T) {
			t.Parallel()
			srv, orch := startAsking(t, "Which table?", bookingSchema)
			w := bookingWorld(t, orch)
			ts := w.Slack.Mention(channel, asker, "book me a table")
			q := question(w, ts)
			if _, err := w.Slack.Click(channel, q.TS, asker, tt.button, ""); err != nil {
				t.Fatal(err)
			}
			w.Answered(channel, ts, "Done with the booking.")
			if got := srv.got(); len(got) != 1 || got[0].Action != tt.want || got[0].Content != nil {
				t.Fatalf("the server got %+v, want %s", got, tt.want)
			}
			questionSettled(w, q, tt.outcome)
		})
	}
}

func TestAQuestionNobodyAnswersInTimeIsCancelled(t *testing.T) {
	t.Parallel()
	srv, orch := startAsking(t, "Which table?", bookingSchema)
	var waits []agent.Event
	var mu sync.Mutex
	w := bookingWorld(t, orch, bottest.WithBot(func(o *slack.Options) {
		o.AnswerTimeout = 300 * time.Millisecond
		o.Observer = func(_ slack.Thread, e agent.Event) {
			if e.Kind == agent.EventWaiting || e.Kind == agent.EventResumed {
				mu.Lock()
				waits = append(waits, e)
				mu.Unlock()
			}
		}
	}))
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	w.Answered(channel, ts, "Done with the booking.")
	if got := srv.got(); len(got) != 1 || got[0].Action != mcpgo.ElicitationResponseActionCancel {
		t.Fatalf("the server got %+v, want cancel", got)
	}
	questionSettled(w, q, "No answer in time")
	mu.Lock()
	defer mu.Unlock()
	if len(waits) != 2 || waits[0].Wait.What != "answer to asking's question" || !slices.Equal(waits[0].Wait.Who, []string{asker}) ||
		waits[1].Wait.ID != waits[0].Wait.ID || waits[1].Wait.Outcome != "timed out" {
		t.Fatalf("waiting events: %+v", waits)
	}
}

func TestOnlyTheAskerAnswersAToolsQuestion(t *testing.T) {
	t.Parallel()
	const stranger = "U0STRANGER"
	srv, orch := startAsking(t, "Which table?", bookingSchema)
	w := bookingWorld(t, orch)
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	for _, button := range []string{"slackbot_elicit_open", "slackbot_elicit_decline", "slackbot_elicit_cancel"} {
		if _, err := w.Slack.Click(channel, q.TS, stranger, button, ""); err != nil {
			t.Fatal(err)
		}
	}
	w.Eventually("three refusals to the stranger", func() bool {
		n := 0
		for _, e := range w.Slack.Ephemerals() {
			if e.User == stranger && strings.Contains(e.Text, "Only the person who asked can answer this.") {
				n++
			}
		}
		return n == 3
	})
	if len(w.Slack.Views()) != 0 || len(srv.got()) != 0 {
		t.Fatalf("a stranger's click opened a form or answered: views %d, answers %+v", len(w.Slack.Views()), srv.got())
	}
	// The asker still answers.
	v := openForm(w, q)
	submit(w, v, asker, map[string][]string{"field:name": {"Ada"}})
	w.Answered(channel, ts, "Done with the booking.")
	if got := srv.got(); len(got) != 1 || got[0].Action != mcpgo.ElicitationResponseActionAccept {
		t.Fatalf("the server got %+v", got)
	}
}

func TestAForgedSubmissionAnswersNothing(t *testing.T) {
	t.Parallel()
	srv, orch := startAsking(t, "Which table?", bookingSchema)
	w := bookingWorld(t, orch)
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	v := openForm(w, q)
	state := map[string]any{"field:name": map[string]any{"value": map[string]any{"type": "plain_text_input", "value": "Mallory"}}}
	forged := []struct{ name, viewID, user, meta string }{
		{"a view the bot never opened, with the question's metadata", "VFORGED", asker, v.PrivateMetadata},
		{"the real view submitted by someone else", v.ID, "U0STRANGER", v.PrivateMetadata},
		{"another question's metadata", v.ID, asker, "0123456789abcdef01234567"},
	}
	for _, f := range forged {
		env := w.Slack.SubmitForged(f.viewID, f.user, "slackbot_elicit", f.meta, state)
		w.Eventually("the forged submission to be acknowledged: "+f.name, func() bool {
			_, _, ok := w.Slack.ViewResponse(env)
			return ok
		})
	}
	if got := srv.got(); len(got) != 0 {
		t.Fatalf("a forged submission answered the server: %+v", got)
	}
	// The real form still answers.
	submit(w, v, asker, map[string][]string{"field:name": {"Ada"}})
	w.Answered(channel, ts, "Done with the booking.")
	if got := srv.got(); len(got) != 1 || got[0].Content.(map[string]any)["name"] != "Ada" {
		t.Fatalf("the server got %+v", got)
	}
}

func TestAServersWordsAreShownInertInTheQuestionAndTheForm(t *testing.T) {
	t.Parallel()
	const onlooker = "U0ONLOOKER"
	evil := "<!channel> <@" + onlooker + "> *urgent* see <https://evil.example|okta.company.com>"
	schema := `{"type":"object","properties":{"code":{"type":"string","title":` + jsonString(evil) +
		`,"description":` + jsonString(evil) + `},"pick":{"type":"string","oneOf":[{"const":"a","title":` + jsonString(evil) + `}]}}}`
	_, orch := startAsking(t, evil, schema)
	// Even an agent allowed to broadcast and ping anyone does not do it
	// with a server's words.
	w := bookingWorld(t, orch, bottest.WithConfig(func(c *config.Config) {
		a := c.Agents["assistant"]
		a.AllowBroadcasts, a.Mentions = true, config.MentionsAll
	}))
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	v := openForm(w, q)
	for what, raw := range map[string]string{"the question": string(q.Blocks), "the form": string(v.JSON)} {
		var blocks any
		if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
			t.Fatal(err)
		}
		found := false
		walkText(blocks, func(typ, text string) {
			if strings.Contains(text, "okta.company.com") {
				found = true
				if typ != "plain_text" {
					t.Errorf("%s shows the server's words as %s: %q", what, typ, text)
				}
			}
		})
		if !found {
			t.Errorf("%s does not show the server's words at all: %s", what, raw)
		}
	}
	if strings.Contains(q.Text, "<!channel>") || strings.Contains(q.Text, "<@") {
		t.Errorf("the question's notification text carries the server's pings: %q", q.Text)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// walkText calls f with the type and text of every text object in v.
func walkText(v any, f func(typ, text string)) {
	switch v := v.(type) {
	case map[string]any:
		if typ, ok := v["type"].(string); ok {
			if text, ok := v["text"].(string); ok {
				f(typ, text)
			}
		}
		for _, x := range v {
			walkText(x, f)
		}
	case []any:
		for _, x := range v {
			walkText(x, f)
		}
	}
}

func TestAFormThatDidNotOpenInTimeIsOfferedAgain(t *testing.T) {
	t.Parallel()
	srv, orch := startAsking(t, "Which table?", bookingSchema)
	w := bookingWorld(t, orch)
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	w.Slack.Fail("views.open", "expired_trigger_id", 1)
	if _, err := w.Slack.Click(channel, q.TS, asker, "slackbot_elicit_open", ""); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the asker to be told to press Answer again", func() bool {
		for _, e := range w.Slack.Ephemerals() {
			if e.User == asker && strings.Contains(e.Text, "Press Answer again") {
				return true
			}
		}
		return false
	})
	v := openForm(w, q)
	submit(w, v, asker, map[string][]string{"field:name": {"Ada"}, "field:table": {"2"}, "field:extras": {"0", "1"}})
	w.Answered(channel, ts, "Done with the booking.")
	got := srv.got()
	if len(got) != 1 {
		t.Fatalf("the server got %+v", got)
	}
	c := got[0].Content.(map[string]any)
	if c["table"] != "garden" || len(c["extras"].([]any)) != 2 {
		t.Fatalf("the choices arrived as %v", c)
	}
}

func TestADeclineClickedOnTheOtherReplicaReachesTheQuestionForTheAskerOnly(t *testing.T) {
	t.Parallel()
	const stranger = "U0STRANGER"
	srv, orch := startAsking(t, "Which table?", bookingSchema)
	w := bookingWorld(t, orch)
	w.Replica()
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	other := otherConn(w, mentionConn(w, ts))
	if _, err := w.Slack.ClickOn(other, channel, q.TS, stranger, "slackbot_elicit_decline", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Slack.ClickOn(other, channel, q.TS, asker, "slackbot_elicit_open", ""); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the stranger refused and the asker told to press Answer again", func() bool {
		refused, again := false, false
		for _, e := range w.Slack.Ephemerals() {
			refused = refused || e.User == stranger && strings.Contains(e.Text, "Only the person who asked can answer this.")
			again = again || e.User == asker && strings.Contains(e.Text, "Press Answer again")
		}
		return refused && again
	})
	if len(srv.got()) != 0 {
		t.Fatalf("a stranger's click on the other replica answered: %+v", srv.got())
	}
	if _, err := w.Slack.ClickOn(other, channel, q.TS, asker, "slackbot_elicit_decline", ""); err != nil {
		t.Fatal(err)
	}
	w.Answered(channel, ts, "Done with the booking.")
	if got := srv.got(); len(got) != 1 || got[0].Action != mcpgo.ElicitationResponseActionDecline {
		t.Fatalf("the server got %+v, want decline", got)
	}
	questionSettled(w, q, "Declined")
}

func TestAFormSubmittedToTheOtherReplicaStaysOpenAndIsSubmittedAgain(t *testing.T) {
	t.Parallel()
	srv, orch := startAsking(t, "Which table?", bookingSchema)
	w := bookingWorld(t, orch)
	w.Replica()
	ts := w.Slack.Mention(channel, asker, "book me a table")
	q := question(w, ts)
	owner := mentionConn(w, ts)
	if _, err := w.Slack.ClickOn(owner, channel, q.TS, asker, "slackbot_elicit_open", ""); err != nil {
		t.Fatal(err)
	}
	var v emulator.View
	w.Eventually("the form to open", func() bool {
		views := w.Slack.Views()
		if len(views) == 1 {
			v = views[0]
		}
		return len(views) == 1
	})
	env, err := w.Slack.SubmitViewOn(otherConn(w, owner), v.ID, asker, map[string][]string{"field:name": {"Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	var action string
	var errs map[string]string
	w.Eventually("the other replica to acknowledge", func() bool {
		var ok bool
		action, errs, ok = w.Slack.ViewResponse(env)
		return ok
	})
	if action != "errors" || !strings.Contains(strings.Join(slices.Collect(maps.Values(errs)), " "), "press Submit again") || len(srv.got()) != 0 {
		t.Fatalf("the other replica answered %q %v; the server got %+v", action, errs, srv.got())
	}
	if len(w.Slack.Views()) != 1 {
		t.Fatal("the form closed as if it had been answered")
	}
	if _, err := w.Slack.SubmitViewOn(owner, v.ID, asker, map[string][]string{"field:name": {"Ada"}}); err != nil {
		t.Fatal(err)
	}
	w.Answered(channel, ts, "Done with the booking.")
	if got := srv.got(); len(got) != 1 || got[0].Action != mcpgo.ElicitationResponseActionAccept {
		t.Fatalf("the server got %+v", got)
	}
}
