package playground_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	slackapi "github.com/slack-go/slack"

	"github.com/slackbot/slackbot/playground"
	"github.com/slackbot/slackbot/slack/bottest"
	"github.com/slackbot/slackbot/slack/emulator"
)

// everyField is a modal with a section and one input of each kind the
// page draws, each showing an initial value.
func everyField() slackapi.ModalViewRequest {
	opt := func(v, text string) *slackapi.OptionBlockObject {
		return slackapi.NewOptionBlockObject(v, plain(text), nil)
	}
	name := slackapi.NewPlainTextInputBlockElement(plain("Your name"), "name")
	name.InitialValue = "Ada"
	notes := slackapi.NewPlainTextInputBlockElement(nil, "notes")
	notes.Multiline = true
	guests := slackapi.NewNumberInputBlockElement(nil, "guests", false)
	guests.InitialValue, guests.MinValue, guests.MaxValue = "2", "1", "8"
	window, garden := opt("window", "By the window"), opt("garden", "In the garden")
	table := slackapi.NewOptionsSelectBlockElement(slackapi.OptTypeStatic, plain("Choose"), "table", window, garden)
	table.InitialOption = garden
	cake, flowers := opt("cake", "Cake"), opt("flowers", "Flowers")
	extras := slackapi.NewOptionsMultiSelectBlockElement(slackapi.MultiOptTypeStatic, plain("Choose"), "extras", cake, flowers)
	extras.InitialOptions = []*slackapi.OptionBlockObject{cake}
	yes, no := opt("yes", "Yes"), opt("no", "No")
	vegan := slackapi.NewRadioButtonsBlockElement("vegan", yes, no)
	vegan.InitialOption = no
	agree := slackapi.NewCheckboxGroupsBlockElement("agree", opt("agreed", "I agree"))
	notesBlock := slackapi.NewInputBlock("notes", plain("Notes"), nil, notes)
	notesBlock.Optional = true
	return slackapi.ModalViewRequest{
		Type: slackapi.VTModal, Title: plain("Book a table"), Submit: plain("Book"), Close: plain("Not now"), CallbackID: "pg_test",
		Blocks: slackapi.Blocks{BlockSet: []slackapi.Block{
			slackapi.NewSectionBlock(slackapi.NewTextBlockObject("mrkdwn", "Pick *carefully*", false, false), nil, nil),
			slackapi.NewInputBlock("name", plain("Name"), plain("As on the booking"), name),
			notesBlock,
			slackapi.NewInputBlock("guests", plain("Guests"), nil, guests),
			slackapi.NewInputBlock("table", plain("Table"), nil, table),
			slackapi.NewInputBlock("extras", plain("Extras"), nil, extras),
			slackapi.NewInputBlock("vegan", plain("Vegan"), nil, vegan),
			slackapi.NewInputBlock("agree", plain("Terms"), nil, agree),
		}},
	}
}

func TestAModalTheBotOpensIsDrawnWithItsFieldsAndSubmittedInSlacksShape(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := openModal(t, w, playground.User, everyField())
	drawn := modalEvents(t, w, "the modal", func(h string) bool { return strings.Contains(h, id) })
	for _, want := range []string{
		`data-view-id="` + id + `"`, `>Book a table</h2>`, `>Book</button>`, `>Not now</button>`, `<b>carefully</b>`,
		`name="name" value="Ada" placeholder="Your name"`, `As on the booking`,
		`<textarea id="pg-field-notes" name="notes"`, `Notes <span class="pg-optional">(optional)</span>`,
		`type="number" id="pg-field-guests" name="guests" value="2" step="1" min="1" max="8"`,
		`<option value="garden" selected>In the garden</option>`, `<option value="window">By the window</option>`,
		`name="extras" multiple><option value="cake" selected>Cake</option><option value="flowers">Flowers</option>`,
		`name="vegan" value="no" checked> No`, `name="vegan" value="yes"> Yes`, `type="checkbox" name="agree" value="agreed"> I agree`,
	} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the modal lacks %s:\n%s", want, drawn)
		}
	}

	values := `{"name":["Grace"],"notes":["by the door"],"guests":["3"],"table":["window"],"extras":["cake","flowers"],"vegan":["yes"],"agree":[]}`
	answer := post(t, w.page.URL+"/modal/submit", `{"view_id":"`+id+`","values":`+values+`}`, http.StatusOK)
	if strings.TrimSpace(answer) != `{"response_action":""}` {
		t.Errorf("a clean submission was answered %s", answer)
	}
	var got slackapi.InteractionCallback
	for _, e := range w.Slack.Envelopes() {
		if e.Type == "interactive" && strings.Contains(string(e.Payload), `"view_submission"`) {
			if err := json.Unmarshal(e.Payload, &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := got.View.State
	if got.Type != slackapi.InteractionTypeViewSubmission || got.User.ID != playground.User || got.View.ID != id || st == nil {
		t.Fatalf("the bot got %+v", got)
	}
	v := st.Values
	if v["name"]["name"].Value != "Grace" || v["notes"]["notes"].Value != "by the door" || v["guests"]["guests"].Value != "3" ||
		v["table"]["table"].SelectedOption.Value != "window" || len(v["extras"]["extras"].SelectedOptions) != 2 ||
		v["vegan"]["vegan"].SelectedOption.Value != "yes" || len(v["agree"]["agree"].SelectedOptions) != 0 {
		t.Errorf("the submission's state is %+v", v)
	}
	modalEvents(t, w, "the modal closed", func(h string) bool { return h == "" })
}

func TestThePageNeitherShowsNorAnswersAModalOpenForSomeoneElse(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := openModal(t, w, "U0SOMEONEELSE", everyField())
	// The modal open now is drawn first, even when it is none.
	if h := modalEvents(t, w, "the first drawing", func(string) bool { return true }); h != "" {
		t.Fatalf("the page shows another person's modal:\n%s", h)
	}
	post(t, w.page.URL+"/modal/submit", `{"view_id":"`+id+`","values":{"name":["Mallory"]}}`, http.StatusNotFound)
	post(t, w.page.URL+"/modal/close", `{"view_id":"`+id+`"}`, http.StatusNotFound)
	post(t, w.page.URL+"/modal/submit", `{"view_id":`, http.StatusBadRequest)
	if views := w.Slack.Views(); len(views) != 1 || views[0].ID != id {
		t.Fatalf("open views %+v; want the other person's untouched", views)
	}
	for _, e := range w.Slack.Envelopes() {
		if strings.Contains(string(e.Payload), `"view_submission"`) || strings.Contains(string(e.Payload), `"view_closed"`) {
			t.Fatalf("the page delivered %s", e.Payload)
		}
	}
}

// answerQuestion mentions the bot, whose tool asks a question, and presses
// Answer on it through the page; it returns the thread and the drawn modal.
func answerQuestion(t *testing.T, w *world) (thread string, modal string) {
	t.Helper()
	sent := post(t, w.page.URL+"/send", `{"channel":"C0GENERAL","text":"@slackbot book me a table"}`, http.StatusOK)
	var resp struct{ Thread string }
	if err := json.Unmarshal([]byte(sent), &resp); err != nil {
		t.Fatal(err)
	}
	var q emulator.Message
	w.Eventually("the tool's question", func() bool {
		for _, m := range bottest.BotMessages(w.Slack.Thread(playground.General, resp.Thread)) {
			if strings.Contains(string(m.Blocks), "slackbot_elicit_open") {
				q = m
				return true
			}
		}
		return false
	})
	post(t, w.page.URL+"/click", `{"channel":"C0GENERAL","ts":"`+q.TS+`","action_id":"slackbot_elicit_open"}`, http.StatusNoContent)
	return resp.Thread, modalEvents(t, w, "the question's form", func(h string) bool { return strings.Contains(h, "Name on the booking") })
}

func TestAFormsProblemShowsUnderItsFieldAndTheFixedFormAnswersTheTool(t *testing.T) {
	t.Parallel()
	booking := newBookingTool(t)
	w := newWorld(t, booking.options...)
	w.Model.Respond(callThenSay("booking__book"))
	thread, drawn := answerQuestion(t, w)
	if !has(drawn, `name="field:guests" value="2"`, `<option value="0" selected>By the window</option>`, `Who is the table for?`) {
		t.Fatalf("the form does not show its defaults and the question:\n%s", drawn)
	}
	id := attrAfter(t, drawn, `data-testid="modal"`, `data-view-id="`)

	answer := post(t, w.page.URL+"/modal/submit", `{"view_id":"`+id+`","values":{"field:name":["A"],"field:guests":["2"],"field:table":["0"]}}`, http.StatusOK)
	var a struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(answer), &a); err != nil || a.Action != "errors" || a.Errors["field:name"] == "" {
		t.Fatalf("a name too short was answered %s", answer)
	}
	shown := modalEvents(t, w, "the problem under the name", func(h string) bool { return strings.Contains(h, `data-testid="modal-error"`) })
	_, name, _ := strings.Cut(shown, `data-block-id="field:name"`)
	name, _, _ = strings.Cut(name, `data-block-id=`)
	if !strings.Contains(name, `data-testid="modal-error"`) {
		t.Fatalf("the problem is not shown under the name:\n%s", shown)
	}
	if len(booking.got()) != 0 {
		t.Fatalf("a refused form answered the tool: %+v", booking.got())
	}

	answer = post(t, w.page.URL+"/modal/submit", `{"view_id":"`+id+`","values":{"field:name":["Ada"],"field:guests":["3"],"field:table":["1"]}}`, http.StatusOK)
	if strings.TrimSpace(answer) != `{"response_action":""}` {
		t.Fatalf("the fixed form was answered %s", answer)
	}
	modalEvents(t, w, "the modal closed", func(h string) bool { return h == "" })
	w.Answered(playground.General, thread, "booking accept")
	got := booking.got()
	if len(got) != 1 {
		t.Fatalf("the tool got %d answers", len(got))
	}
	content, _ := json.Marshal(got[0].Content)
	if string(content) != `{"guests":3,"name":"Ada","table":"garden"}` {
		t.Errorf("the tool got %s", content)
	}
}

func TestCancelClosesTheFormAndTellsTheBot(t *testing.T) {
	t.Parallel()
	booking := newBookingTool(t)
	w := newWorld(t, booking.options...)
	w.Model.Respond(callThenSay("booking__book"))
	_, drawn := answerQuestion(t, w)
	id := attrAfter(t, drawn, `data-testid="modal"`, `data-view-id="`)
	post(t, w.page.URL+"/modal/close", `{"view_id":"`+id+`"}`, http.StatusNoContent)
	modalEvents(t, w, "the modal closed", func(h string) bool { return h == "" })
	w.Eventually("view_closed delivered to the bot", func() bool {
		for _, e := range w.Slack.Envelopes() {
			if strings.Contains(string(e.Payload), `"view_closed"`) && strings.Contains(string(e.Payload), id) {
				return true
			}
		}
		return false
	})
	post(t, w.page.URL+"/modal/close", `{"view_id":"`+id+`"}`, http.StatusNotFound)
}

func TestTheModalsEndpointsAnswerOnlyThePage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := openModal(t, w, playground.User, everyField())
	before := len(w.Slack.Envelopes())
	for _, path := range []string{"/modal/submit", "/modal/close"} {
		for _, a := range postAttacks {
			h := fromThePage(t, w)
			a.change(h)
			body := `{"view_id":"` + id + `","values":{"name":["Mallory"]}}`
			if status, answer := do(t, "POST", w.page.URL+path, body, h); status != a.status {
				t.Errorf("%s, %s: %d %q, want %d", path, a.name, status, answer, a.status)
			}
		}
	}
	if n := len(w.Slack.Envelopes()); n != before {
		t.Fatalf("a refused request reached the bot (%d envelopes, %d before)", n, before)
	}
	if views := w.Slack.Views(); len(views) != 1 || views[0].ID != id {
		t.Fatalf("open views %+v; want the modal untouched", views)
	}
}
