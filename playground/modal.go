package playground

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"strconv"

	"github.com/slackbot/slackbot/slack/emulator"
)

// A modal the bot opens for the page's person (views.open after a click)
// is drawn as Slack draws one: a dialog with its title, its blocks — input
// blocks as form fields showing their initial values, the others as a
// message's blocks — and its Submit and Close buttons. Submit delivers a
// view_submission with what the fields hold; the bot's "errors" answer is
// shown under each field and the dialog stays open; a clean answer closes
// it. Close closes it (view_closed, when the view asked to hear of it).
// The dialog does not check fields itself: what the bot answers to a bad
// value is what the page is for. Every title, label, option and initial
// value is the bot's, often a tool server's words: the template escapes
// all of it.

var modalPage = template.Must(template.ParseFS(web, "web/modal.html"))

// modalView is what modal.html draws.
type modalView struct {
	ID, Title, Submit, Close string
	Blocks                   []modalBlock
}

// modalBlock is one block of a modal: an input field, or Content drawn as
// in a message.
type modalBlock struct {
	Content  template.HTML
	Input    bool
	BlockID  string
	Label    string
	Hint     string
	Optional bool
	Error    string
	Element  modalElement
}

// modalElement is an input block's element.
type modalElement struct {
	Type, Placeholder, Value string
	Multiline                bool
	Step, Min, Max           string // a number input's
	Options                  []modalOption
}

// modalOption is an option of a select, radio buttons or checkboxes.
type modalOption struct {
	Value, Text string
	Selected    bool
}

type textObject struct {
	Text string `json:"text"`
}

func (t *textObject) text() string {
	if t == nil {
		return ""
	}
	return t.Text
}

type optionObject struct {
	Text  textObject `json:"text"`
	Value string     `json:"value"`
}

// modal draws the newest view open for the page's person, or "" when none
// is.
func (p *Playground) modal() string {
	var open *emulator.View
	for _, v := range p.srv.Views() {
		if v.User == User {
			open = &v
		}
	}
	if open == nil {
		return ""
	}
	var b bytes.Buffer
	mv, err := p.modalView(*open)
	if err == nil {
		err = modalPage.ExecuteTemplate(&b, "modal", mv)
	}
	if err != nil {
		return `<div class="pg-modal-error">` + esc(err.Error()) + `</div>`
	}
	return b.String()
}

// modalView reads a view as the template draws it.
func (p *Playground) modalView(v emulator.View) (modalView, error) {
	var m struct {
		Title  *textObject       `json:"title"`
		Submit *textObject       `json:"submit"`
		Close  *textObject       `json:"close"`
		Blocks []json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(v.JSON, &m); err != nil {
		return modalView{}, errors.New("the modal cannot be read: " + err.Error())
	}
	out := modalView{ID: v.ID, Title: m.Title.text(), Submit: m.Submit.text(), Close: cmpOr(m.Close.text(), "Cancel")}
	for _, raw := range m.Blocks {
		var b struct {
			Type     string          `json:"type"`
			BlockID  string          `json:"block_id"`
			Label    *textObject     `json:"label"`
			Hint     *textObject     `json:"hint"`
			Optional bool            `json:"optional"`
			Element  json.RawMessage `json:"element"`
		}
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		if b.Type != "input" {
			one := append(append([]byte("["), raw...), ']')
			out.Blocks = append(out.Blocks, modalBlock{Content: p.drawer.Message(one, "")})
			continue
		}
		out.Blocks = append(out.Blocks, modalBlock{Input: true, BlockID: b.BlockID, Label: b.Label.text(), Hint: b.Hint.text(),
			Optional: b.Optional, Error: v.Errors[b.BlockID], Element: inputElement(b.Element)})
	}
	return out, nil
}

// inputElement reads an input block's element, its initial values marked.
func inputElement(raw json.RawMessage) modalElement {
	var e struct {
		Type             string         `json:"type"`
		Placeholder      *textObject    `json:"placeholder"`
		InitialValue     string         `json:"initial_value"`
		Multiline        bool           `json:"multiline"`
		IsDecimalAllowed bool           `json:"is_decimal_allowed"`
		MinValue         string         `json:"min_value"`
		MaxValue         string         `json:"max_value"`
		Options          []optionObject `json:"options"`
		InitialOption    *optionObject  `json:"initial_option"`
		InitialOptions   []optionObject `json:"initial_options"`
	}
	_ = json.Unmarshal(raw, &e)
	out := modalElement{Type: e.Type, Placeholder: e.Placeholder.text(), Value: e.InitialValue, Multiline: e.Multiline}
	if e.Type == "number_input" {
		out.Step = "1"
		if e.IsDecimalAllowed {
			out.Step = "any"
		}
		out.Min, out.Max = number(e.MinValue), number(e.MaxValue)
	}
	initial := e.InitialOptions
	if e.InitialOption != nil {
		initial = append(initial, *e.InitialOption)
	}
	for _, o := range e.Options {
		mo := modalOption{Value: o.Value, Text: o.Text.Text}
		for _, i := range initial {
			mo.Selected = mo.Selected || i.Value == o.Value
		}
		out.Options = append(out.Options, mo)
	}
	return out
}

// number is s when it is a number, else "": a bound the browser can read.
func number(s string) string {
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return ""
	}
	return s
}

// viewRequest names a view the page's person submits or closes, and what
// its fields hold by block id.
type viewRequest struct {
	ViewID string              `json:"view_id"`
	Values map[string][]string `json:"values"`
}

// viewAnswer is the bot's answer to a submission: "" closes the view,
// "errors" names the problems by block id.
type viewAnswer struct {
	Action string            `json:"response_action"`
	Errors map[string]string `json:"errors,omitempty"`
}

// openView reads a request about a view open for the page's person.
func (p *Playground) openView(w http.ResponseWriter, r *http.Request) (viewRequest, bool) {
	var req viewRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return req, false
	}
	for _, v := range p.srv.Views() {
		if v.ID == req.ViewID && v.User == User {
			return req, true
		}
	}
	http.Error(w, "no such modal is open", http.StatusNotFound)
	return req, false
}

// submitView presses the view's Submit: a view_submission with the
// fields' values, answered with the bot's response_action once the bot
// acknowledged it.
func (p *Playground) submitView(w http.ResponseWriter, r *http.Request) {
	req, ok := p.openView(w, r)
	if !ok {
		return
	}
	env, err := p.srv.SubmitView(req.ViewID, User, req.Values)
	switch {
	case errors.Is(err, emulator.ErrNoSuchView):
		http.Error(w, "no such modal is open", http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := contextWithTimeout(r.Context())
	defer cancel()
	var answer viewAnswer
	if p.srv.WaitFor(ctx, func() bool {
		var acked bool
		answer.Action, answer.Errors, acked = p.srv.ViewResponse(env)
		return acked
	}) != nil {
		http.Error(w, "the bot did not answer the submission", http.StatusGatewayTimeout)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

// closeView presses the view's Close.
func (p *Playground) closeView(w http.ResponseWriter, r *http.Request) {
	req, ok := p.openView(w, r)
	if !ok {
		return
	}
	if err := p.srv.CloseView(req.ViewID); err != nil {
		http.Error(w, "no such modal is open", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
