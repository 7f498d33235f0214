package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Modals. A click (or slash command) carries a trigger_id the emulator
// issued; views.open with it within triggerTTL opens a modal for the
// person who clicked, as Slack does, and answers expired_trigger_id after.
// Tests read the open views (Views), submit them (SubmitView) — a
// view_submission interaction whose acknowledgement, the bot's
// response_action, comes back through ViewResponse — or close them
// (CloseView: view_closed when the view asked for notify_on_close).

// triggerTTL is how long a trigger_id opens a view.
const triggerTTL = 3 * time.Second

// trigger is a trigger_id handed out with an interaction.
type trigger struct {
	user string
	at   time.Time
	used bool
}

// View is a modal open in the emulated client.
type View struct {
	ID              string
	User            string // who sees it: the person whose click opened it
	CallbackID      string
	PrivateMetadata string
	NotifyOnClose   bool
	JSON            json.RawMessage // as views.open was given it
	Blocks          []ViewBlock
	// Errors are the last response_action errors shown, by block id.
	Errors map[string]string
}

// ViewBlock is one block of a view, as the tests read it.
type ViewBlock struct {
	Type    string          // input, section, context, …
	BlockID string          //
	Label   string          // an input's label text
	Text    string          // a section's or context's text
	Element json.RawMessage // an input's element
}

// viewsState holds the triggers and open views; nil until used. s.mu held.
type viewsState struct {
	triggers map[string]*trigger
	views    map[string]*View
	order    []string
	// submissions map a view_submission envelope to its view.
	submissions map[string]string
}

func (s *Server) viewState() *viewsState {
	if s.modal == nil {
		s.modal = &viewsState{triggers: map[string]*trigger{}, views: map[string]*View{}, submissions: map[string]string{}}
	}
	return s.modal
}

// newTrigger issues a trigger_id for an interaction of user; s.mu held.
func (s *Server) newTrigger(user string) string {
	id := s.nextID("trigger.")
	s.viewState().triggers[id] = &trigger{user: user, at: time.Now()}
	return id
}

// ExpireTriggers makes every trigger_id issued so far too old to open a
// view, as if the bot had waited more than three seconds.
func (s *Server) ExpireTriggers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.viewState().triggers {
		t.at = time.Time{}
	}
}

// maxModalBlocks and the others are Slack's limits on a modal.
const (
	maxModalBlocks   = 100
	maxModalTitle    = 24
	maxModalButton   = 24
	maxPrivateMeta   = 3000
	maxModalCallback = 255
)

func (s *Server) viewsOpen(p url.Values) (result, *apiError) {
	st := s.viewState()
	t, ok := st.triggers[p.Get("trigger_id")]
	switch {
	case p.Get("trigger_id") == "" || !ok:
		return nil, fail("invalid_trigger_id")
	case t.used || time.Since(t.at) > triggerTTL:
		return nil, fail("expired_trigger_id")
	}
	raw := json.RawMessage(p.Get("view"))
	v, aerr := parseView(raw)
	if aerr != nil {
		return nil, aerr
	}
	t.used = true
	v.ID = s.nextID("V")
	v.User = t.user
	st.views[v.ID] = v
	st.order = append(st.order, v.ID)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	out["id"] = v.ID
	return result{"view": out}, nil
}

// parseView checks a modal as Slack does the parts the bot sets.
func parseView(raw json.RawMessage) (*View, *apiError) {
	var m struct {
		Type            string            `json:"type"`
		Title           *textObj          `json:"title"`
		Submit          *textObj          `json:"submit"`
		Close           *textObj          `json:"close"`
		CallbackID      string            `json:"callback_id"`
		PrivateMetadata string            `json:"private_metadata"`
		NotifyOnClose   bool              `json:"notify_on_close"`
		Blocks          []json.RawMessage `json:"blocks"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil, fail("invalid_arguments")
	}
	switch {
	case m.Type != "modal":
		return nil, fail("invalid_arguments")
	case m.Title == nil || m.Title.Type != "plain_text" || m.Title.Text == "" || blockkitLen(m.Title.Text) > maxModalTitle:
		return nil, fail("invalid_arguments")
	case m.Submit != nil && (m.Submit.Type != "plain_text" || blockkitLen(m.Submit.Text) > maxModalButton):
		return nil, fail("invalid_arguments")
	case m.Close != nil && (m.Close.Type != "plain_text" || blockkitLen(m.Close.Text) > maxModalButton):
		return nil, fail("invalid_arguments")
	case len(m.Blocks) == 0 || len(m.Blocks) > maxModalBlocks:
		return nil, fail("invalid_blocks")
	case len(m.PrivateMetadata) > maxPrivateMeta || len(m.CallbackID) > maxModalCallback:
		return nil, fail("invalid_arguments")
	}
	v := &View{CallbackID: m.CallbackID, PrivateMetadata: m.PrivateMetadata, NotifyOnClose: m.NotifyOnClose, JSON: raw}
	seen := map[string]bool{}
	inputs := 0
	for _, b := range m.Blocks {
		var blk struct {
			Type    string          `json:"type"`
			BlockID string          `json:"block_id"`
			Label   *textObj        `json:"label"`
			Text    *textObj        `json:"text"`
			Element json.RawMessage `json:"element"`
			Elems   []textObj       `json:"elements"`
		}
		if json.Unmarshal(b, &blk) != nil {
			return nil, fail("invalid_blocks")
		}
		if blk.BlockID != "" {
			if seen[blk.BlockID] {
				return nil, fail("invalid_blocks")
			}
			seen[blk.BlockID] = true
		}
		vb := ViewBlock{Type: blk.Type, BlockID: blk.BlockID, Element: blk.Element}
		switch blk.Type {
		case "input":
			inputs++
			if blk.Label == nil || blk.Label.Type != "plain_text" || blk.Label.Text == "" || blockkitLen(blk.Label.Text) > 2000 {
				return nil, fail("invalid_blocks")
			}
			if aerr := checkInputElement(blk.Element); aerr != nil {
				return nil, aerr
			}
			vb.Label = blk.Label.Text
		case "section", "header":
			if blk.Text == nil || blk.Text.Text == "" || blockkitLen(blk.Text.Text) > 3000 {
				return nil, fail("invalid_blocks")
			}
			vb.Text = blk.Text.Text
		case "context":
			for _, e := range blk.Elems {
				vb.Text += e.Text
			}
		case "divider":
		default:
			return nil, fail("invalid_blocks")
		}
		v.Blocks = append(v.Blocks, vb)
	}
	if inputs > 0 && m.Submit == nil {
		return nil, fail("invalid_arguments") // input blocks need a submit button
	}
	return v, nil
}

type textObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type optionObj struct {
	Text  textObj `json:"text"`
	Value string  `json:"value"`
}

type inputElement struct {
	Type             string      `json:"type"`
	ActionID         string      `json:"action_id"`
	InitialValue     string      `json:"initial_value"`
	IsDecimalAllowed *bool       `json:"is_decimal_allowed"`
	Options          []optionObj `json:"options"`
	InitialOption    *optionObj  `json:"initial_option"`
	InitialOptions   []optionObj `json:"initial_options"`
	MinValue         string      `json:"min_value"`
	MaxValue         string      `json:"max_value"`
}

// checkInputElement checks the input elements a form uses.
func checkInputElement(raw json.RawMessage) *apiError {
	var e inputElement
	if json.Unmarshal(raw, &e) != nil || e.ActionID == "" {
		return fail("invalid_blocks")
	}
	switch e.Type {
	case "plain_text_input":
	case "number_input":
		if e.IsDecimalAllowed == nil {
			return fail("invalid_blocks") // required by Slack
		}
	case "static_select", "multi_static_select", "radio_buttons", "checkboxes":
		if len(e.Options) == 0 || len(e.Options) > 100 {
			return fail("invalid_blocks")
		}
		values := map[string]bool{}
		for _, o := range e.Options {
			if o.Value == "" || o.Text.Text == "" || blockkitLen(o.Text.Text) > 75 || len(o.Value) > 150 {
				return fail("invalid_blocks")
			}
			values[o.Value] = true
		}
		initial := e.InitialOptions
		if e.InitialOption != nil {
			initial = append(initial, *e.InitialOption)
		}
		for _, o := range initial {
			if !values[o.Value] || !slices.ContainsFunc(e.Options, func(x optionObj) bool { return x == o }) {
				return fail("invalid_blocks") // an initial option must be one of the options, exactly
			}
		}
	default:
		return fail("invalid_blocks")
	}
	return nil
}

// Views returns the views open now, oldest first.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.viewState()
	var out []View
	for _, id := range st.order {
		if v, ok := st.views[id]; ok {
			out = append(out, *v)
		}
	}
	return out
}

// ErrNoSuchView is returned for a view that is not open.
var ErrNoSuchView = errors.New("emulator: no such view open")

// SubmitView presses Submit on view viewID as user: a view_submission
// interaction whose state holds, for each input block, the values given
// by block id in values (a text or number, a chosen option's value, or
// several) and otherwise what the block shows initially. It returns the
// envelope id; ViewResponse reads the bot's answer. A submission by
// someone other than the view's user is delivered as such: Slack would
// never send one, and a bot must not trust it.
func (s *Server) SubmitView(viewID, user string, values map[string][]string) (envelopeID string, err error) {
	return s.SubmitViewOn(0, viewID, user, values)
}

// SubmitViewOn is SubmitView delivered to the Socket Mode connection conn
// (0: any), as Slack may deal it to any of an app's connections.
func (s *Server) SubmitViewOn(conn int, viewID, user string, values map[string][]string) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.viewState()
	v, ok := st.views[viewID]
	if !ok {
		return "", ErrNoSuchView
	}
	state := map[string]any{}
	for _, b := range v.Blocks {
		if b.Type != "input" {
			continue
		}
		var e inputElement
		_ = json.Unmarshal(b.Element, &e)
		vals, given := values[b.BlockID]
		st, err := elementState(e, vals, given)
		if err != nil {
			return "", fmt.Errorf("emulator: submit view: block %s: %w", b.BlockID, err)
		}
		state[b.BlockID] = map[string]any{e.ActionID: st}
	}
	return s.viewEnvelope(conn, "view_submission", v, user, state).id, nil
}

// SubmitForged delivers a view_submission for a view the emulator never
// opened: viewID, privateMetadata and the state's values as given (block
// id → action id → element state), to check that a bot answers nothing it
// did not ask.
func (s *Server) SubmitForged(viewID, user, callbackID, privateMetadata string, state map[string]any) (envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &View{ID: viewID, CallbackID: callbackID, PrivateMetadata: privateMetadata}
	e := s.viewEnvelope(0, "view_submission", v, user, state)
	delete(s.viewState().submissions, e.id) // no open view is its
	return e.id
}

// elementState is an element's entry in view.state.values, in slack-go's
// shape.
func elementState(e inputElement, vals []string, given bool) (map[string]any, error) {
	out := map[string]any{"type": e.Type}
	find := func(value string) (optionObj, bool) {
		for _, o := range e.Options {
			if o.Value == value {
				return o, true
			}
		}
		return optionObj{}, false
	}
	switch e.Type {
	case "plain_text_input", "number_input":
		v := e.InitialValue
		if given {
			v = ""
			if len(vals) > 0 {
				v = vals[0]
			}
		}
		if v != "" {
			out["value"] = v
		}
	case "static_select", "radio_buttons":
		var sel *optionObj
		if !given {
			sel = e.InitialOption
		} else if len(vals) > 0 {
			o, ok := find(vals[0])
			if !ok {
				return nil, fmt.Errorf("no option %q", vals[0])
			}
			sel = &o
		}
		if sel != nil {
			out["selected_option"] = sel
		} else {
			out["selected_option"] = nil
		}
	case "multi_static_select", "checkboxes":
		sel := e.InitialOptions
		if given {
			sel = nil
			for _, v := range vals {
				o, ok := find(v)
				if !ok {
					return nil, fmt.Errorf("no option %q", v)
				}
				sel = append(sel, o)
			}
		}
		if sel == nil {
			sel = []optionObj{}
		}
		out["selected_options"] = sel
	}
	return out, nil
}

// viewEnvelope sends a view interaction; s.mu held.
func (s *Server) viewEnvelope(conn int, typ string, v *View, user string, state map[string]any) *envelope {
	s.ensureUser(user)
	team, _ := s.teamOf(user)
	view := map[string]any{
		"id": v.ID, "team_id": team, "type": "modal", "callback_id": v.CallbackID,
		"private_metadata": v.PrivateMetadata, "app_id": s.opts.AppID, "bot_id": s.opts.BotID,
		"hash": v.ID + ".hash", "state": map[string]any{"values": state},
	}
	payload := map[string]any{
		"type":       typ,
		"team":       map[string]any{"id": team, "domain": "emulator"},
		"user":       map[string]any{"id": user, "username": s.users[user].Name, "name": s.users[user].Name, "team_id": team},
		"api_app_id": s.opts.AppID,
		"token":      "emulator-verification-token",
		"view":       view,
	}
	if typ == "view_submission" {
		payload["trigger_id"] = s.newTrigger(user)
		payload["response_urls"] = []any{}
	}
	e := s.newEnvelopeOn(conn, "interactive", payload)
	s.viewState().submissions[e.id] = v.ID
	return e
}

// viewResponse is the payload a bot acknowledges a view_submission with.
type viewResponse struct {
	Action string            `json:"response_action"`
	Errors map[string]string `json:"errors"`
}

// viewAnswered applies the bot's acknowledgement of a view_submission to
// its view, as Slack does: no response_action closes it, "errors" shows
// the errors and keeps it open. s.mu held.
func (s *Server) viewAnswered(envelopeID string, payload json.RawMessage) {
	if s.modal == nil {
		return
	}
	v, open := s.modal.views[s.modal.submissions[envelopeID]]
	if !open {
		return
	}
	var resp viewResponse
	if len(payload) > 0 {
		_ = json.Unmarshal(payload, &resp)
	}
	switch resp.Action {
	case "errors":
		v.Errors = resp.Errors
	case "", "clear":
		delete(s.modal.views, v.ID)
	}
}

// ViewResponse is the bot's acknowledgement of a view_submission: the
// response_action (empty: the view closes) and, for "errors", the errors
// by block id. ok is false until the envelope is acknowledged.
func (s *Server) ViewResponse(envelopeID string) (action string, errs map[string]string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.acks, func(a Ack) bool { return a.EnvelopeID == envelopeID })
	if i < 0 {
		return "", nil, false
	}
	var resp viewResponse
	if len(s.acks[i].Payload) > 0 {
		_ = json.Unmarshal(s.acks[i].Payload, &resp)
	}
	return resp.Action, resp.Errors, true
}

// CloseView closes view viewID as its user would (the Cancel button or
// the ×); a view that asked for notify_on_close sends view_closed.
func (s *Server) CloseView(viewID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.viewState()
	v, ok := st.views[viewID]
	if !ok {
		return ErrNoSuchView
	}
	delete(st.views, viewID)
	if v.NotifyOnClose {
		s.viewEnvelope(0, "view_closed", v, v.User, map[string]any{})
	}
	s.notify()
	return nil
}
